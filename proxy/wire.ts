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
import type { Answer, DecodedPacket, OptAnswer, PacketOpt, Question } from 'dns-packet';
import { MalformedMessageError } from './errors.js';

export const HEADER_LENGTH = 12;
/** RFC 1035 §4.2.1: without EDNS a UDP answer holds at most 512 octets. */
export const CLASSIC_UDP_SIZE = 512;
/** RFC 8467 §4.1: clients pad queries to a multiple of 128 octets. */
export const QUERY_PADDING_BLOCK = 128;
/** DNS flag day 2020: the EDNS buffer size we advertise. */
export const ADVERTISED_UDP_SIZE = 1232;

const OPTION_KEEPALIVE = 11;
const OPTION_PADDING = 12;
const TYPE_OPT = 41;
const FLAG_QR = 0x8000;
const FLAG_TC = 0x0200;
const FLAG_RD = 0x0100;
const FLAG_RA = 0x0080;
const FLAG_CD = 0x0010;

export const Rcode = {
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

export interface UpstreamAnswer {
  readonly id: number;
  readonly rcode: number;
  readonly question: QuestionKey | undefined;
  /** RFC 7828 edns-tcp-keepalive from the server, in milliseconds, if it sent one. */
  readonly keepaliveMs: number | undefined;
  readonly truncated: boolean;
  readonly packet: DecodedPacket;
}

export type ParseResult =
  | { readonly ok: true; readonly query: ClientQuery }
  /** `reply` is the FORMERR/NOTIMP to send, or null when even the header is unreadable (drop). */
  | { readonly ok: false; readonly reason: string; readonly reply: Buffer | null };

export function readId(buf: Buffer): number {
  return buf.readUInt16BE(0);
}

/** Returns a copy of `buf` with its message ID replaced. */
export function withId(buf: Buffer, id: number): Buffer {
  const out = Buffer.allocUnsafe(buf.length);
  buf.copy(out);
  out.writeUInt16BE(id, 0);
  return out;
}

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
 * Builds the query sent upstream, with ID 0 (each connection writes its own).
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
  const wire = Buffer.allocUnsafe(HEADER_LENGTH + query.questionBytes.length + opt.length);
  wire.writeUInt16BE(0, 0);
  wire.writeUInt16BE(query.flags, 2);
  wire.writeUInt16BE(1, 4);
  wire.writeUInt32BE(0, 6);
  wire.writeUInt16BE(1, 10);
  query.questionBytes.copy(wire, HEADER_LENGTH);
  opt.copy(wire, HEADER_LENGTH + query.questionBytes.length);
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

/** Decodes an answer from upstream. Throws MalformedMessageError. */
export function parseUpstreamAnswer(raw: Buffer): UpstreamAnswer {
  let packet: DecodedPacket;
  try {
    packet = dnsPacket.decode(raw);
  } catch (err) {
    throw new MalformedMessageError(`malformed answer from resolver: ${(err as Error).message}`, { cause: err });
  }
  const flags = raw.readUInt16BE(2);
  if (!(flags & FLAG_QR)) throw new MalformedMessageError('resolver sent a query, not an answer');
  const q = packet.questions?.[0];
  let keepaliveMs: number | undefined;
  const opt = (packet.additionals ?? []).find(isOpt);
  let extended = 0;
  if (opt) {
    extended = opt.extendedRcode << 4;
    const ka = opt.options.find((o) => o.code === OPTION_KEEPALIVE) as { timeout?: number } | undefined;
    if (ka && typeof ka.timeout === 'number') keepaliveMs = ka.timeout * 100;
  }
  return {
    id: packet.id ?? 0,
    rcode: extended | (flags & 0xf),
    question: q ? { name: q.name, type: q.type, class: q.class ?? 'IN' } : undefined,
    keepaliveMs,
    truncated: (flags & FLAG_TC) !== 0,
    packet,
  };
}

export function sameQuestion(a: QuestionKey, b: QuestionKey | undefined): boolean {
  return (
    b !== undefined &&
    a.type === b.type &&
    a.class === b.class &&
    a.name.toLowerCase() === b.name.toLowerCase()
  );
}

function clientOpt(query: ClientQuery, upstreamOpt: OptAnswer | undefined): OptAnswer {
  // Padding and keepalive were for the TLS hop; the loopback hop gets neither.
  const options = (upstreamOpt?.options ?? []).filter(
    (o) => o.code !== OPTION_PADDING && o.code !== OPTION_KEEPALIVE,
  );
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

/**
 * Turns an upstream answer into the client's: its ID restored, the TLS-hop
 * EDNS options removed (no OPT at all if the client sent none, RFC 6891 §7),
 * and, over UDP, truncated with TC set when it exceeds what the client can
 * take (RFC 1035 §4.2.1, RFC 6891 §6.2.5).
 *
 * The fast path keeps the resolver's bytes (and its name compression) and only
 * replaces the OPT record when it is the last record, as every resolver
 * writes it; otherwise the message is re-encoded.
 */
export function encodeClientAnswer(
  query: ClientQuery,
  answer: UpstreamAnswer,
  raw: Buffer,
  maxSize: number,
): { readonly buf: Buffer; readonly truncated: boolean } {
  const additionals = answer.packet.additionals ?? [];
  const last = additionals[additionals.length - 1];
  let out: Buffer;
  if (last && isOpt(last)) {
    const oldLength = dnsPacket.answer.encodingLength(last);
    const start = raw.length - oldLength;
    if (start >= HEADER_LENGTH && raw[start] === 0 && raw.readUInt16BE(start + 1) === TYPE_OPT) {
      const replacement = query.edns ? dnsPacket.answer.encode(clientOpt(query, last)) : Buffer.alloc(0);
      out = Buffer.allocUnsafe(start + replacement.length);
      raw.copy(out, 0, 0, start);
      replacement.copy(out, start);
      if (!query.edns) out.writeUInt16BE(additionals.length - 1, 10);
    } else {
      out = reencode(query, answer);
    }
  } else if (additionals.some(isOpt)) {
    out = reencode(query, answer);
  } else {
    out = Buffer.allocUnsafe(raw.length);
    raw.copy(out);
  }
  out.writeUInt16BE(query.id, 0);
  if (out.length > maxSize) return { buf: truncatedReply(query, answer.rcode, answer.packet), truncated: true };
  return { buf: out, truncated: false };
}

function reencode(query: ClientQuery, answer: UpstreamAnswer): Buffer {
  const packet = answer.packet;
  const others = (packet.additionals ?? []).filter((r) => !isOpt(r));
  const upstreamOpt = (packet.additionals ?? []).find(isOpt);
  const additionals = query.edns ? [...others, clientOpt(query, upstreamOpt)] : others;
  return dnsPacket.encode({ ...packet, additionals });
}

function truncatedReply(query: ClientQuery, rcode: number, packet: DecodedPacket): Buffer {
  const flags = ((packet.flags ?? 0) & 0x7ff0) | FLAG_TC | (rcode & 0xf);
  return encodeReply(query, flags);
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
