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
