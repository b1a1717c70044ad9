/** Percentiles and histogram bins for latency charts. Pure, allocation-light. */

/** Nearest-rank percentile (p in 0…100) of values sorted ascending; null when empty. */
export function percentileSorted(sorted: ArrayLike<number>, p: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  if (p <= 0) return sorted[0] ?? null;
  if (p >= 100) return sorted[n - 1] ?? null;
  const rank = Math.ceil((p / 100) * n);
  return sorted[Math.min(n, Math.max(1, rank)) - 1] ?? null;
}

/** Percentiles of unsorted values (copied, not mutated). */
export function percentiles(values: ArrayLike<number>, ps: readonly number[]): (number | null)[] {
  const sorted = Float64Array.from(values as ArrayLike<number>).sort();
  return ps.map((p) => percentileSorted(sorted, p));
}

export function median(values: ArrayLike<number>): number | null {
  return percentiles(values, [50])[0] ?? null;
}

export interface Histogram {
  /** Lower edge of each bin, ms. */
  readonly edges: number[];
  /** Upper edge of each bin, ms. */
  readonly uppers: number[];
  readonly counts: number[];
  readonly total: number;
}

/**
 * Latency histogram over logarithmic bins: DoT latencies span 0.1 ms (an
 * open loopback connection) to seconds (a timed-out handshake), so linear
 * bins would squash everything interesting into the first one.
 * `binsPerDecade` bins per ×10, from `minMs` to `maxMs`; values outside are
 * clamped into the first/last bin.
 */
export function logHistogram(valuesMs: ArrayLike<number>, minMs = 0.05, maxMs = 10_000, binsPerDecade = 6): Histogram {
  const lo = Math.log10(minMs);
  const decades = Math.log10(maxMs) - lo;
  const nBins = Math.max(1, Math.ceil(decades * binsPerDecade));
  const counts = new Array<number>(nBins).fill(0);
  const edges: number[] = [];
  const uppers: number[] = [];
  for (let i = 0; i < nBins; i++) {
    edges.push(10 ** (lo + i / binsPerDecade));
    uppers.push(10 ** (lo + (i + 1) / binsPerDecade));
  }
  let total = 0;
  for (let i = 0; i < valuesMs.length; i++) {
    const v = valuesMs[i] as number;
    if (!Number.isFinite(v)) continue;
    let b = v <= minMs ? 0 : Math.floor((Math.log10(v) - lo) * binsPerDecade);
    if (b >= nBins) b = nBins - 1;
    if (b < 0) b = 0;
    counts[b]!++;
    total++;
  }
  return { edges, uppers, counts, total };
}

/** Trims empty bins at both ends (keeping at least `keep` bins either side of the data). */
export function trimHistogram(h: Histogram, keep = 1): Histogram {
  let first = h.counts.findIndex((c) => c > 0);
  if (first < 0) return h;
  let last = h.counts.length - 1;
  while (last > first && h.counts[last] === 0) last--;
  first = Math.max(0, first - keep);
  last = Math.min(h.counts.length - 1, last + keep);
  return {
    edges: h.edges.slice(first, last + 1),
    uppers: h.uppers.slice(first, last + 1),
    counts: h.counts.slice(first, last + 1),
    total: h.total,
  };
}
