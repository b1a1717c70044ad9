/** Small order statistics for benchmark samples. */

/** Nearest-rank percentile (p in 0..100) of an ascending sample; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? Number.NaN;
}

/** Median of the finite values (mean of the middle two for an even count); NaN when none. */
export function median(values: readonly number[]): number {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const mid = v.length >> 1;
  return v.length % 2 === 1 ? (v[mid] ?? Number.NaN) : ((v[mid - 1] ?? 0) + (v[mid] ?? 0)) / 2;
}

export function min(values: readonly number[]): number {
  const v = values.filter(Number.isFinite);
  return v.length ? Math.min(...v) : Number.NaN;
}

export function max(values: readonly number[]): number {
  const v = values.filter(Number.isFinite);
  return v.length ? Math.max(...v) : Number.NaN;
}
