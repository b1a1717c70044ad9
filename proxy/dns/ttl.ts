/**
 * Where a message's TTLs are, for the answer cache: the record walker
 * (RFC 1035 §4.1.3) that yields the offset of every resource record's TTL
 * (OPT excluded: its "TTL" holds EDNS flags, RFC 6891 §6.1.3) and, for
 * negative answers, the SOA's negative-caching TTL (RFC 2308 §5:
 * min(SOA TTL, SOA MINIMUM)). Records are walked, not decoded: names are
 * skipped with name.ts's nameEnd, which allocates nothing.
 */
import { HEADER_LENGTH as HEADER, TYPE_OPT, TYPE_SOA } from './header.js';
import { nameEnd } from './name.js';
import { RECORD_FIXED_LENGTH, recordEnd, recordFixedAt } from './record.js';

export interface TtlLayout {
  /** Byte offset of each record's 32-bit TTL, answer + authority + additional, OPT excluded. */
  readonly offsets: readonly number[];
  /** Smallest TTL among those records (seconds); undefined when there are none. */
  readonly minTtl: number | undefined;
  /** From the authority section's SOA: min(SOA TTL, SOA MINIMUM), RFC 2308 §5; undefined without an SOA. */
  readonly negativeTtl: number | undefined;
  readonly answerCount: number;
  /** Offset just past the question section. */
  readonly questionEnd: number;
}

/** The offset just past the name at `offset` (name.ts's walk: no decoding, nothing allocated). */
function skipName(raw: Buffer, offset: number): number {
  const end = nameEnd(raw, offset);
  if (end === -1) throw new RangeError('a name is malformed or runs past the end of the message');
  return end;
}

/** Walks a whole DNS message (no length prefix). Throws RangeError on a message that runs short. */
export function ttlLayout(raw: Buffer): TtlLayout {
  if (raw.length < HEADER) throw new RangeError('shorter than a DNS header');
  const qd = raw.readUInt16BE(4);
  const an = raw.readUInt16BE(6);
  const ns = raw.readUInt16BE(8);
  const ar = raw.readUInt16BE(10);
  let offset = HEADER;
  for (let i = 0; i < qd; i++) offset = skipName(raw, offset) + 4;
  const questionEnd = offset;
  const offsets: number[] = [];
  let minTtl: number | undefined;
  let negativeTtl: number | undefined;
  const records = an + ns + ar;
  for (let i = 0; i < records; i++) {
    const fixed = recordFixedAt(raw, offset);
    if (fixed === -1) throw new RangeError('a record\'s owner or header runs past the end of the message');
    const type = raw.readUInt16BE(fixed);
    const ttlAt = fixed + 4;
    const rdata = fixed + RECORD_FIXED_LENGTH;
    offset = recordEnd(raw, fixed);
    if (offset === -1) throw new RangeError('record data runs past the end of the message');
    if (type === TYPE_OPT) continue;
    const ttl = raw.readUInt32BE(ttlAt);
    offsets.push(ttlAt);
    minTtl = minTtl === undefined ? ttl : Math.min(minTtl, ttl);
    if (type === TYPE_SOA && i >= an && i < an + ns) {
      // MNAME, RNAME, then SERIAL REFRESH RETRY EXPIRE MINIMUM (RFC 1035 §3.3.13).
      const fixed = skipName(raw, skipName(raw, rdata));
      if (fixed + 20 > offset) throw new RangeError('SOA record too short');
      const minimum = raw.readUInt32BE(fixed + 16);
      negativeTtl = Math.min(ttl, minimum);
    }
  }
  return { offsets, minTtl, negativeTtl, answerCount: an, questionEnd };
}
