/** The back-off on its own: waits that double to the cap, a reachable resolver ending them, one attempt a second meanwhile. */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { ConnectFailedError } from '../../errors.js';
import { Backoff } from './backoff.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('back-off', () => {
  test('each failure doubles the wait from 250 ms up to the cap; a connection ends it', () => {
    vi.useFakeTimers();
    const b = new Backoff(1_000);
    const err = new ConnectFailedError('refused');
    expect([1, 2, 3, 4].map(() => b.failed(err))).toEqual([
      { consecutive: 1, backoffMs: 250 },
      { consecutive: 2, backoffMs: 500 },
      { consecutive: 3, backoffMs: 1_000 },
      { consecutive: 4, backoffMs: 1_000 },
    ]);
    expect(b.backingOff()).toBe(true);
    expect(b.lastError).toBe(err);
    vi.advanceTimersByTime(1_000);
    expect(b.backingOff()).toBe(false);
    b.failed(err);
    b.connected();
    expect(b.backingOff()).toBe(false);
    expect(b.lastError).toBeUndefined();
    expect(b.failed(err).backoffMs).toBe(250);
  });

  test('an attempt may start at most once a second', () => {
    vi.useFakeTimers();
    const b = new Backoff(30_000);
    b.attempted();
    expect(b.untilNextAttempt()).toBe(1_000);
    vi.advanceTimersByTime(600);
    expect(b.untilNextAttempt()).toBe(400);
    vi.advanceTimersByTime(400);
    expect(b.untilNextAttempt()).toBeLessThanOrEqual(0);
  });

  test('one timer at a time: scheduling replaces it, reset cancels it', () => {
    vi.useFakeTimers();
    const b = new Backoff(30_000);
    const ran: string[] = [];
    b.schedule(() => ran.push('first'), 100);
    b.schedule(() => ran.push('second'), 200);
    vi.advanceTimersByTime(500);
    expect(ran).toEqual(['second']);
    b.failed(new ConnectFailedError('refused'));
    b.schedule(() => ran.push('third'), 100);
    b.reset();
    vi.advanceTimersByTime(500);
    expect(ran).toEqual(['second']);
    expect(b.backingOff()).toBe(false);
  });
});
