/**
 * The resolver list's latency bars: one scale for all of them, rounded up to
 * a number a person reads at a glance (1, 2 or 5 × a power of ten ms), and
 * said in words beside the list, so a bar's length means something.
 */
import { formatLatencyMs } from './format.js';

export interface LatencyScale {
  /** The full bar's length, ms. */
  readonly maxMs: number;
  /** The full bar in words: "50 ms", "2 s". */
  readonly label: string;
}

/** The smallest 1-2-5 step ≥ the largest median (at least 1 ms); null when no resolver has a median. */
export function latencyScale(medians: readonly (number | null)[]): LatencyScale | null {
  const known = medians.filter((m): m is number => m !== null && Number.isFinite(m) && m >= 0);
  if (known.length === 0) return null;
  const top = Math.max(1, ...known);
  let step = 10 ** Math.floor(Math.log10(top));
  for (const f of [1, 2, 5, 10]) {
    if (f * step >= top) {
      step *= f;
      break;
    }
  }
  return { maxMs: step, label: formatLatencyMs(step).replace(/\.0+ /, ' ') };
}

/** A bar's share of the full length, 0…1; 0 for a resolver with no answers. */
export function barShare(medianMs: number | null, scale: LatencyScale | null): number {
  if (medianMs === null || scale === null) return 0;
  return Math.min(1, Math.max(0, medianMs / scale.maxMs));
}
