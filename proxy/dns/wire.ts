/**
 * The DNS wire format, through dns-packet. This module is the only place that
 * knows dns-packet's shapes; everything else deals in `ClientQuery`,
 * `UpstreamAnswer` and Buffers.
 *
 * Fixed header fields (ID, flags, counts) are read and patched in place at
 * their RFC 1035 §4.1.1 offsets; names, questions and records always go through
 * dns-packet.
 */
import type { Answer, OptAnswer, PacketOpt } from 'dns-packet';
import { dnsClasses, dnsPacket, dnsTypes } from './dns-packet.js';
import { MalformedMessageError, QuestionMismatchError } from '../errors.js';

const HEADER_LENGTH = 12;
/** RFC 1035 §4.2.1: without EDNS a UDP answer holds at most 512 octets. */
export const CLASSIC_UDP_SIZE = 512;
/** RFC 8467 §4.1: clients pad queries to a multiple of 128 octets. */
const QUERY_PADDING_BLOCK = 128;
/** DNS flag day 2020: the EDNS buffer size we advertise. */
const ADVERTISED_UDP_SIZE = 1232;

const OPTION_KEEPALIVE = 11;
const OPTION_PADDING = 12;
const TYPE_OPT = 41;
const TYPE_TKEY = 249;
const TYPE_TSIG = 250;
const TYPE_IXFR = 251;
const TYPE_AXFR = 252;
const TYPE_MAILB = 253;
const TYPE_MAILA = 254;
const FLAG_QR = 0x8000;
const FLAG_AA = 0x0400;
const FLAG_TC = 0x0200;
const FLAG_RD = 0x0100;
const FLAG_RA = 0x0080;
const FLAG_AD = 0x0020;
const FLAG_CD = 0x0010;
/** Header bits of a question refused before any recursion (localAnswerFor): no RA. */
const REFUSAL_FLAGS = 0;

const Rcode = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  /** RFC 6891 §6.1.3: extended rcode 1, header rcode 0. */
  BADVERS: 16,
} as const;

export interface QuestionKey {
  /** As the client wrote it; compared case-insensitively (RFC 4343). */
  readonly name: string;
  readonly type: string;
  readonly class: string;
}

/** A client's query, validated: exactly one question, opcode QUERY, QR clear. */
export interface ClientQuery {
  readonly id: number;
  readonly question: QuestionKey;
  /** Header flags to carry upstream (RD, AD and CD: RFC 6840 §5.7, an AD query asks for the AD bit without DO). */
  readonly flags: number;
  /** The client's EDNS, or null if its query had no OPT record. */
  readonly edns: { readonly udpSize: number; readonly dnssecOk: boolean } | null;
  /** The question section octet for octet as the client sent it (a query's question has no compression pointers). */
  readonly questionBytes: Buffer;
  readonly raw: Buffer;
}

/** What the client's question looks like on the wire upstream, to check answers against. */
export interface UpstreamQuestion {
  readonly key: QuestionKey;
  /** The question section as sent (name, type, class). */
  readonly bytes: Buffer;
}

/**
 * What the proxy needs of an answer's OPT pseudo-record (RFC 6891 §6.1.2-3),
 * read in place: its options are walked, not decoded.
 */
interface AnswerOpt {
  readonly extendedRcode: number;
  /** The 16 flag bits of the TTL field; DO is the top one. */
  readonly flags: number;
  /**
   * It carries options besides the TLS hop's own (padding, keepalive), e.g.
   * extended DNS errors (RFC 8914): the client's OPT keeps those.
   */
  readonly endToEndOptions: boolean;
}

/**
 * An answer from upstream, read without decoding its records: header
 * fields, the OPT pseudo-record's fixed fields (with its position), and
 * the raw bytes to relay.
 */
export interface UpstreamAnswer {
  readonly id: number;
  /** Including the EDNS extended bits (RFC 6891 §6.1.3). */
  readonly rcode: number;
  readonly truncated: boolean;
  /** RFC 7828 edns-tcp-keepalive from the server, in milliseconds, if it sent one. */
  readonly keepaliveMs: number | undefined;
  readonly opt: AnswerOpt | undefined;
  /** Byte range of the OPT record in `raw` (-1 when there is none). */
  readonly optStart: number;
  readonly optEnd: number;
  /** Where the additional section starts in `raw` (the end of the authority section). */
  readonly additionalStart: number;
  readonly raw: Buffer;
}

export type ParseResult =
  | { readonly ok: true; readonly query: ClientQuery }
  /** `reply` is the error answer to send, or null when nothing must be sent (drop). */
  | { readonly ok: false; readonly reason: string; readonly reply: Buffer | null };

function isOpt(record: Answer): record is OptAnswer {
  return record.type === 'OPT';
}

