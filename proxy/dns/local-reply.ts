/**
 * Replies dotstub makes itself instead of relaying a resolver's: errors for
 * queries it can't or won't forward (FORMERR, NOTIMP, REFUSED, BADVERS), a
 * SERVFAIL when no resolver answered, an empty TC answer that sends a UDP
 * client to TCP, and the local answers of engine/local-answers.ts; with the
 * rule for which questions are refused before any recursion.
 *
 * Invariants: a reply carries the client's ID and RD, and either no
 * sections at all (errorReply: only the header was trusted; its opcode is
 * echoed) or the client's CD and its question octet for octet as sent; an
 * OPT only to a client that sent one (RFC 6891 §7), with our EDNS version 0
 * and buffer size.
 */
import { dnsPacket, dnsTypes } from './dns-packet.js';
import {
  ADVERTISED_UDP_SIZE,
  FLAG_AA,
  FLAG_CD,
  FLAG_QR,
  FLAG_RA,
  FLAG_RD,
  FLAG_TC,
  HEADER_LENGTH,
  OPCODE_MASK,
  Rcode,
  TYPE_AXFR,
  TYPE_IXFR,
  TYPE_MAILA,
  TYPE_MAILB,
  TYPE_OPT,
  TYPE_TKEY,
  TYPE_TSIG,
} from './header.js';
import type { ClientQuery, ClientTransport } from './client-query.js';

/** Header bits of a question refused before any recursion (localAnswerFor): no RA. */
export const REFUSAL_FLAGS = 0;

/** A reply to a message whose header alone was trusted: echo ID, opcode and RD, no sections (RFC 1035 §4.1.1). */
export function errorReply(raw: Buffer, rcode: number): Buffer {
  // allocUnsafe: a slice of Node's pool, not an ArrayBuffer of its own per datagram of a flood.
  const out = Buffer.allocUnsafe(HEADER_LENGTH);
  out.writeUInt16BE(raw.readUInt16BE(0), 0);
  out.writeUInt16BE(FLAG_QR | (raw.readUInt16BE(2) & (FLAG_RD | OPCODE_MASK)) | rcode, 2);
  out.fill(0, 4);
  return out;
}

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
export function localAnswerFor(qtype: number, _transport: ClientTransport): { readonly rcode: number; readonly reason: string } | undefined {
  switch (qtype) {
    case TYPE_OPT:
    case TYPE_TKEY:
    case TYPE_TSIG:
      return { rcode: Rcode.FORMERR, reason: `query type ${dnsTypes.toString(qtype)} is a meta-type and cannot be asked for` };
    case TYPE_MAILA:
    case TYPE_MAILB:
      return { rcode: Rcode.FORMERR, reason: `query type ${dnsTypes.toString(qtype)} is obsolete (RFC 1035: see MX)` };
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

/**
 * A reply made here rather than upstream: the client's ID, RD and CD, the
 * question exactly as asked, no records, and an OPT when `edns` is given
 * (RFC 6891 §7: only to a client that sent one). `rcode` may be extended
 * (> 15): its upper bits go in the OPT. `flags`: the other header bits (RA
 * where recursion is on offer, AA, TC).
 */
export function localReply(raw: Buffer, questionBytes: Buffer, rcode: number, edns: { readonly dnssecOk: boolean } | null, flags: number): Buffer {
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

export function localOptBytes(dnssecOk: boolean, extendedRcode: number): Buffer {
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

/** An answer dotstub gives itself: NODATA (NOERROR, no records) or NXDOMAIN, authoritative (AA) since no resolver was asked. */
export function localAnswer(query: ClientQuery, rcode: 'NOERROR' | 'NXDOMAIN'): Buffer {
  return localReply(query.raw, query.questionBytes, Rcode[rcode], query.edns, FLAG_RA | FLAG_AA);
}

/** A SERVFAIL for `query`, echoing its question octets (and EDNS if it had one): no resolver answered in time. */
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
