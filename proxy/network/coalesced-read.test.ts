import { afterEach, expect, test, vi } from 'vitest';
import { CoalescedRead } from './coalesced-read.js';

/** A read that waits until the test lets it finish, counting starts. */
function gatedRead(): { read: () => Promise<void>; started: () => number; finish: () => void } {
  let started = 0;
  const gates: (() => void)[] = [];
  return {
    read: () => {
      started++;
      return new Promise<void>((resolve) => gates.push(resolve));
    },
    started: () => started,
    finish: () => gates.shift()?.(),
  };
}

afterEach(() => void vi.useRealTimers());

test('asks during a read coalesce into one more read, and every ask settles after a read that began after it', async () => {
  const g = gatedRead();
  const reads = new CoalescedRead(g.read);
  let settled = 0;
  const first = reads.run().then(() => settled++);
  expect(g.started()).toBe(1);
  const second = reads.run().then(() => settled++);
  const third = reads.run().then(() => settled++);
  g.finish();
  await vi.waitFor(() => expect(g.started()).toBe(2));
  expect(settled).toBe(0);
  g.finish();
  await Promise.all([first, second, third]);
  expect(g.started()).toBe(2);
  expect(settled).toBe(3);
});

test('a read that throws fails its askers; the next ask reads again', async () => {
  let n = 0;
  const reads = new CoalescedRead(async () => {
    if (++n === 1) throw new Error('no such file');
  });
  await expect(reads.run()).rejects.toThrow('no such file');
  await reads.run();
  expect(n).toBe(2);
});

test('soon() reads once, after a burst of events has settled; cancel() drops it', async () => {
  vi.useFakeTimers();
  let n = 0;
  const reads = new CoalescedRead(async () => void n++);
  for (let i = 0; i < 5; i++) {
    reads.soon();
    await vi.advanceTimersByTimeAsync(10);
  }
  expect(n).toBe(0);
  await vi.advanceTimersByTimeAsync(50);
  expect(n).toBe(1);
  reads.soon();
  reads.cancel();
  await vi.advanceTimersByTimeAsync(1000);
  expect(n).toBe(1);
});
