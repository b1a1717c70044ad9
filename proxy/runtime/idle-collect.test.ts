/**
 * The idle collector's policy, on a clock the test drives: one collection
 * once the proxy has gone quiet after work, none while queries keep coming,
 * none again until there was new work. (What it gives back is measured by
 * bench/probe/mem.sh, not here.)
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, onTestFinished, test, vi } from 'vitest';
import { IdleCollector } from './idle-collect.js';
import { PROXY_NODE_FLAGS } from './node-flags.js';

const collectors: IdleCollector[] = [];
afterEach(() => {
  for (const c of collectors.splice(0)) c.close();
});

function lab(): { now: number; work: number; gcs: number; collector: IdleCollector; at: (ms: number) => void } {
  const s = {
    now: 0,
    work: 0,
    gcs: 0,
    collector: undefined as unknown as IdleCollector,
    /** Ticks every second up to `ms`. */
    at(ms: number): void {
      while (s.now < ms) {
        s.now = Math.min(ms, s.now + 1000);
        s.collector.tick();
      }
    },
  };
  s.collector = new IdleCollector({ activity: () => s.work, gc: () => s.gcs++, now: () => s.now });
  collectors.push(s.collector);
  return s;
}

describe('IdleCollector', () => {
  test('collects once after start-up, once the process has been quiet for 6 s, and not again while nothing happens', () => {
    const s = lab();
    s.at(5_000);
    expect(s.gcs).toBe(0);
    s.at(7_000);
    expect(s.gcs).toBe(1);
    s.at(600_000);
    expect(s.gcs).toBe(1);
  });

  test('never collects while queries keep coming, and collects once they stop', () => {
    const s = lab();
    s.at(40_000); // the start-up collection
    expect(s.gcs).toBe(1);
    for (let t = 41_000; t <= 200_000; t += 1000) {
      s.work += 20; // 20 queries a second
      s.at(t);
    }
    expect(s.gcs).toBe(1);
    s.at(210_000);
    expect(s.gcs).toBe(2);
  });

  test('bursts closer together than 30 s share one collection', () => {
    const s = lab();
    s.at(7_000);
    expect(s.gcs).toBe(1);
    s.work += 1000; // a burst at 8 s
    s.at(20_000);
    expect(s.gcs).toBe(1); // quiet, but within 30 s of the last collection
    s.at(38_000);
    expect(s.gcs).toBe(2);
  });

  test('clean, it holds no timer while the proxy can wake it; the next message starts the ticks again, and the quiet after it brings one collection', () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    let wake: (() => void) | undefined;
    let work = 0;
    let gcs = 0;
    const c = new IdleCollector({ activity: () => work, gc: () => gcs++, wake: (fn) => (wake = fn) });
    collectors.push(c);
    expect(c.ticking).toBe(true); // start-up counts as work
    vi.advanceTimersByTime(10_000);
    expect(gcs).toBe(1);
    // Clean: no timer at all, however long it stays quiet (the old collector woke every 10 s).
    expect(c.ticking).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(600_000);
    expect(gcs).toBe(1);
    // A burst of queries: the first message wakes it.
    expect(wake).toBeTypeOf('function');
    wake?.();
    work += 500;
    expect(c.ticking).toBe(true);
    vi.advanceTimersByTime(10_000);
    expect(gcs).toBe(2);
    expect(c.ticking).toBe(false);
  });

  test("work its activity count doesn't see (the start's warm-up) brings one collection once quiet, as queries do", () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    let gcs = 0;
    const c = new IdleCollector({ activity: () => 0, gc: () => gcs++, wake: () => undefined });
    collectors.push(c);
    vi.advanceTimersByTime(40_000);
    expect(gcs).toBe(1); // start-up's
    expect(c.ticking).toBe(false);
    c.worked();
    expect(c.ticking).toBe(true);
    vi.advanceTimersByTime(5_000);
    expect(gcs).toBe(1);
    vi.advanceTimersByTime(5_000);
    expect(gcs).toBe(2);
    expect(c.ticking).toBe(false);
  });

  test('without a gc function it does nothing and holds no timer', () => {
    const c = new IdleCollector({ activity: () => 0, gc: undefined, now: () => 1e9 });
    collectors.push(c);
    c.tick();
    expect(c.collections).toBe(0);
    expect(c.ticking).toBe(false);
    // The start's warm-up said it worked: still no timer (it ticked every 2 s forever before, waking an idle proxy).
    c.worked();
    expect(c.ticking).toBe(false);
  });

  test('the proxy flags expose gc, so the dotstub command has a collector to call', () => {
    const out = execFileSync(process.execPath, [...PROXY_NODE_FLAGS, '-e', 'process.stdout.write(typeof globalThis.gc)'], { encoding: 'utf8', timeout: 30_000 });
    expect(out).toBe('function');
  });
});
