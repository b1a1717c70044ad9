/**
 * A client's query, read and validated in place: the header screened from
 * its first 12 octets, the question walked octet by octet, the records
 * after it walked (not decoded) to find the client's OPT. What passes is a
 * `ClientQuery`; what doesn't carries the reply to send (local-reply.ts),
 * or none when the message must be dropped.
 *
 * Invariants: parseClientQuery never throws; a header screened out without
 * a reply allocates nothing (a flood of garbage costs little); the question
 * is forwarded as the client wrote it, never decoded and re-encoded (names
 * are octet strings, RFC 2181 §11; dns-packet would read labels as UTF-8).
 */
import { dnsClasses, dnsTypes } from './dns-packet.js';
import { CLASSIC_UDP_SIZE, FLAG_AD, FLAG_CD, FLAG_QR, FLAG_RA, FLAG_RD, HEADER_LENGTH, Rcode, TYPE_OPT } from './header.js';
import { errorReply, localAnswerFor, localReply, REFUSAL_FLAGS } from './local-reply.js';
import { presentName, uncompressedNameEnd } from './name.js';
import { recordEnd, recordFixedAt } from './record.js';

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

export type ParseResult =
  | { readonly ok: true; readonly query: ClientQuery }
  /** `reply` is the error answer to send, or null when nothing must be sent (drop). */
  | { readonly ok: false; readonly reason: string; readonly reply: Buffer | null };

/** The transport a client's query came over; AXFR/IXFR are answered differently on each. */
export type ClientTransport = 'udp' | 'tcp';

/** RFC 1035 §4.1: a header, then a question with at least the root name, a type and a class. */
const MIN_QUERY_LENGTH = HEADER_LENGTH + 1 + 4;

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

function typeName(type: number): string {
  return dnsTypes.toString(type);
}

/**
 * Types dns-packet has no mnemonic for (it names them `UNKNOWN_<n>`), as
 * people know them (RFC 9460). The question key keeps dns-packet's name, as
 * every parser here reads it; what is shown (the query record: the log, the
 * dashboard's filter, the CSV) says this.
 */
const SHOWN_TYPES: Readonly<Record<string, string>> = { UNKNOWN_64: 'SVCB', UNKNOWN_65: 'HTTPS' };

/** A question's type as the query log shows it: `HTTPS`, not `UNKNOWN_65`. */
export function shownType(type: string): string {
  return SHOWN_TYPES[type] ?? type;
}

function className(klass: number): string {
  return dnsClasses.toString(klass);
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
    offset = recordFixedAt(raw, offset);
    if (offset === -1) {
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
    offset = recordEnd(raw, offset);
    if (offset === -1) {
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