/** The transport a client's query came over; AXFR/IXFR are answered differently on each. */
export type ClientTransport = 'udp' | 'tcp';

/** RFC 1035 §4.1: a header, then a question with at least the root name, a type and a class. */
const MIN_QUERY_LENGTH = HEADER_LENGTH + 1 + 4;

function errorReply(raw: Buffer, rcode: number): Buffer {
  // Only the header is trusted here: echo ID and RD, no sections (RFC 1035 §4.1.1).
  // allocUnsafe: a slice of Node's pool, not an ArrayBuffer of its own per datagram of a flood.
  const out = Buffer.allocUnsafe(HEADER_LENGTH);
  out.writeUInt16BE(raw.readUInt16BE(0), 0);
  out.writeUInt16BE(FLAG_QR | (raw.readUInt16BE(2) & (FLAG_RD | 0x7800)) | rcode, 2);
  out.fill(0, 4);
  return out;
}

const DROP_SHORT: ParseResult = { ok: false, reason: 'message is shorter than a DNS header', reply: null };
const DROP_RESPONSE: ParseResult = { ok: false, reason: 'message is a response, not a query', reply: null };

/**
 * The checks a query's fixed header must pass, from its first 12 octets
 * only: nothing is allocated unless a reply is due, so a flood of garbage
 * costs little. Undefined when the header is plausible.
 */
function screenQueryHeader(raw: Buffer): ParseResult | undefined {
  if (raw.length < HEADER_LENGTH) return DROP_SHORT;
  const flags = raw.readUInt16BE(2);
  // A response sent to a resolver is never answered (it could loop).
  if (flags & FLAG_QR) return DROP_RESPONSE;
  const opcode = (flags >> 11) & 0xf;
  if (opcode !== 0) return { ok: false, reason: `opcode ${opcode} is not supported`, reply: errorReply(raw, Rcode.NOTIMP) };
  const qdcount = raw.readUInt16BE(4);
  if (qdcount !== 1) return { ok: false, reason: `query has ${qdcount} questions, expected 1`, reply: errorReply(raw, Rcode.FORMERR) };
  if (raw.length < MIN_QUERY_LENGTH) {
    return { ok: false, reason: `query of ${raw.length} bytes has no room for a question`, reply: errorReply(raw, Rcode.FORMERR) };
  }
  return undefined;
}

/** Whether `raw` passes screenQueryHeader: QR clear, opcode QUERY, one question, room for it. */
export function plausibleQuery(raw: Buffer): boolean {
  return raw.length >= MIN_QUERY_LENGTH && ((raw[2] as number) & 0xf8) === 0 && raw[4] === 0 && raw[5] === 1;
}

/**
 * The end of the uncompressed name at `offset`, or -1 when it runs past the
 * message, has a label over 63 octets, is longer than 255 octets (RFC 1035
 * §3.1), or uses a compression pointer or an extended label type.
 */
function uncompressedNameEnd(raw: Buffer, offset: number): number {
  const start = offset;
  for (;;) {
    if (offset >= raw.length) return -1;
    const len = raw[offset] as number;
    if (len === 0) return offset + 1 - start > 255 ? -1 : offset + 1;
    if (len > 63) return -1;
    offset += 1 + len;
  }
}

/**
 * The end of the (possibly compressed) name at `offset` in the message, or
 * -1 when it is malformed. Pointers must point backwards (RFC 1035 §4.1.4),
 * which also rules out loops.
 */
export function nameEnd(raw: Buffer, offset: number): number {
  let end = -1;
  let limit = offset;
  let total = 0;
  for (;;) {
    if (offset >= raw.length) return -1;
    const len = raw[offset] as number;
    if (len === 0) return end === -1 ? offset + 1 : end;
    if (len >= 0xc0) {
      if (offset + 1 >= raw.length) return -1;
      const target = ((len & 0x3f) << 8) | (raw[offset + 1] as number);
      if (end === -1) end = offset + 2;
      if (target >= limit) return -1;
      limit = target;
      offset = target;
      continue;
    }
    if (len > 63) return -1;
    total += len + 1;
    if (total > 255) return -1;
    offset += 1 + len;
  }
}

/** RFC 1035 §5.1 presentation form of an uncompressed name (for logs and errors): `\.`, `\\` and `\DDD` escapes. */
function presentName(raw: Buffer, offset: number): string {
  if (raw[offset] === 0) return '.';
  let out = '';
  for (;;) {
    const len = raw[offset] as number;
    if (len === 0 || offset + len >= raw.length + 1) return out;
    if (out !== '') out += '.';
    const end = offset + 1 + len;
    let plain = true;
    for (let i = offset + 1; i < end; i++) {
      const c = raw[i] as number;
      if (c <= 0x20 || c >= 0x7f || c === 0x2e || c === 0x5c) {
        plain = false;
        break;
      }
    }
    if (plain) out += raw.toString('latin1', offset + 1, end);
    else {
      for (let i = offset + 1; i < end; i++) {
        const c = raw[i] as number;
        if (c === 0x2e || c === 0x5c) out += '\\' + String.fromCharCode(c);
        else if (c <= 0x20 || c >= 0x7f) out += '\\' + String(c).padStart(3, '0');
        else out += String.fromCharCode(c);
      }
    }
    offset = end;
  }
}

