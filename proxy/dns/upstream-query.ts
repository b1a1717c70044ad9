/**
 * The query dotstub sends a resolver, built from a validated client query,
 * and read back where a later stage needs its bits: the answer cache's key
 * (DO, CD, AD) and the cleartext path, which sends the same question
 * without the TLS hop's options. Writer and readers live together so the
 * layout they agree on is stated once:
 *
 *   length(2) | header(12): ID 0, the client's RD/AD/CD, QD 1, AR 1 |
 *   the client's question octets (uncompressed) | OPT (root, ours)
 *
 * Invariants: the ID octets are 0 until a connection writes its own; the
 * client's EDNS options are never forwarded (cookies are per-server;
 * client-subnet would leak the network), only its DO bit; every query to
 * the chosen resolver carries EDNS Client Subnet with source prefix 0
 * (RFC 7871 §7.1.2), which tells a resolver that adds subnets for
 * authoritative servers (Google, AdGuard) not to add this machine's; OPT
 * records are encoded once per (DO, keepalive, padding, ECS) and reused.
 */
import type { PacketOpt } from 'dns-packet';
import type { ClientQuery, QuestionKey } from './client-query.js';
import { dnsPacket } from './dns-packet.js';
import { ADVERTISED_UDP_SIZE, FLAG_AD, FLAG_CD, HEADER_LENGTH, OPTION_CLIENT_SUBNET, OPTION_KEEPALIVE, OPTION_PADDING, TYPE_OPT } from './header.js';
import { uncompressedNameEnd } from './name.js';

/** RFC 8467 §4.1: clients pad queries to a multiple of 128 octets. */
const QUERY_PADDING_BLOCK = 128;

/** What the client's question looks like on the wire upstream, to check answers against. */
export interface UpstreamQuestion {
  readonly key: QuestionKey;
  /** The question section as sent (name, type, class). */
  readonly bytes: Buffer;
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
 * Its own ECS option says "no subnet" (source prefix 0, no address).
 */
export function encodeUpstreamQuery(
  query: ClientQuery,
  options: UpstreamQueryOptions,
): { readonly wire: Buffer; readonly padding: number } {
  const dnssecOk = query.edns?.dnssecOk ?? false;
  const bare = upstreamOpt(dnssecOk, options.keepalive, -1, true);
  let padding = 0;
  let opt = bare;
  if (options.pad) {
    // The padding option itself costs 4 octets of header (RFC 7830 §3).
    const unpadded = HEADER_LENGTH + query.questionBytes.length + bare.length + 4;
    padding = (QUERY_PADDING_BLOCK - (unpadded % QUERY_PADDING_BLOCK)) % QUERY_PADDING_BLOCK;
    opt = upstreamOpt(dnssecOk, options.keepalive, padding, true);
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

/** Encoded OPT records by (DO, keepalive, padding length, ECS /0); at most 2 × 2 × 129 × 2 entries. */
const optCache = new Map<number, Buffer>();

/** RFC 7871 §7.1.2: source prefix 0 ("don't use my subnet"), scope 0, no address octets; family 1 (IPv4) by convention. */
const NO_SUBNET = { code: OPTION_CLIENT_SUBNET, family: 1, sourcePrefixLength: 0, scopePrefixLength: 0, ip: '0.0.0.0' } as PacketOpt;

function upstreamOpt(dnssecOk: boolean, keepalive: boolean, padding: number, noSubnet: boolean): Buffer {
  const key = ((padding + 1) * 4 + (dnssecOk ? 2 : 0) + (keepalive ? 1 : 0)) * 2 + (noSubnet ? 1 : 0);
  let buf = optCache.get(key);
  if (!buf) {
    const options: PacketOpt[] = [];
    if (noSubnet) options.push(NO_SUBNET);
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

/**
 * The bits of an upstream query that change its answer and so belong in a
 * cache key (RFC 4035 §3.2: DO asks for DNSSEC records, CD for unvalidated
 * data; RFC 6840 §5.7: AD asks for the AD bit without DO), read from the
 * framed query encodeUpstreamQuery built.
 */
/** A query's DO, CD and AD bits as one number (what the answer cache keys an answer by, beside the question). */
export const QUERY_BIT_DNSSEC_OK = 1;
export const QUERY_BIT_CHECKING_DISABLED = 2;
export const QUERY_BIT_AUTHENTIC_DATA = 4;

/** The bits of the query sent upstream for `query`, read from the client's query (no wire needed). */
export function queryBits(query: ClientQuery): number {
  return (query.edns?.dnssecOk ? QUERY_BIT_DNSSEC_OK : 0) | (query.flags & FLAG_CD ? QUERY_BIT_CHECKING_DISABLED : 0) | (query.flags & FLAG_AD ? QUERY_BIT_AUTHENTIC_DATA : 0);
}

export function upstreamQueryBits(framed: Buffer): { readonly dnssecOk: boolean; readonly checkingDisabled: boolean; readonly authenticData: boolean } {
  const flags = framed.length >= 2 + HEADER_LENGTH ? framed.readUInt16BE(4) : 0;
  return { dnssecOk: dnssecOkAt(framed, 2), checkingDisabled: (flags & FLAG_CD) !== 0, authenticData: (flags & FLAG_AD) !== 0 };
}

/** The DO bit of the OPT record right after the one question of the message at `start` in `buf` (false without one). */
function dnssecOkAt(buf: Buffer, start: number): boolean {
  // ARCOUNT: the OPT is the only additional record.
  if (buf.length < start + HEADER_LENGTH || buf.readUInt16BE(start + 10) < 1) return false;
  const nameEnd = uncompressedNameEnd(buf, start + HEADER_LENGTH);
  if (nameEnd === -1) return false;
  // QTYPE, QCLASS; then OPT: root name (1), TYPE (2), CLASS = UDP size (2), TTL = ext-rcode (1), version (1), flags (2): DO is the top bit.
  const opt = nameEnd + 4;
  return opt + 9 <= buf.length && buf[opt] === 0 && buf.readUInt16BE(opt + 1) === TYPE_OPT && (buf.readUInt16BE(opt + 7) & 0x8000) !== 0;
}

/**
 * The unframed query for a cleartext resolver (the network's own): the
 * upstream query's flags and question with the given ID, and an OPT
 * without the TLS hop's padding and keepalive, which mean nothing there
 * and would only make the query stand out.
 */
export function cleartextQuery(framed: Buffer, question: UpstreamQuestion, id: number): Buffer {
  // No ECS either: the network's own resolver answers names the network owns, and sees this machine's address anyway.
  const opt = upstreamOpt(dnssecOkAt(framed, 2), false, -1, false);
  const q = question.bytes;
  const out = Buffer.allocUnsafe(HEADER_LENGTH + q.length + opt.length);
  out.writeUInt16BE(id, 0);
  out.writeUInt16BE(framed.readUInt16BE(4), 2);
  out.writeUInt16BE(1, 4);
  out.writeUInt32BE(0, 6);
  out.writeUInt16BE(1, 10);
  q.copy(out, HEADER_LENGTH);
  opt.copy(out, HEADER_LENGTH + q.length);
  return out;
}
