import { describe, expect, it } from 'vitest';
import { barShare, latencyScale } from './latency-scale.js';

describe('latency bar scale', () => {
  it('rounds the slowest median up to 1, 2 or 5 × a power of ten, and says it', () => {
    expect(latencyScale([12, 31, null])).toEqual({ maxMs: 50, label: '50 ms' });
    expect(latencyScale([0.4])).toEqual({ maxMs: 1, label: '1 ms' });
    expect(latencyScale([100])).toEqual({ maxMs: 100, label: '100 ms' });
    expect(latencyScale([101])).toEqual({ maxMs: 200, label: '200 ms' });
    expect(latencyScale([1500])).toEqual({ maxMs: 2000, label: '2 s' });
    expect(latencyScale([null, null])).toBeNull();
    expect(latencyScale([])).toBeNull();
  });

  it('a bar is its median over the scale; a resolver with no answers has none', () => {
    const s = latencyScale([12, 31]);
    expect(barShare(25, s)).toBe(0.5);
    expect(barShare(null, s)).toBe(0);
    expect(barShare(5, null)).toBe(0);
    expect(barShare(80, s)).toBe(1);
  });
});