function typeName(type: number): string {
  return dnsTypes.toString(type);
}

function className(klass: number): string {
  return dnsClasses.toString(klass);
}

/** Query types a stub proxy answers itself instead of forwarding (RFC 6895 §3.1 meta-types and QTYPEs). */
/**
 * Questions dotstub refuses itself, never sending them to the resolver.
 * One rule: refuse them as the recursive resolver behind would (unbound's
 * answers are the reference, compared in correctness.test.ts), so a client
 * never gets a different answer because the stub replied instead of the
 * resolver:
 * - zone transfers, AXFR and IXFR, on either transport: REFUSED. A stub
 *   holds no zones and a server unwilling to transfer refuses (RFC 5936
 *   §2.2.1; IXFR, RFC 1995 §2, falls back to AXFR). Over UDP, where AXFR is
 *   not defined (RFC 5936 §4.2), REFUSED too: the question is refused, not
 *   the transport, and NOTIMP would invite a retry over TCP for nothing.
 * - QTYPEs that ask for no records a resolver can look up: FORMERR. OPT,
 *   TSIG and TKEY carry per-message data and belong in the additional
 *   section (RFC 6891 §6.1.1, RFC 8945 §5.2, RFC 2930 §2); MAILA and MAILB
 *   are obsolete (RFC 1035 §3.2.3, "Obsolete - see MX").
 * These refusals (and FORMERR for a malformed query) clear RA: they are
 * decided before any recursion, which RA advertises (RFC 1035 §4.1.1).
 * The transport is passed for rules that need it; none does today.
 */
function localAnswerFor(qtype: number, _transport: ClientTransport): { readonly rcode: number; readonly reason: string } | undefined {
  switch (qtype) {
    case TYPE_OPT:
    case TYPE_TKEY:
    case TYPE_TSIG:
      return { rcode: Rcode.FORMERR, reason: `query type ${typeName(qtype)} is a meta-type and cannot be asked for` };
    case TYPE_MAILA:
    case TYPE_MAILB:
      return { rcode: Rcode.FORMERR, reason: `query type ${typeName(qtype)} is obsolete (RFC 1035: see MX)` };
    case TYPE_AXFR:
    case TYPE_IXFR:
      return { rcode: Rcode.REFUSED, reason: 'zone transfers are refused: dotstub is a stub resolver' };
    default:
      return undefined;
  }
}

/**
 * Parses and validates a query from a client. Never throws, never allocates
 * for a header that screenQueryHeader rejects without a reply.
 *
 * The question is walked octet by octet and forwarded as the client wrote
 * it: names are octet strings (RFC 2181 §11), so no decode/encode round trip
 * may change a label (dns-packet reads labels as UTF-8). Records after the
 * question are walked, not decoded; only the OPT record's fixed fields are read.
 */
