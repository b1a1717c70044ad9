/**
 * An answer from a resolver, read in place: its header fields, the
 * question checked against the one asked, every record walked (owner name
 * and fixed fields only) to find the sections' boundaries and the OPT
 * pseudo-record, whose fixed fields and options are read where they are.
 *
 * Invariants: readUpstreamAnswer either returns an UpstreamAnswer whose
 * question matches the query octet for octet (names case-insensitively,
 * RFC 4343; RFC 7858 §3.3 via RFC 5452 §9.1) and whose records all lie
 * within the message, or throws MalformedMessageError or
 * QuestionMismatchError. Records are never decoded; `raw` is kept as it
 * came, to be relayed (client-answer.ts may later patch it in place).
 */
import { MalformedMessageError, QuestionMismatchError } from '../errors.js';
import type { QuestionKey } from './client-query.js';
import { dnsPacket } from './dns-packet.js';
import { FLAG_AD, FLAG_QR, FLAG_TC, HEADER_LENGTH, OPTION_KEEPALIVE, OPTION_PADDING, TYPE_OPT } from './header.js';
import { foldAscii } from './name.js';
import { RECORD_FIXED_LENGTH, recordEnd, recordFixedAt } from './record.js';
import type { UpstreamQuestion } from './upstream-query.js';

/**
 * What the proxy needs of an answer's OPT pseudo-record (RFC 6891 §6.1.2-3),
 * read in place: its options are walked, not decoded.
 */
export interface AnswerOpt {
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

/** What readUpstreamAnswer found in a message, without the message: kept beside a cached copy, so a hit is not walked again. */
export type AnswerLayout = Omit<UpstreamAnswer, 'raw'>;

/**
 * Clears the AD bit of an answer from a resolver dotstub did not
 * authenticate (the network's own, in cleartext; an opportunistic TLS
 * connection that did not verify): "validated" from a server anyone on the
 * path could be is a claim nobody can check (RFC 6840 §5.7: a stub trusts
 * AD only from a resolver it trusts, over a secure channel). Glibc and the
 * programs that read AD (ssh's VerifyHostKeyDNS) would otherwise believe
 * it. In place, before the answer is cached or relayed.
 */
export function withoutAuthenticData(answer: UpstreamAnswer): UpstreamAnswer {
  const raw = answer.raw;
  if (raw.length >= HEADER_LENGTH) raw.writeUInt16BE(raw.readUInt16BE(2) & ~FLAG_AD, 2);
  return answer;
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
 * OPT record's options are walked in place. Throws MalformedMessageError, or
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
      const fixed = recordFixedAt(raw, offset);
      if (fixed === -1) throw new RangeError('a record is cut short');
      const type = raw.readUInt16BE(fixed);
      const rdataStart = fixed + RECORD_FIXED_LENGTH;
      offset = recordEnd(raw, fixed);
      if (offset === -1) throw new RangeError('record runs past the end of the message');
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

