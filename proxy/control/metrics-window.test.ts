import { describe, expect, test } from 'vitest';
import type { QueryRecord } from '../engine/query-record.js';
import { MetricsWindow, percentile } from './metrics-window.js';

function rec(latencyMs: number, resolverId: string | null = 'a', reused: boolean | null = true): QueryRecord {
  return {
    seq: 0, startedAt: 0, name: null, type: 'A', transport: 'udp', rcode: 'NOERROR', resolverId, connectionId: 1, reused,
    handshake: null, latencyUs: latencyMs * 1000, queueUs: 0, upstreamUs: 0, depth: 1, source: 'upstream', attempts: 1, truncated: false, error: null,
  };
}

describe('MetricsWindow', () => {
  test("dotstub's own checks are not in the series or the hit fraction", () => {
    const now = 2_000_000;
    const m = new MetricsWindow(() => now);
    m.record({ ...rec(1, null, null), source: 'local', internal: true });
    m.record({ ...rec(1, null, null), source: 'local', internal: true });
    m.record(rec(2));
    expect(m.series().reduce((n, p) => n + p.queries, 0)).toBe(1);
    expect(m.hitFraction().sinceStart).toBe(1);
  });

  test('percentiles within the histogram precision (±2.2%)', () => {
    let now = 1_000_000;
    const m = new MetricsWindow(() => now);
    for (let i = 1; i <= 1000; i++) m.record(rec(i / 10)); // 0.1 … 100 ms, uniform
    const l = m.latency().a?.last1m;
    expect(l?.count).toBe(1000);
    expect(Math.abs((l?.p50 ?? 0) - 50) / 50).toBeLessThan(0.023);
    expect(Math.abs((l?.p95 ?? 0) - 95) / 95).toBeLessThan(0.023);
    expect(Math.abs((l?.p99 ?? 0) - 99) / 99).toBeLessThan(0.023);
    now += 1000;
    expect(m.medianMs('a')).toBe(l?.p50);
    expect(m.medianMs('nobody')).toBeNull();
  });

  test('windows slide: 1 minute forgets first, 5 minutes later; since-start remembers', () => {
    let now = 5_000_000;
    const m = new MetricsWindow(() => now);
    for (let i = 0; i < 10; i++) m.record(rec(1, 'a', i < 8)); // 8 hits of 10
    m.record(rec(1, null, null)); // never sent: not in the hit fraction
    expect(m.hitFraction()).toEqual({ sinceStart: 0.8, last5m: 0.8 });
    now += 90_000;
    for (let i = 0; i < 10; i++) m.record(rec(5, 'a', true));
    expect(m.latency().a?.last1m.count).toBe(10);
    expect(m.latency().a?.last5m.count).toBe(20);
    expect(m.hitFraction().last5m).toBe(0.9);
    now += 250_000; // the first second fell out of the 5-minute window
    expect(m.latency().a?.last5m.count).toBe(10);
    expect(m.hitFraction()).toEqual({ sinceStart: 0.9, last5m: 1 });
    now += 400_000;
    expect(m.latency()).toEqual({});
    expect(m.hitFraction()).toEqual({ sinceStart: 0.9, last5m: null });
  });

  test('series: 300 one-second points ending now, empty seconds zero', () => {
    let now = 7_000_500;
    const m = new MetricsWindow(() => now);
    m.record(rec(2));
    m.record(rec(4, 'b', false));
    now += 2000;
    const s = m.series();
    expect(s).toHaveLength(300);
    expect(s[299]?.t).toBe(7_002_000);
    expect(s[297]).toMatchObject({ t: 7_000_000, queries: 2, hits: 1 });
    expect(s[298]).toEqual({ t: 7_001_000, queries: 0, sent: 0, hits: 0, p50: null, p95: null });
  });

  test('only the resolver\'s answers count for latency: a dead resolver has no median, not a fast one ', () => {
    let now = 9_000_000;
    const m = new MetricsWindow(() => now);
    // The resolver can't be reached: every query gets the proxy's SERVFAIL in ~0.1 ms.
    for (let i = 0; i < 50; i++) m.record({ ...rec(0.1, 'dead', false), rcode: 'SERVFAIL', source: 'servfail', error: 'connect_timeout' });
    expect(m.medianMs('dead')).toBeNull();
    expect(m.latency().dead).toBeUndefined();
    // Queries/s still counts them; the per-second percentiles don't.
    now += 1000;
    expect(m.series().at(-2)).toEqual({ t: 9_000_000, queries: 50, sent: 50, hits: 0, p50: null, p95: null });
    // A real answer, even a SERVFAIL from the resolver itself, counts.
    m.record({ ...rec(30, 'dead'), rcode: 'SERVFAIL' });
    m.record({ ...rec(0.1, 'dead'), rcode: 'FORMERR', source: 'error-reply' });
    expect(m.latency().dead?.last1m.count).toBe(1);
    expect(Math.abs((m.medianMs('dead') ?? 0) - 30) / 30).toBeLessThan(0.023);
  });

  test('percentile of an empty histogram is null', () => {
    expect(percentile(new Uint32Array(10), 0, 0.5)).toBeNull();
  });
});