export function parseClientQuery(raw: Buffer, transport: ClientTransport = 'udp'): ParseResult {
  const screened = screenQueryHeader(raw);
  if (screened) return screened;
  const flags = raw.readUInt16BE(2);
  // No pointer can be valid in a query's question: nothing precedes it but the header.
  const qnameEnd = uncompressedNameEnd(raw, HEADER_LENGTH);
  if (qnameEnd === -1 || qnameEnd + 4 > raw.length) {
    return { ok: false, reason: 'malformed query: the question name is cut short, too long or compressed', reply: errorReply(raw, Rcode.FORMERR) };
  }
  const questionEnd = qnameEnd + 4;
  const questionBytes = raw.subarray(HEADER_LENGTH, questionEnd);
  const qtype = raw.readUInt16BE(qnameEnd);
  const qclass = raw.readUInt16BE(qnameEnd + 2);
  const answerAndAuthority = raw.readUInt16BE(6) + raw.readUInt16BE(8);
  const records = answerAndAuthority + raw.readUInt16BE(10);
  let optCount = 0;
  let optClass = 0;
  let optTtl = 0;
  let offset = questionEnd;
  for (let i = 0; i < records; i++) {
    const owner = offset;
    offset = nameEnd(raw, offset);
    // TYPE(2) CLASS(2) TTL(4) RDLENGTH(2), RFC 1035 §4.1.3
    if (offset === -1 || offset + 10 > raw.length) {
      return { ok: false, reason: 'malformed query: a record is cut short', reply: localReply(raw, questionBytes, Rcode.FORMERR, null, REFUSAL_FLAGS) };
    }
    const type = raw.readUInt16BE(offset);
    if (type === TYPE_OPT) {
      // RFC 6891 §6.1.1: at most one OPT, in the additional section, owned by the root.
      const why =
        i < answerAndAuthority ? 'an OPT record outside the additional section'
        : raw[owner] !== 0 ? 'an OPT record not owned by the root'
        : optCount > 0 ? 'more than one OPT record'
        : undefined;
      if (why) return { ok: false, reason: `malformed query: ${why} (RFC 6891 §6.1.1)`, reply: localReply(raw, questionBytes, Rcode.FORMERR, null, REFUSAL_FLAGS) };
      optCount++;
      optClass = raw.readUInt16BE(offset + 2);
      optTtl = raw.readUInt32BE(offset + 4);
    }
    offset += 10 + raw.readUInt16BE(offset + 8);
    if (offset > raw.length) {
      return { ok: false, reason: 'malformed query: a record runs past the end of the message', reply: localReply(raw, questionBytes, Rcode.FORMERR, null, REFUSAL_FLAGS) };
    }
  }
  // OPT TTL field: EXTENDED-RCODE(8) VERSION(8) DO(1) Z(15), RFC 6891 §6.1.3.
  const dnssecOk = (optTtl & 0x8000) !== 0;
  const edns = optCount === 1 ? { udpSize: Math.max(CLASSIC_UDP_SIZE, optClass), dnssecOk } : null;
  if (edns) {
    const version = (optTtl >>> 16) & 0xff;
    if (version !== 0) {
      // RFC 6891 §6.1.3: BADVERS (16: extended rcode 1, header rcode 0), with our version, 0.
      return {
        ok: false,
        reason: `EDNS version ${version} is not supported (BADVERS)`,
        reply: localReply(raw, questionBytes, Rcode.BADVERS, { dnssecOk }, FLAG_RA),
      };
    }
  }
  const local = localAnswerFor(qtype, transport);
  if (local) return { ok: false, reason: local.reason, reply: localReply(raw, questionBytes, local.rcode, edns, REFUSAL_FLAGS) };
  const question: QuestionKey = { name: presentName(raw, HEADER_LENGTH), type: typeName(qtype), class: className(qclass) };
  return {
    ok: true,
    query: { id: raw.readUInt16BE(0), question, flags: flags & (FLAG_RD | FLAG_AD | FLAG_CD), edns, questionBytes, raw },
  };
}

/**
 * A reply made here rather than upstream: the client's ID, RD and CD, the
 * question exactly as asked, no records, and an OPT when `edns` is given
 * (RFC 6891 §7: only to a client that sent one). `rcode` may be extended
 * (> 15): its upper bits go in the OPT. `flags`: the other header bits (RA
 * where recursion is on offer, AA, TC).
 */
function localReply(raw: Buffer, questionBytes: Buffer, rcode: number, edns: { readonly dnssecOk: boolean } | null, flags: number): Buffer {
  const opt = edns ? localOptBytes(edns.dnssecOk, rcode >> 4) : undefined;
  const out = Buffer.allocUnsafe(HEADER_LENGTH + questionBytes.length + (opt?.length ?? 0));
  out.writeUInt16BE(raw.readUInt16BE(0), 0);
  out.writeUInt16BE(FLAG_QR | (raw.readUInt16BE(2) & (FLAG_RD | FLAG_CD)) | flags | (rcode & 0xf), 2);
  out.writeUInt16BE(1, 4);
  out.writeUInt32BE(0, 6);
  out.writeUInt16BE(opt ? 1 : 0, 10);
  questionBytes.copy(out, HEADER_LENGTH);
  opt?.copy(out, HEADER_LENGTH + questionBytes.length);
  return out;
}

/** Encoded OPT records of local replies, by DO bit and extended rcode. */
const localOptCache = new Map<number, Buffer>();

function localOptBytes(dnssecOk: boolean, extendedRcode: number): Buffer {
  const key = extendedRcode * 2 + (dnssecOk ? 1 : 0);
  let buf = localOptCache.get(key);
  if (!buf) {
    const flags = dnssecOk ? dnsPacket.DNSSEC_OK : 0;
    buf = dnsPacket.answer.encode({
      type: 'OPT',
      name: '.',
      udpPayloadSize: ADVERTISED_UDP_SIZE,
      extendedRcode,
      ednsVersion: 0,
      flags,
      flag_do: dnssecOk,
      options: [],
    });
    localOptCache.set(key, buf);
  }
  return buf;
}

export interface UpstreamQueryOptions {
  /** Pad to QUERY_PADDING_BLOCK (RFC 7830/8467). Only for encrypted transports. */
  readonly pad: boolean;
  /** Ask the server for its idle timeout (RFC 7828 §3.2.1). Only for TCP/TLS. */
  readonly keepalive: boolean;
}

