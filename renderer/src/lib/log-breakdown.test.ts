import { describe, expect, it } from 'vitest';
import { breakdown } from './log-breakdown.js';
import { record } from './fixtures.test-helpers.js';

const now = 1_000_000;

describe('breakdown', () => {
  const records = [
    record({ name: 'a.test', startedAt: now - 10_000 }),
    record({ name: 'a.test', startedAt: now - 9_000 }),
    record({ name: 'b.test', startedAt: now - 8_000, rcode: 'NXDOMAIN' }),
    record({ name: 'c.test', startedAt: now - 7_000, rcode: 'SERVFAIL' }),
    record({ name: null, startedAt: now - 6_000, rcode: 'SERVFAIL' }),
    record({ name: 'old.test', startedAt: now - 120_000 }),
  ];

  it("leaves dotstub's own checks out of the top names and the total", () => {
    const own = Array.from({ length: 20 }, (_, i) => record({ name: 'liveness.dotstub.resolver.arpa', source: 'local', internal: true, startedAt: now - i * 100 }));
    const b = breakdown([...records, ...own], now, 60_000);
    expect(b.total).toBe(5);
    expect(b.names[0]?.key).toBe('a.test');
    expect(b.names.map((n) => n.key)).not.toContain('liveness.dotstub.resolver.arpa');
  });

  it('ranks names and counts response codes over the window', () => {
    const b = breakdown(records, now, 60_000);
    expect(b.total).toBe(5);
    expect(b.from).toBe(now - 10_000);
    expect(b.names[0]).toEqual({ key: 'a.test', count: 2, share: 0.4 });
    expect(b.names.map((n) => n.key)).not.toContain('old.test');
    expect(b.rcodes).toEqual([
      { key: 'NOERROR', count: 2, share: 0.4 },
      { key: 'SERVFAIL', count: 2, share: 0.4 },
      { key: 'NXDOMAIN', count: 1, share: 0.2 },
    ]);
  });

  it('failed names exclude NXDOMAIN, which is an answer; unrecorded names are said so', () => {
    expect(breakdown(records, now, 60_000).failed.map((f) => f.key)).toEqual(['(name not recorded)', 'c.test']);
  });

  it('a wider window takes in older records; the top is bounded', () => {
    expect(breakdown(records, now, Infinity).total).toBe(6);
    expect(breakdown(records, now, Infinity, 2).names).toHaveLength(2);
    expect(breakdown([], now, 60_000)).toEqual({ total: 0, from: null, names: [], failed: [], rcodes: [] });
  });
});
