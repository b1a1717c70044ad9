/** Metrics → the column arrays uPlot draws. Pure, so the shapes are tested without a canvas. */
import type { QueryRecord, SeriesPoint } from '../../../proxy/control/api-types.js';
import type { RingBuffer } from './ring.js';
import { logHistogram, percentileSorted, trimHistogram, type Histogram } from './stats.js';

export interface SeriesColumns {
  /** Seconds since the epoch (uPlot's time unit). */
  readonly t: number[];
  readonly qps: number[];
  readonly p50: (number | null)[];
  readonly p95: (number | null)[];
  /** Connection hits as a percentage of that second's queries sent to the resolver (cache answers need no connection); null when none went. */
  readonly reusePct: (number | null)[];
}

/**
 * The API's per-second points as columns. Idle seconds before the first
 * query are dropped (keeping at least `minPoints`), so a proxy that started
 * a minute ago doesn't draw four empty minutes.
 */
export function seriesColumns(series: readonly SeriesPoint[], minPoints = 60): SeriesColumns {
  const out: SeriesColumns = { t: [], qps: [], p50: [], p95: [], reusePct: [] };
  let start = series.findIndex((p) => p.queries > 0);
  if (start < 0) start = series.length;
  start = Math.max(0, Math.min(start, series.length - minPoints));
  for (const p of series.slice(start)) {
    out.t.push(p.t / 1000);
    out.qps.push(p.queries);
    out.p50.push(p.p50);
    out.p95.push(p.p95);
    out.reusePct.push(p.sent > 0 ? (100 * p.hits) / p.sent : null);
  }
  return out;
}

export interface LatencySummary {
  readonly histogram: Histogram;
  readonly count: number;
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
}

/** Latencies (ms) of the queries in the ring that started within `windowMs` of `now`, newest back. */
export function recentLatencies(ring: RingBuffer<QueryRecord>, now: number, windowMs: number): Float64Array {
  const since = now - windowMs;
  const out: number[] = [];
  for (let a = ring.total - 1; a >= ring.first; a--) {
    const r = ring.atAbsolute(a);
    if (!r || r.startedAt < since) break;
    if (r.source === 'upstream') out.push(r.latencyUs / 1000);
  }
  return Float64Array.from(out);
}

export function latencySummary(latenciesMs: Float64Array): LatencySummary {
  const sorted = latenciesMs.slice().sort();
  return {
    histogram: trimHistogram(logHistogram(sorted)),
    count: sorted.length,
    p50: percentileSorted(sorted, 50),
    p95: percentileSorted(sorted, 95),
    p99: percentileSorted(sorted, 99),
  };
}

/** "0.1", "1", "10 ms" style edge labels for a log axis. */
export function edgeLabel(ms: number): string {
  if (ms >= 1000) return `${+(ms / 1000).toPrecision(2)} s`;
  return `${+ms.toPrecision(2)} ms`;
}

/** A histogram bin as a range, for the hover legend: "0.5 ms – 1.1 ms"; the last bin is open-ended. */
export function binLabel(edges: readonly number[], i: number): string {
  const lo = edges[i];
  const hi = edges[i + 1];
  if (lo === undefined) return '—';
  return hi === undefined ? `≥ ${edgeLabel(lo)}` : `${edgeLabel(lo)} – ${edgeLabel(hi)}`;
}