/**
 * Builds the query sent upstream, framed with its two-octet length for
 * TCP/TLS, with ID 0 (each connection writes its own).
 * The client's EDNS options are hop-by-hop and not forwarded (cookies are
 * per-server; client-subnet would leak the network); the DO bit is kept.
 */
export function encodeUpstreamQuery(
  query: ClientQuery,
  options: UpstreamQueryOptions,
): { readonly wire: Buffer; readonly padding: number } {
  const dnssecOk = query.edns?.dnssecOk ?? false;
  const bare = upstreamOpt(dnssecOk, options.keepalive, -1);
  let padding = 0;
  let opt = bare;
  if (options.pad) {
    // The padding option itself costs 4 octets of header (RFC 7830 §3).
    const unpadded = HEADER_LENGTH + query.questionBytes.length + bare.length + 4;
    padding = (QUERY_PADDING_BLOCK - (unpadded % QUERY_PADDING_BLOCK)) % QUERY_PADDING_BLOCK;
    opt = upstreamOpt(dnssecOk, options.keepalive, padding);
  }
  // Framed for a stream transport: two-octet length, then the message.
  const length = HEADER_LENGTH + query.questionBytes.length + opt.length;
  const wire = Buffer.allocUnsafe(2 + length);
  wire.writeUInt16BE(length, 0);
  wire.writeUInt16BE(0, 2);
  wire.writeUInt16BE(query.flags, 4);
  wire.writeUInt16BE(1, 6);
  wire.writeUInt32BE(0, 8);
  wire.writeUInt16BE(1, 12);
  query.questionBytes.copy(wire, 2 + HEADER_LENGTH);
  opt.copy(wire, 2 + HEADER_LENGTH + query.questionBytes.length);
  return { wire, padding };
}

/** Encoded OPT records by (DO, keepalive, padding length); at most 2 × 2 × 129 entries. */
const optCache = new Map<number, Buffer>();

function upstreamOpt(dnssecOk: boolean, keepalive: boolean, padding: number): Buffer {
  const key = (padding + 1) * 4 + (dnssecOk ? 2 : 0) + (keepalive ? 1 : 0);
  let buf = optCache.get(key);
  if (!buf) {
    const options: PacketOpt[] = [];
    if (keepalive) options.push({ code: OPTION_KEEPALIVE } as PacketOpt);
    if (padding >= 0) options.push({ code: OPTION_PADDING, length: padding } as PacketOpt);
    buf = dnsPacket.answer.encode({
      type: 'OPT',
      name: '.',
      udpPayloadSize: ADVERTISED_UDP_SIZE,
      extendedRcode: 0,
      ednsVersion: 0,
      flags: dnssecOk ? dnsPacket.DNSSEC_OK : 0,
      flag_do: dnssecOk,
      options,
    });
    optCache.set(key, buf);
  }
  return buf;
}

/** ASCII-only case folding of one octet (RFC 4343 §3: octets outside A-Z compare exactly). */
function foldAscii(c: number): number {
  return c >= 0x41 && c <= 0x5a ? c | 0x20 : c;
}

/**
 * Compares the question at HEADER_LENGTH in `raw` with `expected` (an
 * uncompressed question section): the name's ASCII letters
 * case-insensitively (RFC 4343), every other octet, type and class exactly.
 * Follows compression pointers in `raw`. The question's end, or -1 when it differs.
 */
function matchQuestion(raw: Buffer, expected: Buffer): number {
  let offset = HEADER_LENGTH;
  let end = -1;
  let limit = HEADER_LENGTH;
  let e = 0;
  const nameLength = expected.length - 4;
  for (;;) {
    if (offset >= raw.length || e >= nameLength) return -1;
    const len = raw[offset] as number;
    if (len >= 0xc0) {
      if (offset + 1 >= raw.length) return -1;
      const target = ((len & 0x3f) << 8) | (raw[offset + 1] as number);
      if (end === -1) end = offset + 2;
      // Only backwards (RFC 1035 §4.1.4); a pointer into the header is garbage.
      if (target >= limit || target < HEADER_LENGTH) return -1;
      limit = target;
      offset = target;
      continue;
    }
    // Label lengths compare exactly: a length octet is never folded.
    if (len !== expected[e]) return -1;
    if (len === 0) {
      if (end === -1) end = offset + 1;
      break;
    }
    if (len > 63 || offset + 1 + len > raw.length) return -1;
    for (let i = 1; i <= len; i++) {
      if (foldAscii(raw[offset + i] as number) !== foldAscii(expected[e + i] as number)) return -1;
    }
    offset += 1 + len;
    e += 1 + len;
  }
  if (e + 1 !== nameLength || end + 4 > raw.length) return -1;
  // TYPE and CLASS exactly.
  if (raw.readUInt32BE(end) !== expected.readUInt32BE(nameLength)) return -1;
  return end + 4;
}

