/**
 * The answer cache as an Upstream that wraps another (routedns's cache.go is
 * the model): `Cache(DoT(quad9))`. Sits between the engine and the
 * resolver's upstream.
 *
 *   resolve(req) ─► key (question, DO, CD, AD) ──────────┬─ fresh ─► copy, TTLs lowered ─► done (no round trip)
 *                                                         │           └─ popular and in its last 10 % ─► refresh in the background
 *                                                         ├─ stale ─► ask upstream; its answer, or the stale copy (TTL 30)
 *                                                         │           if it fails or takes longer than STALE_AFTER_MS (RFC 8767)
 *                                                         └─ miss ──► ask upstream ─► store if cacheable ─► done
 *
 * Invariants: `done` is called exactly once per request; a cached answer is
 * served only for the same question and the same DO/CD/AD bits; only answers
 * from the wrapped upstream (authenticated, encrypted) are stored — the
 * cache never sees a synthesised SERVFAIL.
 */
import { readUpstreamAnswer, type AnswerLayout, type UpstreamAnswer } from '../dns/upstream-answer.js';
import { upstreamQueryBits } from '../dns/upstream-query.js';
import type { DotstubError } from '../errors.js';
import { newTrace, type Upstream, type UpstreamCallback, type UpstreamRequest, type UpstreamTrace } from '../upstream/upstream.js';
import { KEY_AUTHENTIC_DATA, KEY_CHECKING_DISABLED, KEY_DNSSEC_OK, type AnswerCache, type CacheLookup } from './answer-cache.js';

/** OPT record: owner (root, 1) + TYPE (2) + CLASS (2) + TTL (4), then RDLENGTH (2) and the options. */
const OPT_FIXED = 9;

/**
 * The answer as the cache keeps it: without the OPT's options when they are
 * only the TLS hop's (padding, keepalive), which the client never gets
 * anyway (encodeClientAnswer strips them). A padded answer is a 468-octet
 * block (RFC 8467); unpadded it is ~60 octets, so the same 4 MiB hold
 * twice as many answers (issue 23). Options the client must get (RFC 8914
 * errors, …) are kept, and so is an answer whose OPT isn't last.
 */
export function storedForm(answer: UpstreamAnswer): Buffer {
  const { raw, opt, optStart, optEnd } = answer;
  if (!opt || opt.endToEndOptions || optEnd !== raw.length || raw[optStart] !== 0 || optEnd - optStart <= OPT_FIXED + 2) return raw;
  const out = Buffer.allocUnsafe(optStart + OPT_FIXED + 2);
  raw.copy(out, 0, 0, optStart + OPT_FIXED);
  out.writeUInt16BE(0, optStart + OPT_FIXED);
  return out;
}

/** RFC 8767 §5 suggests 1.8 s before answering stale; our upstream deadline is 2.5 s at most. */
const STALE_AFTER_MS = 1_500;
/** "The last 10 % of its TTL" (issue 11) and at least this many hits: popular. */
const PREFETCH_FRACTION = 0.1;
const PREFETCH_MIN_HITS = 2;
const PREFETCH_MIN_TTL_SEC = 10;

/** What the cache counts; it is their only writer. */
export interface CacheCounters {
  cacheHits: number;
  cacheMisses: number;
  /** Expired answers served because the resolver failed or was slow (RFC 8767). */
  cacheStale: number;
  cachePrefetches: number;
}

export function newCacheCounters(): CacheCounters {
  return { cacheHits: 0, cacheMisses: 0, cacheStale: 0, cachePrefetches: 0 };
}

/** A miss on its way through the wrapped upstream: the context of the shared callback. */
interface Miss extends UpstreamRequest {
  readonly outer: UpstreamRequest;
  readonly done: UpstreamCallback<UpstreamRequest> | null;
  /** The key bits of the query (its question is `question.bytes`). */
  readonly bits: number;
  /** The cache generation when the question was asked: a flush since (resolver switch) means the answer isn't stored. */
  readonly generation: number;
  /** An expired entry to fall back on (RFC 8767), if any. */
  readonly stale: CacheLookup | undefined;
  timer: NodeJS.Timeout | undefined;
  settled: boolean;
}

/** The query's key bits: with its question octets, what the cache keys an answer by (no string built per query). */
function keyBits(req: UpstreamRequest): number {
  if (req.bits !== undefined) return req.bits;
  const bits = upstreamQueryBits(req.wire);
  return (bits.dnssecOk ? KEY_DNSSEC_OK : 0) | (bits.checkingDisabled ? KEY_CHECKING_DISABLED : 0) | (bits.authenticData ? KEY_AUTHENTIC_DATA : 0);
}

export class CachingUpstream implements Upstream {
  readonly name: string;
  readonly #cache: AnswerCache;
  readonly #inner: Upstream;
  readonly #counters: CacheCounters;

  constructor(cache: AnswerCache, inner: Upstream, counters: CacheCounters = newCacheCounters()) {
    this.#cache = cache;
    this.#inner = inner;
    this.#counters = counters;
    this.name = `Cache(${inner.name})`;
  }

