/**
 * Answers kept as wire bytes (the web-performance study's recommendation):
 * each entry is the resolver's message plus where its TTLs are, so serving
 * one is a copy, a TTL patch and the engine's usual ID restore — no decode,
 * no re-encode.
 *
 * Invariants:
 * - Keyed by the question's octets (name without case, type, class) and
 *   the query's DO, CD and AD bits, through a hash: no key string is built
 *   per query; a hash collision is a miss, never another question's answer.
 * - Bounded in bytes: the least recently used entries go first (a list in
 *   use order, linked through the entries: get() moves an entry to the end).
 * - Admission by frequency (issue 23, TinyLFU): when storing a new answer
 *   would evict another, it is stored only if its question was asked more
 *   often lately than the one it would evict (a count-min sketch of every
 *   lookup, halved every `sampleSize` lookups so old popularity fades). A
 *   loop of names larger than the cache then keeps a steady share of it
 *   instead of evicting each name just before it is asked again (plain LRU:
 *   1–4 % hits on a 10,000-name loop), and a one-off scan doesn't flush the
 *   popular names. Measured in bench/results/cache-policy.md.
 * - An entry is served fresh until its TTL ends, then only as stale (RFC
 *   8767) for at most `staleMaxSec`, with TTL `STALE_TTL_SEC`; after that it
 *   is gone.
 * - Stored bytes are the cache's own copy (a latin1 string: see Entry.wire);
 *   a served answer is a fresh Buffer.
 * - `clear()` starts a new generation: an answer to a question asked before
 *   it (a resolver switched away from answering late) is refused by `set`,
 *   so nothing from before a flush is ever stored after it.
 */
import { copySmall } from '../dns/client-answer.js';
import { foldAscii } from '../dns/name.js';
import type { AnswerLayout, AnswerOpt, UpstreamAnswer } from '../dns/upstream-answer.js';
import { ttlLayout } from '../dns/ttl.js';
import { QUERY_BIT_AUTHENTIC_DATA, QUERY_BIT_CHECKING_DISABLED, QUERY_BIT_DNSSEC_OK } from '../dns/upstream-query.js';

/** RFC 8767 §4: stale answers go out with a TTL of 30 s. */
export const STALE_TTL_SEC = 30;

export interface AnswerCacheOptions {
  /** Upper bound on the bytes of stored messages (plus a per-entry overhead). */
  readonly maxBytes: number;
  /** TTLs above this are capped (a day, as unbound's cache-max-ttl). */
  readonly maxTtlSec: number;
  /** Upstream SERVFAIL answers are kept this long at most (RFC 2308 §7.1 allows 5 min; we keep a few seconds). */
  readonly servfailTtlSec: number;
  /** How long past expiry an answer may still be served stale (RFC 8767 §5 suggests 1–3 days). */
  readonly staleMaxSec: number;
  /** 'frequency' (default): TinyLFU admission in front of LRU eviction; 'lru': admit everything. */
  readonly admission: 'frequency' | 'lru';
}

const DEFAULT_CACHE_OPTIONS: AnswerCacheOptions = {
  maxBytes: 4 * 1024 * 1024,
  maxTtlSec: 86_400,
  servfailTtlSec: 2,
  staleMaxSec: 86_400,
  admission: 'frequency',
};

/** Key bits: the query bits that change the answer (upstream-query.ts upstreamQueryBits). */
export const KEY_DNSSEC_OK = QUERY_BIT_DNSSEC_OK;
export const KEY_CHECKING_DISABLED = QUERY_BIT_CHECKING_DISABLED;
export const KEY_AUTHENTIC_DATA = QUERY_BIT_AUTHENTIC_DATA;

/**
 * The hash of a key, a 30-bit integer (V8 keeps it unboxed): FNV-1a over
 * the question's octets with ASCII letters folded to lower case (RFC 4343),
 * then the key bits. A collision costs a miss, never a wrong answer: an
 * entry is served only to its own question (a client that aimed for one
 * could make one name miss, as asking many names could). The same in every
 * run, so admission decisions are reproducible: with a seed per process,
 * one chance sketch collision in the first round of bench/cache-policy's
 * 10,000-name loop cascaded through the next round (20.7 % hits instead of
 * 41.4 %, in some runs).
 */
function keyHash(question: Buffer, bits: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < question.length; i++) {
    h ^= foldAscii(question[i] as number);
    h = Math.imul(h, 0x01000193);
  }
  h ^= bits;
  h = Math.imul(h, 0x01000193);
  return h & 0x3fffffff;
}

