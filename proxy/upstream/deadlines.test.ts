/**
 * Per-query deadlines: the slots' single timer (no wake-up for a deadline
 * that was cleared) and the RTO-like estimate that picks each deadline.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { DeadlineSlots } from './deadlines.js';
import { RttEstimator } from './rtt.js';

afterEach(() => {
  vi.useRealTimers();
});

interface Item {
  readonly name: string;
  deadlineKey: number;
}

const item = (name: string): Item => ({ name, deadlineKey: -1 });

describe('deadline slots', () => {
  test('a deadline fires once, within 25 ms after it is due, and items expire in deadline order', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const expired: [string, number][] = [];
    const slots = new DeadlineSlots<Item>((i) => expired.push([i.name, performance.now()]));
    const t0 = performance.now();
    slots.arm(item('late'), t0 + 300);
    slots.arm(item('early'), t0 + 100);
    await vi.advanceTimersByTimeAsync(99);
    expect(expired).toEqual([]);
    await vi.advanceTimersByTimeAsync(400);
    expect(expired.map(([n]) => n)).toEqual(['early', 'late']);
    expect((expired[0]?.[1] ?? 0) - t0).toBeGreaterThanOrEqual(100);
    expect((expired[0]?.[1] ?? 0) - t0).toBeLessThanOrEqual(126);
    expect((expired[1]?.[1] ?? 0) - t0).toBeLessThanOrEqual(326);
    expect(slots.size).toBe(0);
    expect(slots.timerArmed).toBe(false);
  });

  test('when every deadline is cleared in time (a desktop\'s rate), the timer is not set per query, and after the last it runs out once and nothing is left', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] });
    const setTimeoutCalls = vi.spyOn(globalThis, 'setTimeout');
    const slots = new DeadlineSlots<Item>(() => {
      throw new Error('nothing should expire');
    });
    // 20 queries a second for a second, each answered 2 ms after it was sent.
    for (let i = 0; i < 20; i++) {
      const q = item(`q${i}`);
      slots.arm(q, performance.now() + 800);
      await vi.advanceTimersByTimeAsync(2);
      slots.clear(q);
      await vi.advanceTimersByTimeAsync(48);
    }
    // One timer for the first deadline; the next one set only once that ran out (at ~825 ms), not one per query.
    expect(setTimeoutCalls.mock.calls.length).toBeLessThanOrEqual(2);
    await vi.advanceTimersByTimeAsync(1000);
    expect(slots.timerArmed).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    expect(setTimeoutCalls.mock.calls.length).toBeLessThanOrEqual(2);
  });

  test('an answer read in the same turn of the event loop as the deadline timer clears it: no false expiry', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] });
    const expired: string[] = [];
    const slots = new DeadlineSlots<Item>((i) => expired.push(i.name));
    const q = item('answered-late');
    const t0 = performance.now();
    slots.arm(q, t0 + 100);
    // The answer is "read" in the same millisecond the slot's timer runs (I/O polled after timers).
    setTimeout(() => slots.clear(q), Math.ceil((t0 + 100) / 25) * 25 - t0);
    await vi.advanceTimersByTimeAsync(300);
    expect(expired).toEqual([]);
    expect(slots.timerArmed).toBe(false);
  });

  test('re-arming from the expiry callback (an extended deadline) schedules it again', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    let fired = 0;
    const slots = new DeadlineSlots<Item>((i) => {
      fired++;
      if (fired < 3) slots.arm(i, performance.now() + 200);
    });
    const q = item('slow');
    slots.arm(q, performance.now() + 200);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired).toBe(3);
    expect(slots.timerArmed).toBe(false);
  });
});

describe('the RTT estimate and the deadline it gives', () => {
  test('before any answer, the upper bound', () => {
    expect(new RttEstimator(400, 2500).timeoutMs()).toBe(2500);
  });

  test('loopback (sub-millisecond answers): TCP_RTO_MIN decides, about 400 ms (the pool floors it at 800 by default)', () => {
    const rtt = new RttEstimator(100, 2500);
    for (let i = 0; i < 50; i++) rtt.observe(0.3 + (i % 3) * 0.1);
    expect(rtt.timeoutMs()).toBeGreaterThanOrEqual(400);
    expect(rtt.timeoutMs()).toBeLessThan(410);
  });

  test('3G (150 ms ± 8): above the 755 ms TCP took to recover there, near 1 s', () => {
    const rtt = new RttEstimator(400, 2500);
    for (let i = 0; i < 200; i++) rtt.observe(150 + (i % 2 === 0 ? 8 : -8));
    const t = rtt.timeoutMs();
    expect(t).toBeGreaterThan(755 + 50);
    expect(t).toBeLessThan(1100);
  });

  test('a jittery path widens the deadline with its variance, within the bounds', () => {
    const rtt = new RttEstimator(400, 2500);
    for (let i = 0; i < 200; i++) rtt.observe(i % 2 === 0 ? 50 : 350);
    expect(rtt.timeoutMs()).toBeGreaterThan(1000);
    for (let i = 0; i < 200; i++) rtt.observe(i % 2 === 0 ? 100 : 2000);
    expect(rtt.timeoutMs()).toBe(2500);
  });
});
