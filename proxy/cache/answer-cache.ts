/**
 * Answers kept as wire bytes (the web-performance study's recommendation):
 * each entry is the resolver's message plus where its TTLs are, so serving
 * one is a copy, a TTL patch and the engine's usual ID restore — no decode,
 * no re-encode.
 *
 * Invariants:
 * - Bounded in bytes: the least recently used entries go first (a Map in
 *   use order: get() moves an entry to the end).
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
 * - Stored bytes are the cache's own copy; a served answer is a fresh copy.
 * - `clear()` starts a new generation: an answer to a question asked before
 *   it (a resolver switched away from answering late) is refused by `set`,
 *   so nothing from before a flush is ever stored after it.
 */
import { ttlLayout } from '../dns/ttl.js';

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

/** FNV-1a over a key's UTF-16 code units: the sketch's hash (two independent-enough halves for its rows). */
function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
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

/** Bytes an entry costs beyond its message: the object, its key and TTL arrays, roughly. */
const ENTRY_OVERHEAD = 200;

interface Entry {
  readonly key: string;
  readonly wire: Buffer;
  readonly offsets: Uint32Array;
  /** The TTL at each offset when stored. */
  readonly ttls: Uint32Array;
  /** Date.now() when stored. */
  readonly storedAt: number;
  /** Seconds the entry is fresh. */
  readonly ttlSec: number;
  /** Length of the stored question section. */
  readonly questionLength: number;
  readonly cost: number;
  hits: number;
  prefetching: boolean;
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
  readonly #entries = new Map<string, Entry>();
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
    this.#bytes = 0;
    this.#generation++;
  }

  /** Finds `key`, fresh or (within the stale bound) stale; counts the hit and marks it recently used. */
  get(key: string, now = Date.now()): CacheLookup | undefined {
    this.#sketch?.increment(hashKey(key));
    const e = this.#entries.get(key);
    if (!e) return undefined;
    const age = (now - e.storedAt) / 1000;
    if (age >= e.ttlSec + this.options.staleMaxSec) {
      this.#delete(e);
      return undefined;
    }
    this.#entries.delete(key);
    this.#entries.set(key, e);
    e.hits++;
    const stale = age >= e.ttlSec;
    return { entry: e, stale, remainingSec: stale ? 0 : Math.floor(e.ttlSec - age) };
  }

  /**
   * Stores the resolver's answer (a whole message, no length prefix) if it
   * may be cached: positive answers for their smallest TTL, NXDOMAIN and
   * NODATA for the SOA's negative TTL, SERVFAIL for a few seconds; never a
   * truncated answer, other rcodes, TTL 0, or a message that doesn't walk;
   * never one whose question was asked before the last clear() (`askedIn`).
   * Returns whether it was stored.
   */
  set(key: string, message: Buffer, rcode: number, askedIn: number, now = Date.now()): boolean {
    if (askedIn !== this.#generation) return false;
    if (message.length < 12 || (message.readUInt16BE(2) & 0x0200) !== 0) return false;
    let layout;
    try {
      layout = ttlLayout(message);
    } catch {
      return false;
    }
    let ttl: number | undefined;
    if (rcode === RCODE_SERVFAIL) ttl = this.options.servfailTtlSec;
    else if (rcode === RCODE_NXDOMAIN || (rcode === RCODE_NOERROR && layout.answerCount === 0)) ttl = layout.negativeTtl;
    else if (rcode === RCODE_NOERROR) ttl = layout.minTtl;
    if (ttl === undefined || ttl <= 0) return false;
    ttl = Math.min(ttl, this.options.maxTtlSec);
    const cost = message.length + key.length + ENTRY_OVERHEAD + layout.offsets.length * 8;
    if (cost > this.options.maxBytes) return false;
    if (!this.#admits(key, cost)) return false;
    const offsets = Uint32Array.from(layout.offsets);
    const ttls = Uint32Array.from(layout.offsets, (o) => message.readUInt32BE(o));
    const old = this.#entries.get(key);
    if (old) this.#delete(old);
    const e: Entry = {
      key,
      wire: Buffer.from(message),
      offsets,
      ttls,
      storedAt: now,
      ttlSec: ttl,
      questionLength: layout.questionEnd - 12,
      cost,
      hits: old?.hits ?? 0,
      prefetching: false,
    };
    this.#entries.set(key, e);
    this.#bytes += cost;
    while (this.#bytes > this.options.maxBytes) {
      const oldest = this.#entries.values().next().value as Entry;
      this.#delete(oldest);
    }
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
    const out = Buffer.from(e.wire);
    const elapsed = Math.floor((now - e.storedAt) / 1000);
    for (let i = 0; i < e.offsets.length; i++) {
      const ttl = lookup.stale ? STALE_TTL_SEC : Math.max(0, (e.ttls[i] as number) - elapsed);
      out.writeUInt32BE(ttl, e.offsets[i] as number);
    }
    if (e.questionLength === questionBytes.length) questionBytes.copy(out, 12);
    return out;
  }

  /**
   * Whether a new entry for `key` may take its place: always when it fits,
   * or replaces an entry of its own key; otherwise (admission by frequency)
   * only if its key was asked more often lately than the entry it would
   * evict first.
   */
  #admits(key: string, cost: number): boolean {
    if (!this.#sketch || this.#bytes + cost <= this.options.maxBytes || this.#entries.has(key)) return true;
    const victim = this.#entries.values().next().value as Entry | undefined;
    if (!victim) return true;
    return this.#sketch.frequency(hashKey(key)) > this.#sketch.frequency(hashKey(victim.key));
  }

  #delete(e: Entry): void {
    if (this.#entries.get(e.key) === e) {
      this.#entries.delete(e.key);
      this.#bytes -= e.cost;
    }
  }
}
