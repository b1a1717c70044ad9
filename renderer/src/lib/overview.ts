/**
 * The overview's figures. Pure: the component renders these strings.
 */
import type { BlockedDay, LatencyStats, MetricsView, SeriesPoint } from '../../../proxy/control/api-types.js';
import { countOf, formatBytes, formatCount, formatLatencyMs, formatPercent } from './format.js';

/**
 * Queries in the last complete second. The series ends with the second
 * that is still filling (a fraction of a second's queries), so the point
 * before it is the newest whole one; null when there is none yet.
 */
export function lastCompleteSecond(series: readonly SeriesPoint[]): SeriesPoint | null {
  return series.length >= 2 ? (series[series.length - 2] as SeriesPoint) : null;
}

export function rateText(series: readonly SeriesPoint[]): string {
  const p = lastCompleteSecond(series);
  return p === null ? '—/s' : `${formatCount(p.queries)}/s`;
}

export interface LatencyTile {
  readonly value: string;
  readonly sub: string;
}

/**
 * p50 / p95 of the resolver's answers over the last minute. The API counts
 * only answers the resolver gave; with none (a resolver that can't be
 * reached, or blocked), the tile says so instead of showing a number.
 */
function unbroken(figure: string): string {
  return figure.replace(/ /g, '\u00a0');
}

export function latencyTile(stats: LatencyStats | undefined): LatencyTile {
  if (!stats || stats.count === 0 || stats.p50 === null) {
    return { value: 'no answers', sub: 'none from the resolver in the last minute' };
  }
  return {
    // Each figure keeps its unit (no-break space): a narrow tile wraps at the slash, never inside "1.42 ms".
    value: `${unbroken(formatLatencyMs(stats.p50))} / ${unbroken(formatLatencyMs(stats.p95))}`,
    sub: `last minute · ${countOf(stats.count, 'answer')} · p99 ${formatLatencyMs(stats.p99)}`,
  };
}

/**
 * The answer cache at a glance: the share of queries it answered without a
 * round trip, and what it holds. `metrics.cache` is null when the cache is
 * off; before the first query the ratio is unknown, not 0 %.
 */
export function cacheTile(cache: MetricsView['cache'] | undefined): LatencyTile {
  if (cache === undefined) return { value: '—', sub: 'waiting for figures' };
  if (cache === null) return { value: 'off', sub: 'every query goes to the resolver (--cache-size 0)' };
  const value = cache.hitRatio === null ? 'no queries' : `${formatPercent(cache.hitRatio, 0)} answered`;
  const stale = cache.stale > 0 ? ` · ${formatCount(cache.stale)} stale` : '';
  return { value, sub: `${countOf(cache.entries, 'answer')} · ${formatBytes(cache.bytes)} of ${formatBytes(cache.maxBytes)}${stale}` };
}

/** YYYY-MM-DD of `t` in this machine's local time (the proxy's days are its local days: the same machine). */
function localDay(t: number): string {
  const d = new Date(t);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** The Queries tile's line on blocked answers: "2 blocked today" (the link's words) and how, and the days before. */
export interface BlockedLine {
  readonly count: string;
  readonly how: string;
}

/**
 * Blocked answers today, and the days before: what the resolver refused
 * and said so, what it answered 0.0.0.0 (metrics.blocked, newest first,
 * days without one left out). Null until the figures come.
 */
export function blockedLine(days: readonly BlockedDay[] | undefined, now: number): BlockedLine | null {
  if (days === undefined) return null;
  const today = localDay(now);
  const t = days.find((d) => d.day === today);
  const count = t ? t.byResolver + t.nullAddress : 0;
  const parts = t ? [`${formatCount(t.byResolver)} by your resolver`, `${formatCount(t.nullAddress)} answered 0.0.0.0`] : [];
  const before = days.filter((d) => d.day !== today);
  const earlier = before.reduce((n, d) => n + d.byResolver + d.nullAddress, 0);
  if (before.length > 0) parts.push(`${formatCount(earlier)} in the ${before.length === 1 ? 'day' : `${before.length} days`} before`);
  return { count: count === 0 ? 'none blocked today' : `${formatCount(count)} blocked today`, how: parts.join(', ') };
}