/** The question in an answer, decoded for an error message (best effort). */
function describeQuestion(raw: Buffer): QuestionKey | undefined {
  try {
    const q = dnsPacket.question.decode(raw, HEADER_LENGTH);
    return { name: q.name, type: q.type, class: q.class ?? 'IN' };
  } catch {
    return undefined;
  }
}

/**
 * Reads an answer from upstream and checks that it answers `question`
 * (RFC 7858 §3.3 via RFC 5452 §9.1), octet by octet. Records are walked, not
 * decoded: only their owner names and fixed-size fields are read, and the
 * OPT record is decoded. Throws MalformedMessageError, or
 * QuestionMismatchError when the answer is for another question.
 */
export function readUpstreamAnswer(raw: Buffer, question: UpstreamQuestion): UpstreamAnswer {
  if (raw.length < HEADER_LENGTH) throw new MalformedMessageError(`answer of ${raw.length} bytes is shorter than a DNS header`);
  const flags = raw.readUInt16BE(2);
  if (!(flags & FLAG_QR)) throw new MalformedMessageError('resolver sent a query, not an answer');
  if (raw.readUInt16BE(4) !== 1) throw new QuestionMismatchError(question.key, undefined);
  let offset = matchQuestion(raw, question.bytes);
  if (offset === -1) throw new QuestionMismatchError(question.key, describeQuestion(raw));
  try {
    let opt: AnswerOpt | undefined;
    let optStart = -1;
    let optEnd = -1;
    let keepaliveMs: number | undefined;
    const answerAndAuthority = raw.readUInt16BE(6) + raw.readUInt16BE(8);
    const records = answerAndAuthority + raw.readUInt16BE(10);
    let additionalStart = answerAndAuthority === 0 ? offset : -1;
    for (let i = 0; i < records; i++) {
      const start = offset;
      offset = nameEnd(raw, offset);
      // TYPE(2) CLASS(2) TTL(4) RDLENGTH(2), RFC 1035 §4.1.3
      if (offset === -1 || offset + 10 > raw.length) throw new RangeError('a record is cut short');
      const type = raw.readUInt16BE(offset);
      const rdataStart = offset + 10;
      offset = rdataStart + raw.readUInt16BE(offset + 8);
      if (offset > raw.length) throw new RangeError('record runs past the end of the message');
      if (type === TYPE_OPT) {
        // TTL field: EXTENDED-RCODE(8) VERSION(8) DO(1) Z(15), RFC 6891 §6.1.3.
        const ttlAt = rdataStart - 6;
        const read = readOptOptions(raw, rdataStart, offset);
        opt = { extendedRcode: raw[ttlAt] as number, flags: raw.readUInt16BE(ttlAt + 2), endToEndOptions: read.endToEnd };
        keepaliveMs = read.keepaliveMs;
        optStart = start;
        optEnd = offset;
      }
      if (i + 1 === answerAndAuthority) additionalStart = offset;
    }
    return {
      id: raw.readUInt16BE(0),
      rcode: ((opt?.extendedRcode ?? 0) << 4) | (flags & 0xf),
      truncated: (flags & FLAG_TC) !== 0,
      keepaliveMs,
      opt,
      optStart,
      optEnd,
      additionalStart,
      raw,
    };
  } catch (err) {
    throw new MalformedMessageError(`malformed answer from resolver: ${(err as Error).message}`, { cause: err });
  }
}

/** Results of readOptOptions, reused: the walk allocates nothing. */
const optOptions = { keepaliveMs: undefined as number | undefined, endToEnd: false };

/**
 * Walks the options in an OPT record's RDATA [start, end): {code(2),
 * length(2), data} each (RFC 6891 §6.1.2). Notes the edns-tcp-keepalive
 * timeout (RFC 7828 §3.1: units of 100 ms) and whether any option is not
 * the TLS hop's own. Throws RangeError when an option runs past the RDATA.
 */
function readOptOptions(raw: Buffer, start: number, end: number): typeof optOptions {
  optOptions.keepaliveMs = undefined;
  optOptions.endToEnd = false;
  let at = start;
  while (at < end) {
    if (at + 4 > end) throw new RangeError('an EDNS option is cut short');
    const code = raw.readUInt16BE(at);
    const length = raw.readUInt16BE(at + 2);
    if (at + 4 + length > end) throw new RangeError('an EDNS option runs past its record');
    if (code === OPTION_KEEPALIVE) {
      if (length >= 2) optOptions.keepaliveMs = raw.readUInt16BE(at + 4) * 100;
    } else if (code !== OPTION_PADDING) {
      optOptions.endToEnd = true;
    }
    at += 4 + length;
  }
  return optOptions;
}

