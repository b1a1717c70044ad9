import { describe, expect, it } from 'vitest';
import { logHistogram, median, percentiles, percentileSorted, trimHistogram } from './stats.js';

describe('percentiles', () => {
  it('nearest rank', () => {
    const v = [5, 1, 4, 2, 3, 6, 7, 8, 9, 10];
    expect(percentiles(v, [50, 95, 99, 100, 0])).toEqual([5, 10, 10, 10, 1]);
    expect(median([3, 1, 2])).toBe(2);
    expect(percentileSorted([], 50)).toBeNull();
  });

  it('does not mutate its input', () => {
    const v = [3, 1, 2];
    percentiles(v, [50]);
    expect(v).toEqual([3, 1, 2]);
  });
});

describe('logHistogram', () => {
  it('puts each value in a log bin and clamps the ends', () => {
    const h = logHistogram([0.01, 0.5, 0.5, 5, 50_000], 0.1, 1000, 1);
    expect(h.counts.length).toBe(4);
    expect(h.counts).toEqual([3, 1, 0, 1]);
    expect(h.total).toBe(5);
    expect(h.edges[0]).toBeCloseTo(0.1);
    expect(h.uppers[3]).toBeCloseTo(1000);
  });

  it('trims empty bins at both ends', () => {
    const h = trimHistogram(logHistogram([1.5, 2, 20], 0.1, 1000, 1), 0);
    expect(h.counts).toEqual([2, 1]);
    expect(h.edges[0]).toBeCloseTo(1);
  });

  it('ignores non-finite values', () => {
    expect(logHistogram([Number.NaN, Infinity, 1]).total).toBe(1);
  });
});
