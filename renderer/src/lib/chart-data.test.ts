import { describe, expect, it } from 'vitest';
import type { QueryRecord } from '../../../proxy/control/api-types.js';
import { edgeLabel, latencySummary, recentLatencies, seriesColumns, binLabel } from './chart-data.js';
import { record } from './fixtures.test-helpers.js';
import { RingBuffer } from './ring.js';

describe('chart data', () => {
  it('series → uPlot columns, seconds and reuse % of the queries that went to the resolver', () => {
    const c = seriesColumns([
      { t: 1000, queries: 10, sent: 4, hits: 3, p50: 1, p95: 2 },
      { t: 2000, queries: 0, sent: 0, hits: 0, p50: null, p95: null },
      { t: 3000, queries: 5, sent: 0, hits: 0, p50: null, p95: null },
    ]);
    expect(c.t).toEqual([1, 2, 3]);
    // 6 of the first second's 10 came from the cache: reuse is 3 of the 4 sent, not 3 of 10.
    expect(c.reusePct).toEqual([75, null, null]);
    expect(c.p95).toEqual([2, null, null]);
  });

  it('drops idle seconds before the first query, keeping a minimum window', () => {
    const series = Array.from({ length: 300 }, (_, i) => ({ t: i * 1000, queries: i >= 280 ? 1 : 0, sent: 0, hits: 0, p50: null, p95: null }));
    expect(seriesColumns(series).t.length).toBe(60);
    expect(seriesColumns(series, 10).t[0]).toBe(280);
    expect(seriesColumns([], 60).t).toEqual([]);
  });

  it('recent latencies come from the window, upstream answers only', () => {
    const ring = new RingBuffer<QueryRecord>(10);
    ring.push(record({ startedAt: 0, latencyUs: 9000 }));
    ring.push(record({ startedAt: 9000, latencyUs: 2000 }));
    ring.push(record({ startedAt: 9500, latencyUs: 500_000, source: 'servfail' }));
    ring.push(record({ startedAt: 9900, latencyUs: 1000 }));
    expect([...recentLatencies(ring, 10_000, 5000)]).toEqual([1, 2]);
    const s = latencySummary(recentLatencies(ring, 10_000, 5000));
    expect(s.count).toBe(2);
    expect(s.p50).toBe(1);
    expect(s.histogram.total).toBe(2);
  });

  it('edge labels', () => {
    expect(edgeLabel(0.1)).toBe('0.1 ms');
    expect(edgeLabel(21.544)).toBe('22 ms');
    expect(edgeLabel(2154)).toBe('2.2 s');
  });
});

describe('binLabel', () => {
  it('names a bin by its range, the last one open-ended', () => {
    expect(binLabel([0.5, 1.1, 2300], 0)).toBe('0.5 ms – 1.1 ms');
    expect(binLabel([0.5, 1.1, 2300], 1)).toBe('1.1 ms – 2.3 s');
    expect(binLabel([0.5, 1.1, 2300], 2)).toBe('≥ 2.3 s');
    expect(binLabel([0.5], 4)).toBe('—');
  });
});