/** The client's OPT: the upstream's flags and extended rcode, without the TLS hop's padding and keepalive. */
function clientOpt(query: ClientQuery, upstreamOpt: OptAnswer | undefined): OptAnswer {
  const options = (upstreamOpt?.options ?? []).filter((o) => o.code !== OPTION_PADDING && o.code !== OPTION_KEEPALIVE);
  const flags = upstreamOpt ? upstreamOpt.flags : query.edns?.dnssecOk ? dnsPacket.DNSSEC_OK : 0;
  return {
    type: 'OPT',
    name: '.',
    udpPayloadSize: ADVERTISED_UDP_SIZE,
    extendedRcode: upstreamOpt?.extendedRcode ?? 0,
    ednsVersion: 0,
    flags,
    flag_do: (flags & dnsPacket.DNSSEC_OK) !== 0,
    options,
  };
}

/** Encoded client OPT records without options, by flags and extended rcode. */
const clientOptCache = new Map<number, Buffer>();

function clientOptBytes(query: ClientQuery, answer: UpstreamAnswer): Buffer {
  const opt = answer.opt as AnswerOpt;
  // Options to keep: decode the record (rare: most answers carry padding and keepalive only).
  if (opt.endToEndOptions) return dnsPacket.answer.encode(clientOpt(query, dnsPacket.answer.decode(answer.raw, answer.optStart) as OptAnswer));
  const key = opt.flags * 256 + opt.extendedRcode;
  let buf = clientOptCache.get(key);
  if (!buf) {
    buf = dnsPacket.answer.encode(
      clientOpt(query, { type: 'OPT', name: '.', udpPayloadSize: ADVERTISED_UDP_SIZE, extendedRcode: opt.extendedRcode, ednsVersion: 0, flags: opt.flags, flag_do: false, options: [] }),
    );
    clientOptCache.set(key, buf);
  }
  return buf;
}

/**
 * Turns an upstream answer into the client's: its ID restored, the TLS-hop
 * EDNS options removed (no OPT at all if the client sent none, RFC 6891 §7),
 * and, over UDP, fitted to what the client can take: first without the
 * additional section (the OPT kept), and only if the answer and authority
 * sections still don't fit, an empty answer with TC set (RFC 2181 §9,
 * RFC 1035 §4.2.1, RFC 6891 §6.2.5).
 *
 * Header bits are the asker's where they are the asker's to set, so a
 * cached answer (stored from another asker's query) reads as one fetched
 * for this query: RD copied from the query (RFC 1035 §4.1.1), AD cleared
 * unless the query set AD or DO (RFC 6840 §5.7); CD is part of the cache
 * key, so it already matches.
 *
 * The fast path relays the resolver's bytes (and its name compression),
 * replacing only the OPT record when it is the last record, as resolvers
 * write it; otherwise the message is re-encoded through dns-packet.
 * `answer.raw` is consumed: it may be patched in place.
 */
export function encodeClientAnswer(
  query: ClientQuery,
  answer: UpstreamAnswer,
  maxSize: number,
): { readonly buf: Buffer; readonly truncated: boolean } {
  const raw = answer.raw;
  const wantsAd = (query.flags & FLAG_AD) !== 0 || (query.edns?.dnssecOk ?? false);
  const flags = (raw.readUInt16BE(2) & ~(FLAG_RD | (wantsAd ? 0 : FLAG_AD))) | (query.flags & FLAG_RD);
  raw.writeUInt16BE(flags, 2);
  let out: Buffer;
  if (!answer.opt) {
    out = raw;
  } else if (answer.optEnd === raw.length) {
    const replacement = query.edns ? clientOptBytes(query, answer) : undefined;
    const newLength = answer.optStart + (replacement?.length ?? 0);
    if (newLength <= raw.length) {
      // Shrinks (padding removed): rewrite within this message's own bytes.
      if (replacement) replacement.copy(raw, answer.optStart);
      else raw.writeUInt16BE(raw.readUInt16BE(10) - 1, 10);
      out = raw.subarray(0, newLength);
    } else {
      out = Buffer.allocUnsafe(newLength);
      raw.copy(out, 0, 0, answer.optStart);
      (replacement as Buffer).copy(out, answer.optStart);
    }
  } else {
    out = reencode(query, raw);
  }
  out.writeUInt16BE(query.id, 0);
  if (out.length <= maxSize) return { buf: out, truncated: false };
  // Too big: the additional section is optional (RFC 2181 §9), the client's OPT is not (RFC 6891 §7).
  // Keep the additional records that fit, as a resolver does (glue first, as it wrote them).
  if (answer.additionalStart !== -1) {
    const opt = query.edns ? (answer.opt ? clientOptBytes(query, answer) : localOptBytes(query.edns.dnssecOk, 0)) : undefined;
    const budget = maxSize - (opt?.length ?? 0);
    if (answer.additionalStart <= budget) {
      const kept = additionalPrefix(raw, answer.additionalStart, budget);
      const trimmed = Buffer.allocUnsafe(kept.end + (opt?.length ?? 0));
      raw.copy(trimmed, 0, 0, kept.end);
      trimmed.writeUInt16BE(query.id, 0);
      trimmed.writeUInt16BE(kept.count + (opt ? 1 : 0), 10);
      opt?.copy(trimmed, kept.end);
      return { buf: trimmed, truncated: false };
    }
  }
  const rcode = answer.rcode & 0xf;
  return { buf: localReply(query.raw, query.questionBytes, rcode, answerOptFor(query, answer), (flags & 0x0780) | FLAG_TC), truncated: true };
}