/**
 * How often each key was asked lately, approximately: 4 rows of saturating
 * 8-bit counters (a count-min sketch, conservative update); every
 * `sampleSize` increments all counters are halved, so the counts describe
 * recent use (TinyLFU, Einziger et al. 2017).
 */
class FrequencySketch {
  readonly #rows: Uint8Array;
  readonly #mask: number;
  readonly #sampleSize: number;
  #additions = 0;

  constructor(sampleSize: number) {
    let width = 1024;
    while (width < sampleSize / 2) width *= 2;
    this.#rows = new Uint8Array(width * 4);
    this.#mask = width - 1;
    this.#sampleSize = sampleSize;
  }

  #index(hash: number, row: number): number {
    // Double hashing: row i uses h1 + i·h2 (h2 odd, so every slot is reachable).
    const h2 = ((hash >>> 16) | 1) >>> 0;
    return row * (this.#mask + 1) + ((hash + Math.imul(row, h2)) & this.#mask);
  }

  frequency(hash: number): number {
    let min = 255;
    for (let r = 0; r < 4; r++) min = Math.min(min, this.#rows[this.#index(hash, r)] as number);
    return min;
  }

  increment(hash: number): void {
    const f = this.frequency(hash);
    if (f === 255) return;
    for (let r = 0; r < 4; r++) {
      const i = this.#index(hash, r);
      if (this.#rows[i] === f) this.#rows[i] = f + 1;
    }
    if (++this.#additions >= this.#sampleSize) {
      this.#additions = 0;
      for (let i = 0; i < this.#rows.length; i++) this.#rows[i] = (this.#rows[i] as number) >>> 1;
    }
  }
}

/**
 * Bytes an entry costs beyond its message, roughly: the entry object, its
 * TTL offsets, its slot in the map. Measured (answer-cache.test.ts): ~280
 * beside a 60-octet answer, so a full cache takes about 1.2x maxBytes.
 */
const ENTRY_OVERHEAD = 200;

interface Entry {
  readonly hash: number;
  /** The key bits (KEY_*) of the query it answers. */
  readonly bits: number;
  /**
   * The stored message as a one-byte (latin1) string: its octets inside
   * V8's heap, at about their own size, where a Buffer would cost ~400
   * more in objects and off-heap allocations (or, as a slice of Node's
   * shared 8 KiB pool, keep the whole chunk alive). Its question (octets 12
   * to 12 + questionLength) is the key's.
   */
  readonly wire: string;
  /** Where each TTL is in `wire` (which holds them as they were when stored). */
  readonly ttlOffsets: readonly number[];
  /** Date.now() when stored. */
  readonly storedAt: number;
  /** Seconds the entry is fresh. */
  readonly ttlSec: number;
  /** Length of the stored question section. */
  readonly questionLength: number;
  /**
   * What reading `wire` found, when the caller read it once at store time
   * (readUpstreamAnswer), so a hit needs no walk: kept as numbers on the
   * entry and one shared OPT description, not an object per entry (a
   * layout object and its OPT would cost ~140 octets each).
   */
  readonly laidOut: boolean;
  readonly rcode: number;
  readonly opt: AnswerOpt | undefined;
  readonly optStart: number;
  readonly optEnd: number;
  readonly additionalStart: number;
  hits: number;
  prefetching: boolean;
  /** Neighbours in use order (null at the ends): the recency list, kept without allocating. */
  older: Entry | null;
  newer: Entry | null;
}

export interface CacheLookup {
  readonly entry: CacheEntry;
  readonly stale: boolean;
  /** Seconds of freshness left (0 when stale). */
  readonly remainingSec: number;
}

/** What callers may see of an entry. */
interface CacheEntry {
  readonly ttlSec: number;
  readonly hits: number;
  prefetching: boolean;
}

const RCODE_NOERROR = 0;
const RCODE_SERVFAIL = 2;
const RCODE_NXDOMAIN = 3;

export class AnswerCache {
  readonly options: AnswerCacheOptions;
  /** By key hash; an entry found here is served only if its question and bits are the asker's. */
  readonly #entries = new Map<number, Entry>();
  /** The recency list's ends: the least recently used (evicted first) and the most. */
  #oldest: Entry | null = null;
  #newest: Entry | null = null;
  #bytes = 0;
  /** Bumped by clear(); an answer is stored only under the generation its question was asked in. */
  #generation = 0;
  /** Recent popularity of every key looked up (admission by frequency); null when admitting everything. */
  readonly #sketch: FrequencySketch | null;

  constructor(options: Partial<AnswerCacheOptions> = {}) {
    this.options = { ...DEFAULT_CACHE_OPTIONS, ...options };
    // About ten lookups per entry the cache can hold between halvings (entries of ~500 octets with overhead).
    this.#sketch = this.options.admission === 'frequency' ? new FrequencySketch(Math.max(1024, Math.ceil((10 * this.options.maxBytes) / 512))) : null;
  }

  get entries(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** The generation a question asked now belongs to; pass it back to `set` with its answer. */
  get generation(): number {
    return this.#generation;
  }

  clear(): void {
    this.#entries.clear();
    this.#oldest = null;
    this.#newest = null;
    this.#bytes = 0;
    this.#generation++;
  }

  /**
   * Finds the answer to `question` (its octets as asked: name, type, class)
   * with key `bits` (KEY_*), fresh or (within the stale bound) stale;
   * counts the hit and marks it recently used. Allocates nothing but the
   * result.
   */
  get(question: Buffer, bits: number, now = Date.now()): CacheLookup | undefined {
    const hash = keyHash(question, bits);
    this.#sketch?.increment(hash);
    const e = this.#entries.get(hash);
    if (!e || !answers(e, question, bits)) return undefined;
    const age = (now - e.storedAt) / 1000;
    if (age >= e.ttlSec + this.options.staleMaxSec) {
      this.#delete(e);
      return undefined;
    }
    this.#unlink(e);
    this.#append(e);
    e.hits++;
    const stale = age >= e.ttlSec;
    return { entry: e, stale, remainingSec: stale ? 0 : Math.floor(e.ttlSec - age) };
  }

  /**
   * Stores the resolver's answer to `question` with key `bits` (a whole
   * message, no length prefix, whose question is `question` but for case)
   * if it may be cached: positive answers for their smallest TTL, NXDOMAIN
   * and NODATA for the SOA's negative TTL, SERVFAIL for a few seconds; never
   * a truncated answer, other rcodes, TTL 0, or a message that doesn't walk;
   * never one whose question was asked before the last clear() (`askedIn`).
   * `read`: what reading `message` found, kept with it for the hits (null:
   * they read it again). Returns whether it was stored.
   */
  set(question: Buffer, bits: number, message: Buffer, rcode: number, askedIn: number, now = Date.now(), read: AnswerLayout | null = null): boolean {
    if (askedIn !== this.#generation) return false;
    if (message.length < 12 || (message.readUInt16BE(2) & 0x0200) !== 0) return false;
    let layout;
    try {
      layout = ttlLayout(message);
    } catch {
      return false;
    }
    if (layout.questionEnd - 12 !== question.length || !sameQuestion(message, question)) return false;
    let ttl: number | undefined;
    if (rcode === RCODE_SERVFAIL) ttl = this.options.servfailTtlSec;
    else if (rcode === RCODE_NXDOMAIN || (rcode === RCODE_NOERROR && layout.answerCount === 0)) ttl = layout.negativeTtl;
    else if (rcode === RCODE_NOERROR) ttl = layout.minTtl;
    if (ttl === undefined || ttl <= 0) return false;
    ttl = Math.min(ttl, this.options.maxTtlSec);
    const cost = message.length + ENTRY_OVERHEAD + layout.offsets.length * 8; // as costOf() counts it once stored
    if (cost > this.options.maxBytes) return false;
    const hash = keyHash(question, bits);
    if (!this.#admits(hash, cost)) return false;
    const wire = message.toString('latin1');
    const old = this.#entries.get(hash);
    if (old) this.#delete(old);
    const e: Entry = {
      hash,
      bits,
      wire,
      // A copy of exactly their number (ttlLayout's array grew by push, with room to spare).
      ttlOffsets: layout.offsets.slice(),
      storedAt: now,
      ttlSec: ttl,
      questionLength: question.length,
      laidOut: read !== null,
      rcode,
      opt: read?.opt ? sharedOpt(read.opt) : undefined,
      optStart: read?.optStart ?? -1,
      optEnd: read?.optEnd ?? -1,
      additionalStart: read?.additionalStart ?? -1,
      hits: old && answers(old, question, bits) ? old.hits : 0,
      prefetching: false,
      older: null,
      newer: null,
    };
    this.#entries.set(hash, e);
    this.#append(e);
    this.#bytes += cost;
    while (this.#bytes > this.options.maxBytes && this.#oldest) this.#delete(this.#oldest);
    return true;
  }

  /**
   * A copy of the stored message to serve now: every TTL lowered by the
   * entry's age (RFC 1035 §7.3 / RFC 2308 §5), or STALE_TTL_SEC when stale;
   * the question section replaced by the asker's own bytes (same name, maybe
   * another case: RFC 4343; 0x20-randomising clients check it).
   */
  materialize(lookup: CacheLookup, questionBytes: Buffer, now = Date.now()): Buffer {
    const e = lookup.entry as Entry;
    const out = Buffer.from(e.wire, 'latin1');
    const elapsed = Math.floor((now - e.storedAt) / 1000);
    for (let i = 0; i < e.ttlOffsets.length; i++) {
      const at = e.ttlOffsets[i] as number;
      out.writeUInt32BE(lookup.stale ? STALE_TTL_SEC : Math.max(0, out.readUInt32BE(at) - elapsed), at);
    }
    if (e.questionLength === questionBytes.length) copySmall(questionBytes, out, 12);
    return out;
  }

  /**
   * The answer to serve now, as readUpstreamAnswer would have read it
   * (materialize's copy, and what the store-time read found); null when
   * the entry was stored without that read: the caller reads the copy.
   */
  answer(lookup: CacheLookup, questionBytes: Buffer, now = Date.now()): UpstreamAnswer | null {
    const e = lookup.entry as Entry;
    if (!e.laidOut) return null;
    const raw = this.materialize(lookup, questionBytes, now);
    // Same shape as readUpstreamAnswer's (one hidden class on the engine's path). A stored answer is never truncated (set refuses TC) and carries no keepalive of its own.
    return { id: raw.readUInt16BE(0), rcode: e.rcode, truncated: false, keepaliveMs: undefined, opt: e.opt, optStart: e.optStart, optEnd: e.optEnd, additionalStart: e.additionalStart, raw };
  }

  /**
   * Whether a new entry under `hash` may take its place: always when it
   * fits, or replaces the entry under that hash; otherwise (admission by
   * frequency) only if its key was asked more often lately than the entry
   * it would evict first.
   */
  #admits(hash: number, cost: number): boolean {
    if (!this.#sketch || this.#bytes + cost <= this.options.maxBytes || this.#entries.has(hash)) return true;
    const victim = this.#oldest;
    if (!victim) return true;
    return this.#sketch.frequency(hash) > this.#sketch.frequency(victim.hash);
  }

  #append(e: Entry): void {
    e.older = this.#newest;
    e.newer = null;
    if (this.#newest) this.#newest.newer = e;
    else this.#oldest = e;
    this.#newest = e;
  }

  #unlink(e: Entry): void {
    if (e.older) e.older.newer = e.newer;
    else this.#oldest = e.newer;
    if (e.newer) e.newer.older = e.older;
    else this.#newest = e.older;
    e.older = null;
    e.newer = null;
  }

  #delete(e: Entry): void {
    if (this.#entries.get(e.hash) === e) {
      this.#entries.delete(e.hash);
      this.#unlink(e);
      this.#bytes -= costOf(e);
    }
  }
}

/** OPT descriptions by their three fields: a handful exist, so every entry shares one. */
const opts = new Map<number, AnswerOpt>();

function sharedOpt(opt: AnswerOpt): AnswerOpt {
  const key = (opt.flags << 9) | (opt.extendedRcode << 1) | (opt.endToEndOptions ? 1 : 0);
  let shared = opts.get(key);
  if (!shared) {
    shared = { extendedRcode: opt.extendedRcode, flags: opt.flags, endToEndOptions: opt.endToEndOptions };
    opts.set(key, shared);
  }
  return shared;
}

/** What an entry counts against maxBytes: its message, its TTL offsets, ENTRY_OVERHEAD. */
function costOf(e: Entry): number {
  return e.wire.length + ENTRY_OVERHEAD + e.ttlOffsets.length * 8;
}

/** The question of `message` equals `question`, letters compared without case (RFC 4343). */
function sameQuestion(message: Buffer, question: Buffer): boolean {
  for (let i = 0; i < question.length; i++) {
    if (foldAscii(message[12 + i] as number) !== foldAscii(question[i] as number)) return false;
  }
  return true;
}

/** The same for a stored message (a latin1 string). */
function sameStoredQuestion(wire: string, question: Buffer): boolean {
  for (let i = 0; i < question.length; i++) {
    if (foldAscii(wire.charCodeAt(12 + i)) !== foldAscii(question[i] as number)) return false;
  }
  return true;
}

/** Whether `e` is the answer to `question` with key `bits` (and not a hash collision's). */
function answers(e: Entry, question: Buffer, bits: number): boolean {
  return e.bits === bits && e.questionLength === question.length && sameStoredQuestion(e.wire, question);
}
