import { describe, expect, it } from 'vitest';
import { hitGauges } from './gauges.js';

const hit = { sinceStart: 0.996, last5m: 0.98 };

describe('hitGauges', () => {
  it('shows both shares while private', () => {
    const [all, recent] = hitGauges(hit, 'private');
    expect([all.value, recent.value]).toEqual([0.996, 0.98]);
    expect(all.outage || recent.outage).toBe(false);
  });

  it('says there is no connection during an outage instead of the last share', () => {
    for (const state of ['blocked', 'degraded'] as const) {
      const [all, recent] = hitGauges(hit, state);
      expect(recent.value).toBeNull();
      expect(recent.empty).toBe('no connection');
      expect(recent.caption).toMatch(/can’t be reached/);
      expect(all.outage).toBe(true);
      expect(all.caption).toMatch(/before it became unreachable/);
    }
  });

  it('says no queries yet before any', () => {
    const [all, recent] = hitGauges(undefined, undefined);
    expect([all.value, recent.value, recent.empty]).toEqual([null, null, 'no queries yet']);
  });

  it('off or paused, never claims protection: neutral, and says this machine\'s lookups don\'t go through dotstub', () => {
    for (const state of ['off', 'paused'] as const) {
      const [all, recent] = hitGauges(hit, state);
      expect(all.notCarrying && recent.notCarrying).toBe(true);
      expect(all.outage || recent.outage).toBe(false);
      expect(all.caption).toMatch(new RegExp(`^Private DNS is ${state}: `));
      expect(recent.caption).toBe(`Private DNS is ${state}: this machine’s lookups don’t go through dotstub`);
    }
  });
});