/**
 * The longest run of whole additional records from `start` that ends within
 * `budget` octets, stopping at the OPT record (resolvers write it last; a
 * record after it is not kept, so no kept name can point past a removed
 * one) and never ending inside an RRset (RFC 2181 §5: records of one owner
 * and type travel together; consecutive records with the same owner octets
 * and type are one RRset as resolvers write them).
 */
function additionalPrefix(raw: Buffer, start: number, budget: number): { readonly end: number; readonly count: number } {
  const total = raw.readUInt16BE(10);
  let end = start;
  let count = 0;
  // Where the RRset the last kept record belongs to began, and how many records were kept before it.
  let setStart = start;
  let setCount = 0;
  let setOwnerEnd = -1;
  let setType = -1;
  let offset = start;
  for (let i = 0; i < total; i++) {
    const ownerEnd = nameEnd(raw, offset);
    if (ownerEnd === -1 || ownerEnd + 10 > raw.length) break;
    const type = raw.readUInt16BE(ownerEnd);
    const next = ownerEnd + 10 + raw.readUInt16BE(ownerEnd + 8);
    if (type === TYPE_OPT || next > raw.length) break;
    const sameSet = setOwnerEnd !== -1 && type === setType && raw.compare(raw, setStart, setOwnerEnd, offset, ownerEnd) === 0;
    if (next > budget) {
      // Don't leave part of an RRset behind: drop the part already kept.
      if (sameSet) return { end: setStart, count: setCount };
      break;
    }
    if (!sameSet) {
      setStart = offset;
      setCount = count;
      setOwnerEnd = ownerEnd;
      setType = type;
    }
    offset = next;
    end = next;
    count++;
  }
  return { end, count };
}

/** The OPT fields of a local reply to `query` standing in for `answer` (null: no OPT). */
function answerOptFor(query: ClientQuery, answer: UpstreamAnswer): { readonly dnssecOk: boolean } | null {
  if (!query.edns) return null;
  return { dnssecOk: answer.opt ? (answer.opt.flags & dnsPacket.DNSSEC_OK) !== 0 : query.edns.dnssecOk };
}

function reencode(query: ClientQuery, raw: Buffer): Buffer {
  const packet = dnsPacket.decode(raw);
  const others = (packet.additionals ?? []).filter((r) => !isOpt(r));
  const upstreamOpt = (packet.additionals ?? []).find(isOpt);
  const additionals = query.edns ? [...others, clientOpt(query, upstreamOpt)] : others;
  return dnsPacket.encode({ ...packet, additionals });
}

/** A SERVFAIL for `query`, echoing its question octets (and EDNS if it had one). */
/** An answer dotstub gives itself: NODATA (NOERROR, no records) or NXDOMAIN, authoritative (AA) since no resolver was asked. */
export function localAnswer(query: ClientQuery, rcode: 'NOERROR' | 'NXDOMAIN'): Buffer {
  return localReply(query.raw, query.questionBytes, Rcode[rcode], query.edns, FLAG_RA | FLAG_AA);
}

export function servfail(query: ClientQuery): Buffer {
  return localReply(query.raw, query.questionBytes, Rcode.SERVFAIL, query.edns, FLAG_RA);
}

/**
 * An empty answer with TC set: "ask again over TCP" (RFC 7766 §5), for a UDP
 * client beyond its share of the proxy; over TCP, backpressure does the rest.
 */
export function truncatedReply(query: ClientQuery): Buffer {
  return localReply(query.raw, query.questionBytes, Rcode.NOERROR, query.edns, FLAG_RA | FLAG_TC);
}

export function rcodeName(rcode: number): string {
  switch (rcode) {
    case 0: return 'NOERROR';
    case 1: return 'FORMERR';
    case 2: return 'SERVFAIL';
    case 3: return 'NXDOMAIN';
    case 4: return 'NOTIMP';
    case 5: return 'REFUSED';
    case 16: return 'BADVERS';
    default: return `RCODE${rcode}`;
  }
}
