/**
 * The events timeline kept across restarts: what a new start reads back,
 * what it refuses to read, and when it writes (a privacy change or a switch
 * at once, always; connection events after a quiet second at once, in a
 * burst at most once a second).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, onTestFinished, test, vi } from 'vitest';
import type { TimelineEvent } from './api-types.js';
import { Timeline } from './timeline.js';

function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-timeline-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'timeline.json');
}

const switched = (at: number): TimelineEvent => ({ kind: 'resolver', at, from: 'quad9', to: 'cloudflare' });
const opened = (at: number, connectionId: number): TimelineEvent => ({
  kind: 'connection',
  event: { type: 'open', at, connectionId, resolverId: 'quad9', handshakeMs: 30, resumed: false, reused: false } as never,
});
const state = (at: number): TimelineEvent => ({ kind: 'state', event: { state: 'private', previous: 'off', reason: 'private DNS was turned on', at, resolverId: 'quad9' } });

test('a new start reads back what the last one kept, oldest first, at most `size` events', () => {
  const file = tempFile();
  const first = new Timeline(file, 3);
  for (let i = 1; i <= 5; i++) first.push(switched(i));
  first.flush();
  expect(new Timeline(file, 3).all().map((e) => (e.kind === 'resolver' ? e.at : 0))).toEqual([3, 4, 5]);
  // A smaller size keeps the newest.
  expect(new Timeline(file, 2).all().map((e) => (e.kind === 'resolver' ? e.at : 0))).toEqual([4, 5]);
});

test('connection events: a lone one is written at once; a burst at most once a second, and at flush', () => {
  vi.useFakeTimers();
  onTestFinished(() => void vi.useRealTimers());
  const file = tempFile();
  const t = new Timeline(file, 100);
  t.push(opened(1, 1));
  expect(new Timeline(file, 100).all()).toHaveLength(1);
  for (let i = 2; i <= 50; i++) t.push(opened(i, i));
  expect(new Timeline(file, 100).all()).toHaveLength(1);
  vi.advanceTimersByTime(1000);
  expect(new Timeline(file, 100).all()).toHaveLength(50);
  t.push(opened(51, 51));
  t.flush();
  expect(new Timeline(file, 100).all()).toHaveLength(51);
});

test('a privacy change, a switch, a setting are written at once even in a burst of connection events: a crash right after keeps them', () => {
  vi.useFakeTimers();
  onTestFinished(() => void vi.useRealTimers());
  const file = tempFile();
  const t = new Timeline(file, 100);
  t.push(opened(1, 1));
  t.push(opened(2, 2));
  expect(new Timeline(file, 100).all()).toHaveLength(1);
  // Turned on 200 ms after the start's connection opened: on disk now, with the connection event waiting before it.
  vi.advanceTimersByTime(200);
  t.push(state(3));
  expect(new Timeline(file, 100).all()).toEqual([opened(1, 1), opened(2, 2), state(3)]);
  t.push(switched(4));
  expect(new Timeline(file, 100).all()).toHaveLength(4);
  t.push({ kind: 'settings', at: 5, changed: ['cacheSize'] } as never);
  expect(new Timeline(file, 100).all()).toHaveLength(5);
  // Nothing left waiting: the timer that the burst set wrote nothing new.
  vi.advanceTimersByTime(1000);
  expect(new Timeline(file, 100).all()).toHaveLength(5);
});

test('a file that is not a timeline starts an empty one (never a crash); entries that are not events are dropped', () => {
  const file = tempFile();
  for (const text of ['not json', '{"version":2,"events":[]}', '{"version":1,"events":{}}', '[]']) {
    fs.writeFileSync(file, text);
    expect(new Timeline(file, 10).all()).toEqual([]);
  }
  fs.writeFileSync(file, JSON.stringify({ version: 1, events: [switched(1), { kind: 'rm -rf' }, { kind: 'state' }, null, 7, state(2)] }));
  expect(new Timeline(file, 10).all()).toEqual([switched(1), state(2)]);
});

test('without a file it is memory only', () => {
  const t = new Timeline(null, 2);
  t.push(switched(1));
  t.flush();
  expect(t.all()).toEqual([switched(1)]);
});
