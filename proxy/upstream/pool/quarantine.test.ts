/** Blame and quarantine on their own: fake connections that die, and the verdicts for the queries they hand back. */
import { describe, expect, test } from 'vitest';
import { FakeConnection } from '../../../test-support/fake-connection.js';
import { request } from '../../../test-support/upstream-requests.js';
import type { CloseInfo } from '../connection/contract.js';
import { Quarantine } from './quarantine.js';

let ids = 0;
function openConn(q: Quarantine): FakeConnection {
  const c = new FakeConnection({ id: ++ids, address: '192.0.2.1', session: undefined }, 1000);
  c.open();
  q.opened(c);
  return c;
}

/** Lets performance.now() move on, so an open and a death are never at the same instant. */
function tick(): void {
  const t = performance.now();
  while (performance.now() === t);
}

function death(c: FakeConnection, failed: number, reason: CloseInfo['reason'] = 'reset'): CloseInfo {
  return { connectionId: c.id, reason, error: undefined, failed, queriesCarried: failed, wasOpen: true };
}

describe('quarantine', () => {
  test('the first query handed back by a dead connection is its suspect; the others are collateral', () => {
    const q = new Quarantine('Lab');
    const c = openConn(q);
    q.closed(c, death(c, 3));
    expect(q.judge(c, request('killer.test'), 0).kind).toBe('own');
    expect(q.judge(c, request('a.test'), 0).kind).toBe('collateral');
    expect(q.judge(c, request('b.test'), 0).kind).toBe('collateral');
    // Collateral retries are bounded.
    expect(q.judge(c, request('b.test'), 3).kind).toBe('own');
  });

  test('the suspect of two deaths is quarantined: a typed error, and check() refuses it without sending', () => {
    const q = new Quarantine('Lab');
    const first = openConn(q);
    q.closed(first, death(first, 1));
    expect(q.judge(first, request('killer.test'), 0).kind).toBe('own');
    const second = openConn(q);
    q.closed(second, death(second, 1));
    const verdict = q.judge(second, request('KILLER.test'), 0);
    expect(verdict.kind).toBe('quarantined');
    expect(verdict.kind === 'quarantined' && verdict.error.code).toBe('DOTSTUB_QUARANTINED');
    expect(q.check(request('killer.test'))?.code).toBe('DOTSTUB_QUARANTINED');
    expect(q.check(request('other.test'))).toBeUndefined();
  });

  test('connections open before a death that die within a second of it died together: no one is blamed', () => {
    const q = new Quarantine('Lab');
    const a = openConn(q);
    const b = openConn(q);
    tick();
    q.closed(a, death(a, 1));
    q.closed(b, death(b, 2));
    expect(q.judge(b, request('x.test'), 0).kind).toBe('collateral');
    expect(q.judge(b, request('y.test'), 5).kind).toBe('collateral');
  });

  test('a close we caused, or one with nothing in flight, blames no one', () => {
    const q = new Quarantine('Lab');
    const c = openConn(q);
    q.closed(c, death(c, 1, 'unresponsive'));
    expect(q.judge(c, request('x.test'), 0).kind).toBe('own');
    expect(q.judge(c, request('x.test'), 0).kind).toBe('own');
    expect(q.check(request('x.test'))).toBeUndefined();
  });
});
