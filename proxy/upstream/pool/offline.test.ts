/**
 * Queries that meet "no route" wait for the network to come back (offline.ts)
 * instead of failing at once; a refused connection still fails at once.
 * The pool with connections the test drives (test-support/fake-connection.ts).
 */
import { afterEach, expect, test, vi } from 'vitest';
import { FakeConnection } from '../../../test-support/fake-connection.js';
import { request } from '../../../test-support/upstream-requests.js';
import { customResolver } from '../../config/resolvers.js';
import { ConnectFailedError, type DotstubError } from '../../errors.js';
import { Pool } from './pool.js';
import { DEFAULT_POOL_OPTIONS } from './options.js';

const resolver = customResolver({ id: 'lab', label: 'Lab', address: ['192.0.2.1'], authName: 'dns.test' });
let pools: Pool[] = [];
afterEach(() => {
  for (const p of pools) p.destroy();
  pools = [];
  vi.useRealTimers();
});

function rig(): { pool: Pool; conns: FakeConnection[] } {
  const conns: FakeConnection[] = [];
  const pool = new Pool({
    transport: 'dot',
    resolver,
    options: DEFAULT_POOL_OPTIONS,
    factory: (spec) => {
      const c = new FakeConnection(spec, DEFAULT_POOL_OPTIONS.maxInFlight);
      conns.push(c);
      return c;
    },
  });
  pools.push(pool);
  return { pool, conns };
}

const failure = (code: string): ConnectFailedError => new ConnectFailedError(`cannot connect to 192.0.2.1:853: ${code}`, { cause: Object.assign(new Error(code), { code }) });

function ask(pool: Pool, name: string): { readonly result: () => { err: DotstubError | null; answered: boolean } | undefined; readonly calls: () => number } {
  let result: { err: DotstubError | null; answered: boolean } | undefined;
  let calls = 0;
  pool.resolve(request(name), (_req, err, answer) => {
    calls++;
    result = { err, answered: answer !== null };
  });
  return { result: () => result, calls: () => calls };
}

test('no route (the link is down): the queries wait, and are answered on a new connection once the network changes; each gets one callback', () => {
  vi.useFakeTimers();
  const { pool, conns } = rig();
  const a = ask(pool, 'a.test');
  const b = ask(pool, 'b.test');
  conns[0]?.refuse(failure('ENETUNREACH'));
  // Still connecting fails at once while backing off: this one waits too.
  const c = ask(pool, 'c.test');
  vi.advanceTimersByTime(1000);
  expect([a.result(), b.result(), c.result()]).toEqual([undefined, undefined, undefined]);

  pool.networkChanged(); // the link is back
  const fresh = conns.at(-1) as FakeConnection;
  expect(fresh.state).toBe('connecting');
  expect(fresh.inFlight).toBe(3);
  fresh.open();
  fresh.answerAll();
  for (const q of [a, b, c]) {
    expect(q.result()).toEqual({ err: null, answered: true });
    expect(q.calls()).toBe(1);
  }
});

test('no route for longer than queryTimeoutMaxMs: the query fails with the error it met, once', () => {
  vi.useFakeTimers();
  const { pool, conns } = rig();
  const a = ask(pool, 'a.test');
  conns[0]?.refuse(failure('EADDRNOTAVAIL'));
  vi.advanceTimersByTime(DEFAULT_POOL_OPTIONS.queryTimeoutMaxMs - 10);
  expect(a.result()).toBeUndefined();
  vi.advanceTimersByTime(20);
  expect(a.result()?.err?.code).toBe('DOTSTUB_CONNECT_FAILED');
  pool.networkChanged();
  expect(a.calls()).toBe(1);
});

test('a refused connection (the network or the resolver said no) still fails at once', () => {
  const { pool, conns } = rig();
  const a = ask(pool, 'a.test');
  conns[0]?.refuse(failure('ECONNREFUSED'));
  expect(a.result()?.err?.code).toBe('DOTSTUB_CONNECT_FAILED');
  const h = ask(pool, 'b.test');
  conns.at(-1)?.refuse(failure('EHOSTUNREACH')); // an ICMP host unreachable from a router: the network's answer
  expect(h.result()?.err?.code).toBe('DOTSTUB_CONNECT_FAILED');
});

test('destroy() fails the waiting queries at once, typed', () => {
  const { pool, conns } = rig();
  const a = ask(pool, 'a.test');
  conns[0]?.refuse(failure('ENETUNREACH'));
  expect(a.result()).toBeUndefined();
  pool.destroy();
  expect(a.result()?.err?.code).toBe('DOTSTUB_POOL_CLOSED');
  expect(a.calls()).toBe(1);
});
