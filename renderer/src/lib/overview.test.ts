import { describe, expect, it, test } from 'vitest';
import { blockedLine, cacheTile, lastCompleteSecond, latencyTile, rateText } from './overview.js';

const point = (t: number, queries: number) => ({ t, queries, sent: queries, hits: 0, p50: null, p95: null });

describe('overview figures', () => {
  it('"/s" is the last complete second, not the one still filling (issue 14, item 4)', () => {
    const series = [point(1000, 140), point(2000, 151), point(3000, 13)];
    expect(lastCompleteSecond(series)?.queries).toBe(151);
    expect(rateText(series)).toBe('151/s');
    expect(rateText([point(1000, 13)])).toBe('—/s');
    expect(rateText([])).toBe('—/s');
    expect(rateText([point(1000, 1234), point(2000, 5)])).toBe('1,234/s');
  });

  it('latency without answers says so instead of a number (issue 14, item 3)', () => {
    expect(latencyTile(undefined).value).toBe('no answers');
    expect(latencyTile({ count: 0, p50: null, p95: null, p99: null }).value).toBe('no answers');
    const t = latencyTile({ count: 1200, p50: 12.3, p95: 48, p99: 130 });
    expect(t.value).toBe('12.3\u00a0ms / 48.0\u00a0ms');
    expect(t.sub).toBe('last minute · 1,200 answers · p99 130 ms');
    expect(latencyTile({ count: 1, p50: 2, p95: 2, p99: 2 }).sub).toContain('1 answer ·');
  });
});

describe('the cache tile', () => {
  const base = { hits: 30, misses: 10, stale: 0, prefetches: 0, hitRatio: 0.75, entries: 12, bytes: 6 * 1024, maxBytes: 4 * 1024 * 1024 };
  test('says what share it answered and what it holds', () => {
    expect(cacheTile(base)).toEqual({ value: '75% answered', sub: '12 answers · 6.0 KiB of 4.0 MiB' });
    expect(cacheTile({ ...base, stale: 2 }).sub).toContain('2 stale');
  });
  test('off, unknown and empty are said, not shown as 0 %', () => {
    expect(cacheTile(null).value).toBe('off');
    expect(cacheTile(undefined).value).toBe('—');
    expect(cacheTile({ ...base, hits: 0, misses: 0, hitRatio: null }).value).toBe('no queries');
  });
});

describe('blocked answers on the Queries tile', () => {
  const now = new Date(2026, 11, 8, 15, 0).getTime();
  it('today’s count, how, and the days before', () => {
    const days = [
      { day: '2026-12-08', byResolver: 12, nullAddress: 3 },
      { day: '2026-12-06', byResolver: 1, nullAddress: 1 },
      { day: '2026-12-05', byResolver: 4, nullAddress: 0 },
    ];
    expect(blockedLine(days, now)).toEqual({ count: '15 blocked today', how: '12 by your resolver, 3 answered 0.0.0.0, 6 in the 2 days before' });
    expect(blockedLine([{ day: '2026-12-07', byResolver: 2, nullAddress: 0 }], now)).toEqual({ count: 'none blocked today', how: '2 in the day before' });
    expect(blockedLine([], now)).toEqual({ count: 'none blocked today', how: '' });
    expect(blockedLine(undefined, now)).toBeNull();
  });
});
