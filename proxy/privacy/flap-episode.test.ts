/** A flapping link's changes told as one episode (flap-episode.ts), with fake timers. */
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { FlapEpisode, flapEndedWords, type FlapSummary } from './flap-episode.js';

beforeEach(() => void vi.useFakeTimers({ now: new Date('2026-12-08T10:00:00Z') }));
afterEach(() => void vi.useRealTimers());

function episode(): { e: FlapEpisode; told: string[]; ends: FlapSummary[] } {
  const told: string[] = [];
  const ends: FlapSummary[] = [];
  const e = new FlapEpisode({ started: (n) => told.push(`start ${n}`), ended: (s) => (told.push(`end ${s.changes}`), ends.push(s)) });
  return { e, told, ends };
}

test('one change is no episode; a second within 10 s starts one; each later one counts; 10 s without a change ends it, once', () => {
  const { e, told, ends } = episode();
  e.changed();
  expect(e.quiet).toBe(false);
  vi.advanceTimersByTime(11_000);
  e.changed();
  expect(e.quiet).toBe(false);
  vi.advanceTimersByTime(1000);
  e.changed();
  expect(e.quiet).toBe(true);
  expect(told).toEqual(['start 2']);
  for (let i = 0; i < 20; i++) {
    vi.advanceTimersByTime(1000);
    e.changed();
  }
  vi.advanceTimersByTime(9999);
  expect(e.quiet).toBe(true);
  vi.advanceTimersByTime(1);
  expect(e.quiet).toBe(false);
  expect(told).toEqual(['start 2', 'end 22']);
  const end = ends[0] as FlapSummary;
  expect(end.until - end.since).toBe(21_000);
  expect(flapEndedWords(end)).toMatch(/^the link dropped and came back 11 times between \d\d:\d\d:\d\d and \d\d:\d\d:\d\d \(22 changes of network\), and has been steady since$/);
});

test('stopped: no end line comes after', () => {
  const { e, told } = episode();
  e.changed();
  e.changed();
  e.stop();
  vi.advanceTimersByTime(20_000);
  expect(told).toEqual(['start 2']);
  expect(e.quiet).toBe(false);
});