  resolve<R extends UpstreamRequest>(req: R, done: UpstreamCallback<R>): void {
    const bits = keyBits(req);
    // One clock read per lookup (a runtime call each: ~1.5 % of a cache hit's CPU when read twice more), none when the engine read it on arrival.
    const now = req.askedAt ?? Date.now();
    const found = this.#cache.get(req.question.bytes, bits, now);
    if (found && !found.stale) {
      const answer = this.#answerFrom(found, req, now);
      if (answer) {
        this.#counters.cacheHits++;
        req.trace.cache = 'hit';
        this.#maybePrefetch(found, req, bits);
        done(req, null, answer);
        return;
      }
    }
    this.#counters.cacheMisses++;
    const miss: Miss = {
      wire: req.wire,
      question: req.question,
      trace: req.trace,
      outer: req,
      done: done as UpstreamCallback<UpstreamRequest>,
      bits,
      generation: this.#cache.generation,
      stale: found?.stale ? found : undefined,
      timer: undefined,
      settled: false,
    };
    if (miss.stale) miss.timer = setTimeout(() => this.#serveStale(miss), STALE_AFTER_MS).unref();
    this.#inner.resolve(miss, this.#onInner);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  destroy(): void {
    this.#inner.destroy();
  }

  readonly #onInner = (miss: Miss, err: DotstubError | null, answer: UpstreamAnswer | null): void => {
    clearTimeout(miss.timer);
    // The resolver's own SERVFAIL is a failure too: an expired answer serves better (RFC 8767 §4).
    if (answer && answer.rcode === 2 && miss.stale && this.#serveStale(miss)) return;
    if (answer) {
      // The engine rewrites the answer's bytes in place (ID, OPT): store a copy first.
      // Never an answer obtained in cleartext (captive sign-in, degraded mode): the cache holds private answers only.
      if (!miss.trace.cleartext) this.#store(miss, answer);
      if (!miss.settled && miss.done) {
        miss.settled = true;
        miss.done(miss.outer, null, answer);
      }
      return;
    }
    if (miss.settled || !miss.done) return;
    if (miss.stale && this.#serveStale(miss)) return;
    miss.settled = true;
    miss.done(miss.outer, err, null);
  };

  /** Answers `miss` from its expired entry; false if that can't be done (already answered, or the entry won't read). */
  #serveStale(miss: Miss): boolean {
    if (miss.settled || !miss.stale || !miss.done) return false;
    const answer = this.#answerFrom(miss.stale, miss.outer);
    if (!answer) return false;
    miss.settled = true;
    this.#counters.cacheStale++;
    miss.outer.trace.cache = 'stale';
    miss.done(miss.outer, null, answer);
    return true;
  }

  /**
   * Stores the answer in the form the cache keeps (storedForm), with the
   * layout its arrival's read found kept beside it, so a hit is a copy and a
   * patch, not another walk of every record (issue 32: the hit path at the
   * floor).
   */
  #store(miss: Miss, answer: UpstreamAnswer): void {
    const stored = storedForm(answer);
    // What the arrival's read found holds for the stored form, which differs from it only in the last record (the
    // OPT) having no options: not walked again (issue 32: a miss walked each answer three times).
    const { raw: _raw, ...read } = answer;
    const layout: AnswerLayout = stored === answer.raw ? read : { ...read, optEnd: stored.length, keepaliveMs: undefined };
    this.#cache.set(miss.question.bytes, miss.bits, stored, answer.rcode, miss.generation, undefined, layout);
  }

  #answerFrom(found: CacheLookup, req: UpstreamRequest, now = Date.now()): UpstreamAnswer | null {
    try {
      // The copy has the asker's question (same length: same offsets) and lower TTLs: nothing the store-time read found moved.
      return this.#cache.answer(found, req.question.bytes, now) ?? readUpstreamAnswer(this.#cache.materialize(found, req.question.bytes, now), req.question);
    } catch {
      return null;
    }
  }

  /** A popular answer in the last tenth of its TTL is refreshed in the background, so the next asker still gets a hit. */
  #maybePrefetch(found: CacheLookup, req: UpstreamRequest, bits: number): void {
    const e = found.entry;
    if (e.prefetching || e.hits < PREFETCH_MIN_HITS || e.ttlSec < PREFETCH_MIN_TTL_SEC) return;
    if (found.remainingSec > e.ttlSec * PREFETCH_FRACTION) return;
    e.prefetching = true;
    this.#counters.cachePrefetches++;
    const trace: UpstreamTrace = newTrace();
    const background: Miss = {
      wire: Buffer.from(req.wire),
      question: req.question,
      trace,
      outer: req,
      done: null,
      bits,
      generation: this.#cache.generation,
      stale: undefined,
      timer: undefined,
      settled: true,
    };
    this.#inner.resolve(background, (m, _err, answer) => {
      e.prefetching = false;
      if (answer && !m.trace.cleartext) this.#store(m, answer);
    });
  }
}
