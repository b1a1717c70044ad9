/**
 * Aggregates QueryRecords into what the dashboard shows: the connection-hit
 * fraction (T-DNS's measure: share of queries that found an open
 * connection), latency percentiles per resolver over sliding windows, and a
 * per-second series for the last 5 minutes.
 *
 * Data structure: a ring of 300 one-second slots, each with counts and a
 * log-scale latency histogram per resolver. A slot is reset when its second
 * comes round again, so the window slides without per-query allocation, and
 * memory is bounded (300 × resolvers × 2 KiB) whatever the query rate.
 *
 * Histogram: HISTO_SUB bins per power of two of microseconds, so a reported
 * percentile is within ±2.2% of the true value (bin midpoint, geometric).
 *
 * Invariant: latencies are the resolver's, so only answers it gave count
 * (source 'upstream'). A SERVFAIL the proxy made up because the resolver
 * was unreachable (or blocked) says nothing about the resolver's speed: it
 * would give a dead resolver a fast median (issue 14, item 3).
 */
import type { LatencyStats, SeriesPoint } from './api-types.js';
import type { QueryRecord } from '../engine/query-record.js';

const WINDOW_SEC = 300;
const HISTO_SUB = 16;
/** 2^26 µs ≈ 67 s: longer latencies land in the last bin. */
const HISTO_BINS = 26 * HISTO_SUB;

function binOf(us: number): number {
  if (!(us >= 1)) return 0;
  return Math.min(HISTO_BINS - 1, Math.floor(Math.log2(us) * HISTO_SUB));
}

/** The bin's geometric midpoint, in ms. */
function binValueMs(bin: number): number {
  return 2 ** ((bin + 0.5) / HISTO_SUB) / 1000;
}

/** Percentile (0 < p ≤ 1) of a histogram with `count` samples; null when empty. */
export function percentile(h: Uint32Array, count: number, p: number): number | null {
  if (count === 0) return null;
  const rank = Math.max(1, Math.ceil(p * count));
  let seen = 0;
  for (let b = 0; b < h.length; b++) {
    seen += h[b] as number;
    if (seen >= rank) return Math.round(binValueMs(b) * 1000) / 1000;
  }
  return Math.round(binValueMs(h.length - 1) * 1000) / 1000;
}

interface Slot {
  /** Which second (ms since the epoch / 1000, floored) the slot holds now. */
  sec: number;
  /** Every query the proxy answered (the queries/s series), synthesised answers included. */
  queries: number;
  /** Queries sent to a resolver (reused !== null): the hit fraction's denominator. */
  sent: number;
  hits: number;
  /** Latencies of resolver answers, all resolvers, for the series. */
  all: Uint32Array;
  allCount: number;
  byResolver: Map<string, { h: Uint32Array; count: number }>;
}

export class MetricsWindow {
  readonly #slots: Slot[] = [];
  #sentSinceStart = 0;
  #hitsSinceStart = 0;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
    for (let i = 0; i < WINDOW_SEC; i++) {
      this.#slots.push({ sec: -1, queries: 0, sent: 0, hits: 0, all: new Uint32Array(HISTO_BINS), allCount: 0, byResolver: new Map() });
    }
  }

  #slot(sec: number): Slot {
    const slot = this.#slots[sec % WINDOW_SEC] as Slot;
    if (slot.sec !== sec) {
      slot.sec = sec;
      slot.queries = 0;
      slot.sent = 0;
      slot.hits = 0;
      slot.all.fill(0);
      slot.allCount = 0;
      for (const r of slot.byResolver.values()) {
        r.h.fill(0);
        r.count = 0;
      }
    }
    return slot;
  }

  record(r: QueryRecord): void {
    // dotstub's own checks (the liveness probe) are not the user's queries.
    if (r.internal) return;
    const slot = this.#slot(Math.floor(this.#now() / 1000));
    slot.queries++;
    if (r.reused !== null) {
      slot.sent++;
      this.#sentSinceStart++;
      if (r.reused) {
        slot.hits++;
        this.#hitsSinceStart++;
      }
    }
    if (r.source !== 'upstream') return;
    const bin = binOf(r.latencyUs);
    slot.all[bin] = (slot.all[bin] as number) + 1;
    slot.allCount++;
    if (r.resolverId !== null) {
      let per = slot.byResolver.get(r.resolverId);
      if (!per) {
        per = { h: new Uint32Array(HISTO_BINS), count: 0 };
        slot.byResolver.set(r.resolverId, per);
      }
      per.h[bin] = (per.h[bin] as number) + 1;
      per.count++;
    }
  }

  /** Slots within the last `seconds` (the current, partial second included). */
  *#recent(seconds: number): Generator<Slot> {
    const nowSec = Math.floor(this.#now() / 1000);
    for (const s of this.#slots) if (s.sec > nowSec - seconds && s.sec <= nowSec) yield s;
  }

  hitFraction(): { sinceStart: number | null; last5m: number | null } {
    let sent = 0;
    let hits = 0;
    for (const s of this.#recent(WINDOW_SEC)) {
      sent += s.sent;
      hits += s.hits;
    }
    return {
      sinceStart: this.#sentSinceStart === 0 ? null : this.#hitsSinceStart / this.#sentSinceStart,
      last5m: sent === 0 ? null : hits / sent,
    };
  }

  #latency(seconds: number, resolverId: string): LatencyStats {
    const merged = new Uint32Array(HISTO_BINS);
    let count = 0;
    for (const s of this.#recent(seconds)) {
      const per = s.byResolver.get(resolverId);
      if (!per || per.count === 0) continue;
      count += per.count;
      for (let b = 0; b < HISTO_BINS; b++) merged[b] = (merged[b] as number) + (per.h[b] as number);
    }
    return { count, p50: percentile(merged, count, 0.5), p95: percentile(merged, count, 0.95), p99: percentile(merged, count, 0.99) };
  }

  /** Per resolver that answered in the last 5 minutes: percentiles over 1 and 5 minutes. */
  latency(): Record<string, { last1m: LatencyStats; last5m: LatencyStats }> {
    const ids = new Set<string>();
    for (const s of this.#recent(WINDOW_SEC)) for (const [id, per] of s.byResolver) if (per.count > 0) ids.add(id);
    const out: Record<string, { last1m: LatencyStats; last5m: LatencyStats }> = {};
    for (const id of ids) out[id] = { last1m: this.#latency(60, id), last5m: this.#latency(WINDOW_SEC, id) };
    return out;
  }

  /** Median over 5 minutes of the resolver's answers; null when it gave none. */
  medianMs(resolverId: string): number | null {
    return this.#latency(WINDOW_SEC, resolverId).p50;
  }

  /** One point per second, oldest first, the current second last; empty seconds have zero queries. */
  series(): SeriesPoint[] {
    const nowSec = Math.floor(this.#now() / 1000);
    const out: SeriesPoint[] = [];
    for (let sec = nowSec - WINDOW_SEC + 1; sec <= nowSec; sec++) {
      const s = this.#slots[sec % WINDOW_SEC] as Slot;
      if (s.sec !== sec) out.push({ t: sec * 1000, queries: 0, sent: 0, hits: 0, p50: null, p95: null });
      else out.push({ t: sec * 1000, queries: s.queries, sent: s.sent, hits: s.hits, p50: percentile(s.all, s.allCount, 0.5), p95: percentile(s.all, s.allCount, 0.95) });
    }
    return out;
  }
}
