/** The window budget and the pick, on fake connections: which one takes a query, and when a burst needs more. */
import { describe, expect, test } from 'vitest';
import { FakeConnection } from '../../../test-support/fake-connection.js';
import { request } from '../../../test-support/upstream-requests.js';
import { AnswerWindow, pick } from './window.js';

let ids = 0;
function conn(state: 'connecting' | 'open', inFlight: number, cap = 1000): FakeConnection {
  const c = new FakeConnection({ id: ++ids, address: '192.0.2.1', session: undefined }, cap);
  if (state === 'open') c.open();
  for (let i = 0; i < inFlight; i++) {
    const r = request(`n${i}.test`);
    c.send(r.wire, r.question, () => undefined, null);
  }
  return c;
}

describe('the window budget', () => {
  test('padded answers until measured: 26 per window; smaller answers fit more, huge ones never fewer than 4', () => {
    const w = new AnswerWindow();
    expect(w.queries()).toBe(26);
    for (let i = 0; i < 200; i++) w.observe(100);
    expect(w.queries()).toBeGreaterThan(100);
    for (let i = 0; i < 400; i++) w.observe(60_000);
    expect(w.queries()).toBe(4);
  });
});

describe('the window from arrivals', () => {
  /** A train of `sent` queries written from idle on `c`; answers at the times given (ms), the round trip `rtt`. */
  function train(w: AnswerWindow, c: FakeConnection, sent: number, answersAt: readonly number[], rtt = 35): void {
    for (let depth = 1; depth <= sent; depth++) w.sent(c, depth);
    for (const at of answersAt) w.answered(c, at, rtt);
  }
  const flight = (n: number, at: number): number[] => Array.from({ length: n }, (_, i) => at + i * 0.1);

  test('a server that sends 10 answers in its first round trip (Nagle off) gets a window of 9 (a tenth kept free), not the 26 the bytes suggest', () => {
    const w = new AnswerWindow();
    expect(w.queries()).toBe(26);
    train(w, conn('open', 0), 30, [...flight(10, 35), ...flight(20, 70)]);
    expect(w.queries()).toBe(9);
    // Smoothed: one odd train moves it a quarter of the way (10 → 12).
    train(w, conn('open', 0), 30, [...flight(18, 35), ...flight(12, 70)]);
    expect(w.queries()).toBe(10);
  });

  test('a whole train in one flight says the window is at least that; a short one says nothing', () => {
    const w = new AnswerWindow();
    train(w, conn('open', 0), 30, flight(30, 35));
    expect(w.queries()).toBe(26);
    train(w, conn('open', 0), 40, [...flight(25, 35), ...flight(15, 70)]);
    expect(w.queries()).toBe(22);
    train(w, conn('open', 0), 32, flight(32, 35));
    expect(w.queries()).toBe(28);
    train(w, conn('open', 0), 3, [35, 70, 105]);
    expect(w.queries()).toBe(28);
  });

  test('a path of a few milliseconds keeps the byte estimate: its flights are as short as this process\'s own pauses', () => {
    const w = new AnswerWindow();
    train(w, conn('open', 0), 30, [...flight(10, 1), ...flight(20, 2)], 1);
    expect(w.queries()).toBe(26);
  });

  test('queries written after the first answer came are not the train\'s', () => {
    const w = new AnswerWindow();
    const c = conn('open', 0);
    for (let depth = 1; depth <= 10; depth++) w.sent(c, depth);
    w.answered(c, 35, 35);
    for (let depth = 10; depth <= 40; depth++) w.sent(c, depth);
    for (const at of [...flight(9, 35.1), ...flight(30, 70)]) w.answered(c, at, 35);
    // All ten of the train came in its first flight: no cut, nothing measured.
    expect(w.queries()).toBe(26);
  });
});

describe('pick', () => {
  test('the first open connection with room, oldest first', () => {
    const a = conn('open', 3);
    const b = conn('open', 0);
    expect(pick([a, b], undefined, 26)).toEqual({ conn: a, burstWindows: 0 });
  });

  test('every open window full: the least-loaded open one, and how many windows the burst needs', () => {
    const a = conn('open', 30);
    const b = conn('open', 27);
    expect(pick([a, b], undefined, 26)).toEqual({ conn: b, burstWindows: Math.ceil((30 + 27 + 1) / 26) });
  });

  test('a connection still connecting takes queries only when no open one can', () => {
    const open = conn('open', 30);
    const connecting = conn('connecting', 0);
    expect(pick([connecting, open], undefined, 26).conn).toBe(open);
    expect(pick([connecting], undefined, 26)).toEqual({ conn: connecting, burstWindows: 0 });
  });

  test('skips the connection to avoid and any that is full or closed; none left: undefined', () => {
    const a = conn('open', 0);
    const full = conn('open', 2, 2);
    const closed = conn('open', 0);
    closed.close('reset');
    expect(pick([a, full, closed], a, 26).conn).toBeUndefined();
  });
});
