/**
 * The answer a client gets, made from a resolver's (upstream-answer.ts) or
 * a cached copy of one: the client's ID, its RD and AD rules, the TLS hop's
 * EDNS options taken out, fitted to the client's UDP size.
 *
 * Invariants: AD reaches a client only as an authenticated resolver set it
 * (answers from any other had it cleared on arrival: upstream-answer.ts
 * withoutAuthenticData), and only when the client asked for it (AD or DO
 * in its query, RFC 6840 §5.7); the client's OPT is there exactly when its query had one
 * (RFC 6891 §7) and never carries padding or keepalive; an answer too big
 * for UDP loses additional records first (whole RRsets, glue first) and
 * becomes an empty TC answer only when the answer and authority sections
 * alone don't fit; the resolver's bytes are relayed as they came (header
 * bits and OPT replaced in place) where the OPT is the last record, as
 * resolvers write it, or absent, and re-encoded through dns-packet otherwise.
 */
import type { Answer, OptAnswer } from 'dns-packet';
import type { ClientQuery } from './client-query.js';
import { dnsPacket } from './dns-packet.js';
import { ADVERTISED_UDP_SIZE, FLAG_AD, FLAG_RD, FLAG_TC, OPTION_KEEPALIVE, OPTION_PADDING, TYPE_OPT } from './header.js';
import { localOptBytes, localReply } from './local-reply.js';
import { recordEnd, recordFixedAt } from './record.js';
import type { AnswerOpt, UpstreamAnswer } from './upstream-answer.js';

function isOpt(record: Answer): record is OptAnswer {
  return record.type === 'OPT';
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
 * Copies `src` into `dst` at `at`, octet by octet: for the few octets of an
 * OPT record, cheaper than Buffer#copy's checks and native call (issue 32:
 * the hit path). The caller knows it fits.
 */
export function copySmall(src: Buffer, dst: Buffer, at: number): void {
  for (let i = 0; i < src.length; i++) dst[at + i] = src[i] as number;
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
      if (replacement) copySmall(replacement, raw, answer.optStart);
      else raw.writeUInt16BE(raw.readUInt16BE(10) - 1, 10);
      // A cached answer's OPT (stored without options) is as long as the client's: the same Buffer, no view made.
      out = newLength === raw.length ? raw : raw.subarray(0, newLength);
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
    const ownerEnd = recordFixedAt(raw, offset);
    if (ownerEnd === -1) break;
    const type = raw.readUInt16BE(ownerEnd);
    const next = recordEnd(raw, ownerEnd);
    if (type === TYPE_OPT || next === -1) break;
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
