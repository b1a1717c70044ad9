/**
 * The DNS wire format, through dns-packet. This module is the only place that
 * knows dns-packet's shapes; everything else deals in `ClientQuery`,
 * `UpstreamAnswer` and Buffers.
 *
 * Fixed header fields (ID, flags, counts) are read and patched in place at
 * their RFC 1035 §4.1.1 offsets; names, questions and records always go through
 * dns-packet.
 */
import dnsPacket from 'dns-packet';
import type { Answer, OptAnswer, PacketOpt, Question } from 'dns-packet';
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
const FLAG_QR = 0x8000;
const FLAG_TC = 0x0200;
const FLAG_RD = 0x0100;
const FLAG_RA = 0x0080;
const FLAG_CD = 0x0010;

const Rcode = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
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
  /** Header flags to carry upstream (RD and CD). */
  readonly flags: number;
  /** The client's EDNS, or null if its query had no OPT record. */
  readonly edns: { readonly udpSize: number; readonly dnssecOk: boolean } | null;
  /** The question section exactly as the client sent it (no compression pointers). */
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
 * An answer from upstream, read without decoding its records: header
 * fields, the OPT pseudo-record (decoded, with its position), and the raw
 * bytes to relay.
 */
export interface UpstreamAnswer {
  readonly id: number;
  /** Including the EDNS extended bits (RFC 6891 §6.1.3). */
  readonly rcode: number;
  readonly truncated: boolean;
  /** RFC 7828 edns-tcp-keepalive from the server, in milliseconds, if it sent one. */
  readonly keepaliveMs: number | undefined;
  readonly opt: OptAnswer | undefined;
  /** Byte range of the OPT record in `raw` (-1 when there is none). */
  readonly optStart: number;
  readonly optEnd: number;
  readonly raw: Buffer;
}

export type ParseResult =
  | { readonly ok: true; readonly query: ClientQuery }
  /** `reply` is the FORMERR/NOTIMP to send, or null when even the header is unreadable (drop). */
  | { readonly ok: false; readonly reason: string; readonly reply: Buffer | null };

function isOpt(record: Answer): record is OptAnswer {
  return record.type === 'OPT';
}

function errorReply(raw: Buffer, rcode: number): Buffer {
  // Only the header is trusted here: echo ID and RD, no sections (RFC 1035 §4.1.1).
  const out = Buffer.alloc(HEADER_LENGTH);
  out.writeUInt16BE(raw.readUInt16BE(0), 0);
  out.writeUInt16BE(FLAG_QR | (raw.readUInt16BE(2) & (FLAG_RD | 0x7800)) | rcode, 2);
  return out;
}

