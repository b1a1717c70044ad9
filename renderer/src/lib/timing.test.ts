import { describe, expect, it } from 'vitest';
import { record } from './fixtures.test-helpers.js';
import { timingBreakdown } from './timing.js';

describe('timingBreakdown', () => {
  it('a reused connection: queue, upstream, proxy add up to the total', () => {
    const s = timingBreakdown(record({ latencyUs: 1000, queueUs: 100, upstreamUs: 800, handshake: null }));
    expect(s.map((x) => x.key)).toEqual(['queue', 'upstream', 'proxy']);
    expect(s.map((x) => x.us)).toEqual([100, 800, 100]);
    expect(s.reduce((a, x) => a + x.share, 0)).toBeCloseTo(1);
  });

  it('a new connection: the handshake comes out of the queue wait', () => {
    const s = timingBreakdown(record({ reused: false, handshake: 'full', latencyUs: 5000, queueUs: 3500, upstreamUs: 1200 }), 3);
    expect(s.find((x) => x.key === 'handshake')?.us).toBe(3000);
    expect(s.find((x) => x.key === 'queue')?.us).toBe(500);
    expect(s.find((x) => x.key === 'handshake')?.label).toMatch(/full/);
  });

  it('without the open event, the whole wait is the handshake', () => {
    const s = timingBreakdown(record({ handshake: 'resumed', latencyUs: 3000, queueUs: 2000, upstreamUs: 900 }));
    expect(s.find((x) => x.key === 'handshake')?.us).toBe(2000);
    expect(s.find((x) => x.key === 'handshake')?.label).toMatch(/resumed/);
  });

  it('never shows negative or over-long segments for inconsistent clocks', () => {
    const s = timingBreakdown(record({ latencyUs: 1000, queueUs: 700, upstreamUs: 900 }));
    for (const x of s) expect(x.us).toBeGreaterThanOrEqual(0);
    expect(s.reduce((a, x) => a + x.us, 0)).toBe(1000);
  });

  it('sent again after silence, the copy answering: the silence first, then the copy\'s own times', () => {
    const r = record({ latencyUs: 80_000, queueUs: 3_500, upstreamUs: 1_000, handshake: 'resumed', connectionId: 2, hedge: { connectionId: 2, afterMs: 72 }, earlierUs: 75_000 });
    const s = timingBreakdown(r, 3.3);
    expect(s.map((x) => x.key)).toEqual(['earlier', 'queue', 'handshake', 'upstream', 'proxy']);
    expect(s[0]?.label).toBe('First connection silent, sent again on #2');
    expect(s.map((x) => x.us)).toEqual([75_000, 200, 3_300, 1_000, 500]);
    expect(s.reduce((a, x) => a + x.us, 0)).toBe(80_000);
  });

  it('sent again but the first connection answered first: its own times, no silence segment', () => {
    const s = timingBreakdown(record({ latencyUs: 90_000, queueUs: 100, upstreamUs: 89_000, connectionId: 1, hedge: { connectionId: 2, afterMs: 60 } }));
    expect(s.map((x) => x.key)).toEqual(['queue', 'upstream', 'proxy']);
  });

  it('retried (or held while the resolver was unreachable): the time before the attempt that answered, not "in the proxy"', () => {
    const s = timingBreakdown(record({ latencyUs: 850_000, queueUs: 100, upstreamUs: 30_000, attempts: 2, earlierUs: 819_000 }));
    expect(s.map((x) => x.key)).toEqual(['earlier', 'queue', 'upstream', 'proxy']);
    expect(s[0]).toMatchObject({ label: 'Before the attempt that answered (2 attempts)', us: 819_000 });
    expect(s.find((x) => x.key === 'proxy')?.us).toBe(900);
  });
});