/** Parses and validates a query from a client. Never throws. */
export function parseClientQuery(raw: Buffer): ParseResult {
  if (raw.length < HEADER_LENGTH) {
    return { ok: false, reason: `message of ${raw.length} bytes is shorter than a DNS header`, reply: null };
  }
  const flags = raw.readUInt16BE(2);
  if (flags & FLAG_QR) {
    // A response sent to a resolver is never answered (it could loop).
    return { ok: false, reason: 'message is a response, not a query', reply: null };
  }
  const opcode = (flags >> 11) & 0xf;
  if (opcode !== 0) {
    return { ok: false, reason: `opcode ${opcode} is not supported`, reply: errorReply(raw, Rcode.NOTIMP) };
  }
  const qdcount = raw.readUInt16BE(4);
  if (qdcount !== 1) {
    return { ok: false, reason: `query has ${qdcount} questions, expected 1`, reply: errorReply(raw, Rcode.FORMERR) };
  }
  // Decode only what a query carries: the question, then the additional
  // section for OPT. Queries with answer/authority records (rare) are decoded whole.
  let q: Question;
  let questionEnd: number;
  let opt: OptAnswer | undefined;
  try {
    q = dnsPacket.question.decode(raw, HEADER_LENGTH);
    questionEnd = HEADER_LENGTH + dnsPacket.question.decode.bytes;
    if (raw.readUInt16BE(6) !== 0 || raw.readUInt16BE(8) !== 0) {
      opt = (dnsPacket.decode(raw).additionals ?? []).find(isOpt);
    } else {
      let offset = questionEnd;
      for (let i = raw.readUInt16BE(10); i > 0; i--) {
        const rr = dnsPacket.answer.decode(raw, offset);
        offset += dnsPacket.answer.decode.bytes;
        if (isOpt(rr)) opt = rr;
      }
      if (offset > raw.length) throw new RangeError('records run past the end of the message');
    }
  } catch (err) {
    return { ok: false, reason: `malformed query: ${(err as Error).message}`, reply: errorReply(raw, Rcode.FORMERR) };
  }
  const question: QuestionKey = { name: q.name, type: q.type, class: q.class ?? 'IN' };
  // Forward the client's own bytes (and its 0x20 case) unless it used a
  // compression pointer, which would point nowhere in our message.
  const uncompressed = dnsPacket.question.encodingLength(q) === questionEnd - HEADER_LENGTH;
  const questionBytes = uncompressed
    ? raw.subarray(HEADER_LENGTH, questionEnd)
    : dnsPacket.encode({ questions: [q] }).subarray(HEADER_LENGTH);
  const edns = opt
    ? { udpSize: Math.max(CLASSIC_UDP_SIZE, opt.udpPayloadSize), dnssecOk: (opt.flags & dnsPacket.DNSSEC_OK) !== 0 }
    : null;
  return {
    ok: true,
    query: { id: raw.readUInt16BE(0), question, flags: flags & (FLAG_RD | FLAG_CD), edns, questionBytes, raw },
  };
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

/** Compares question sections; the name's letters case-insensitively (RFC 4343), type and class exactly. */
function sameQuestionBytes(raw: Buffer, expected: Buffer): boolean {
  const n = expected.length;
  if (raw.length < HEADER_LENGTH + n) return false;
  const nameEnd = n - 4;
  for (let i = 0; i < n; i++) {
    const a = raw[HEADER_LENGTH + i] as number;
    const b = expected[i] as number;
    if (a === b) continue;
    // Label lengths are at most 63, so only letters fold here.
    if (i >= nameEnd || (a | 0x20) !== (b | 0x20) || (a | 0x20) < 0x61 || (a | 0x20) > 0x7a) return false;
  }
  return true;
}

/**
 * Reads an answer from upstream and checks that it answers `question`
 * (RFC 7858 §3.3 via RFC 5452 §9.1). Records are walked, not decoded: only
 * their owner names (through dns-packet) and fixed-size fields are read, and
 * the OPT record is decoded. Throws MalformedMessageError, or
 * QuestionMismatchError when the answer is for another question.
 */
export function readUpstreamAnswer(raw: Buffer, question: UpstreamQuestion): UpstreamAnswer {
  if (raw.length < HEADER_LENGTH) throw new MalformedMessageError(`answer of ${raw.length} bytes is shorter than a DNS header`);
  const flags = raw.readUInt16BE(2);
  if (!(flags & FLAG_QR)) throw new MalformedMessageError('resolver sent a query, not an answer');
  if (raw.readUInt16BE(4) !== 1) throw new QuestionMismatchError(question.key, undefined);
  let offset: number;
  try {
    if (sameQuestionBytes(raw, question.bytes)) {
      offset = HEADER_LENGTH + question.bytes.length;
    } else {
      // Not byte-identical (e.g. a compressed or re-cased question): compare decoded.
      const q = dnsPacket.question.decode(raw, HEADER_LENGTH);
      const got: QuestionKey = { name: q.name, type: q.type, class: q.class ?? 'IN' };
      if (!sameQuestion(question.key, got)) throw new QuestionMismatchError(question.key, got);
      offset = HEADER_LENGTH + dnsPacket.question.decode.bytes;
    }
    let opt: OptAnswer | undefined;
    let optStart = -1;
    let optEnd = -1;
    const records = raw.readUInt16BE(6) + raw.readUInt16BE(8) + raw.readUInt16BE(10);
    for (let i = 0; i < records; i++) {
      const start = offset;
      // An owner name is usually a compression pointer (two octets, top bits
      // 11) or the root (one zero octet), RFC 1035 §4.1.4; anything else goes
      // through dns-packet.
      const first = raw[offset] as number;
      if (first >= 0xc0) offset += 2;
      else if (first === 0) offset += 1;
      else {
        dnsPacket.name.decode(raw, offset);
        offset += dnsPacket.name.decode.bytes;
      }
      // TYPE(2) CLASS(2) TTL(4) RDLENGTH(2), RFC 1035 §4.1.3
      const type = raw.readUInt16BE(offset);
      offset += 10 + raw.readUInt16BE(offset + 8);
      if (offset > raw.length) throw new RangeError('record runs past the end of the message');
      if (type === TYPE_OPT) {
        opt = dnsPacket.answer.decode(raw, start) as OptAnswer;
        optStart = start;
        optEnd = offset;
      }
    }
    let keepaliveMs: number | undefined;
    if (opt) {
      const ka = opt.options.find((o) => o.code === OPTION_KEEPALIVE) as { timeout?: number } | undefined;
      if (ka && typeof ka.timeout === 'number') keepaliveMs = ka.timeout * 100;
    }
    return {
      id: raw.readUInt16BE(0),
      rcode: ((opt?.extendedRcode ?? 0) << 4) | (flags & 0xf),
      truncated: (flags & FLAG_TC) !== 0,
      keepaliveMs,
      opt,
      optStart,
      optEnd,
      raw,
    };
  } catch (err) {
    if (err instanceof QuestionMismatchError) throw err;
    throw new MalformedMessageError(`malformed answer from resolver: ${(err as Error).message}`, { cause: err });
  }
}

export function sameQuestion(a: QuestionKey, b: QuestionKey | undefined): boolean {
  return (
    b !== undefined &&
    a.type === b.type &&
    a.class === b.class &&
    a.name.toLowerCase() === b.name.toLowerCase()
  );
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

function clientOptBytes(query: ClientQuery, upstreamOpt: OptAnswer): Buffer {
  const hopOnly = upstreamOpt.options.every((o) => o.code === OPTION_PADDING || o.code === OPTION_KEEPALIVE);
  if (!hopOnly) return dnsPacket.answer.encode(clientOpt(query, upstreamOpt));
  const key = upstreamOpt.flags * 256 + upstreamOpt.extendedRcode;
  let buf = clientOptCache.get(key);
  if (!buf) {
    buf = dnsPacket.answer.encode(clientOpt(query, upstreamOpt));
    clientOptCache.set(key, buf);
  }
  return buf;
}

/**
 * Turns an upstream answer into the client's: its ID restored, the TLS-hop
 * EDNS options removed (no OPT at all if the client sent none, RFC 6891 §7),
 * and, over UDP, truncated with TC set when it exceeds what the client can
 * take (RFC 1035 §4.2.1, RFC 6891 §6.2.5).
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
  let out: Buffer;
  if (!answer.opt) {
    out = raw;
  } else if (answer.optEnd === raw.length) {
    const replacement = query.edns ? clientOptBytes(query, answer.opt) : undefined;
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
  if (out.length > maxSize) {
    const flags = (raw.readUInt16BE(2) & 0x7ff0) | FLAG_TC | (answer.rcode & 0xf);
    return { buf: encodeReply(query, flags), truncated: true };
  }
  return { buf: out, truncated: false };
}

function reencode(query: ClientQuery, raw: Buffer): Buffer {
  const packet = dnsPacket.decode(raw);
  const others = (packet.additionals ?? []).filter((r) => !isOpt(r));
  const upstreamOpt = (packet.additionals ?? []).find(isOpt);
  const additionals = query.edns ? [...others, clientOpt(query, upstreamOpt)] : others;
  return dnsPacket.encode({ ...packet, additionals });
}

function encodeReply(query: ClientQuery, flags: number): Buffer {
  const additionals: Answer[] = query.edns ? [clientOpt(query, undefined)] : [];
  const buf = dnsPacket.encode({
    type: 'response',
    id: query.id,
    flags: flags & 0x7fff,
    questions: [{ name: query.question.name, type: query.question.type, class: query.question.class } as Question],
    additionals,
  });
  return buf;
}

/** A SERVFAIL for `query`, echoing its question (and EDNS if it had one). */
export function servfail(query: ClientQuery): Buffer {
  return encodeReply(query, (query.flags & (FLAG_RD | FLAG_CD)) | FLAG_RA | Rcode.SERVFAIL);
}

export function rcodeName(rcode: number): string {
  switch (rcode) {
    case 0: return 'NOERROR';
    case 1: return 'FORMERR';
    case 2: return 'SERVFAIL';
    case 3: return 'NXDOMAIN';
    case 4: return 'NOTIMP';
    case 5: return 'REFUSED';
    default: return `RCODE${rcode}`;
  }
}
