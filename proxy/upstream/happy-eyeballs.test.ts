/**
 * Happy Eyeballs in the pool (RFC 8305 §5, issue 8): IPv6 first, IPv4
 * `attemptDelayMs` later (or at once when IPv6 fails), both in flight; the
 * first to authenticate wins, the other closes, queries it held move to the
 * winner without using their retry; only when every address failed is there
 * one connect-failure, with each address's outcome and timing. Fake
 * connections, fake timers; the same in the network lab in
 * proxy/network/interference.test.ts.
 */
import { afterEach, expect, test, vi } from 'vitest';
import { FakeConnection } from '../../test-support/fake-connection.js';
import { request } from '../../test-support/upstream-requests.js';
import { customResolver } from '../config/resolvers.js';
import { ConnectFailedError, ConnectTimeoutError, type DotstubError } from '../errors.js';
import { Pool, type RaceResult } from './pool.js';
import { DEFAULT_POOL_OPTIONS } from './pool/options.js';

const V6 = '2001:db8::53';
const V4 = '192.0.2.53';
const resolver = customResolver({ id: 'he', label: 'HE', address: [V4, V6], authName: 'dns.test' });

let pool: Pool | undefined;
afterEach(() => {
  pool?.destroy();
  vi.useRealTimers();
});

function makePool(): { pool: Pool; conns: FakeConnection[] } {
  const conns: FakeConnection[] = [];
  pool = new Pool({ transport: 'dot', resolver, options: DEFAULT_POOL_OPTIONS, factory: (spec) => conns[conns.push(new FakeConnection(spec, 100)) - 1] as FakeConnection });
  return { pool, conns };
}

function refused(address: string): DotstubError {
  return new ConnectFailedError(`cannot connect to ${address}: connection refused`, { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) });
}

test('IPv6 first; IPv4 250 ms later while IPv6 hangs; IPv4 wins, IPv6 closes, the held query is answered on IPv4', () => {
  vi.useFakeTimers();
  const { pool, conns } = makePool();
  const races: RaceResult[] = [];
  pool.on('race', (r) => races.push(r));
  const answers: (DotstubError | null)[] = [];
  pool.resolve(request('a.test'), (_r, err) => answers.push(err));
  expect(conns.map((c) => c.address)).toEqual([V6]);
  vi.advanceTimersByTime(249);
  expect(conns).toHaveLength(1);
  vi.advanceTimersByTime(1);
  expect(conns.map((c) => c.address)).toEqual([V6, V4]);
  vi.advanceTimersByTime(30);
  conns[1]?.open();
  expect(conns[0]?.state).toBe('closed');
  // The query held by the loser was re-sent on the winner, its retry untouched.
  expect(conns[1]?.sent.size).toBe(1);
  conns[1]?.answerAll();
  expect(answers).toEqual([null]);
  expect(pool.counters.retries).toBe(0);
  expect(races).toEqual([
    {
      transport: 'dot',
      winner: V4,
      afterMs: 280,
      attempts: [
        { address: V6, startMs: 0, afterMs: null, outcome: 'abandoned', error: undefined },
        { address: V4, startMs: 250, afterMs: 30, outcome: 'won', error: undefined },
      ],
    },
  ]);
});

test('IPv6 refused: IPv4 starts at once, not 250 ms later', () => {
  vi.useFakeTimers();
  const { pool, conns } = makePool();
  const failures: unknown[] = [];
  pool.on('connect-failed', (f) => failures.push(f));
  pool.warm();
  vi.advanceTimersByTime(10);
  conns[0]?.refuse(refused(V6));
  expect(conns.map((c) => c.address)).toEqual([V6, V4]);
  conns[1]?.open();
  expect(failures).toEqual([]);
  expect(pool.connections.map((c) => c.address)).toEqual([V4]);
});

test('both addresses fail: one connect-failure with each outcome and timing, the telling error (not "no route")', () => {
  vi.useFakeTimers();
  const { pool, conns } = makePool();
  const failures: { error: DotstubError; address: string; afterMs: number; attempts: readonly { address: string; startMs: number; afterMs: number | null; outcome: string }[] }[] = [];
  pool.on('connect-failed', (f) => failures.push(f));
  pool.warm();
  conns[0]?.refuse(new ConnectFailedError(`cannot connect to ${V6}: no route`, { cause: Object.assign(new Error('x'), { code: 'ENETUNREACH' }) }));
  vi.advanceTimersByTime(2500);
  conns[1]?.refuse(new ConnectTimeoutError(`no answer from ${V4} after 2500 ms`, 'connect'));
  expect(failures).toHaveLength(1);
  const f = failures[0];
  expect(f?.error).toBeInstanceOf(ConnectTimeoutError);
  expect(f?.address).toBe(V4);
  expect(f?.afterMs).toBe(2500);
  expect(f?.attempts.map((a) => [a.address, a.startMs, a.afterMs, a.outcome])).toEqual([
    [V6, 0, 0, 'failed'],
    [V4, 0, 2500, 'failed'],
  ]);
  expect(pool.connections).toHaveLength(0);
});

test('one family only: one address at a time, rotating on failure, as before', () => {
  vi.useFakeTimers();
  const conns: FakeConnection[] = [];
  const only4 = new Pool({
    transport: 'dot',
    resolver: customResolver({ id: 'v4', label: 'v4', address: ['192.0.2.1', '192.0.2.2'], authName: 'dns.test' }),
    options: DEFAULT_POOL_OPTIONS,
    factory: (spec) => conns[conns.push(new FakeConnection(spec, 100)) - 1] as FakeConnection,
  });
  try {
    only4.warm();
    vi.advanceTimersByTime(1000);
    expect(conns.map((c) => c.address)).toEqual(['192.0.2.1']);
    conns[0]?.refuse(refused('192.0.2.1'));
    vi.advanceTimersByTime(300);
    expect(conns.map((c) => c.address)).toEqual(['192.0.2.1', '192.0.2.2']);
  } finally {
    only4.destroy();
  }
});

test('IPv6 times out while IPv4 is still connecting: the query it held waits for IPv4 instead of failing', () => {
  vi.useFakeTimers();
  const { pool, conns } = makePool();
  const answers: (DotstubError | null)[] = [];
  pool.resolve(request('held.test'), (_r, err) => answers.push(err));
  vi.advanceTimersByTime(2500);
  conns[0]?.refuse(new ConnectTimeoutError(`no answer from ${V6} after 2500 ms`, 'connect'));
  expect(answers).toEqual([]);
  expect(conns[1]?.sent.size).toBe(1);
  vi.advanceTimersByTime(100);
  conns[1]?.open();
  conns[1]?.answerAll();
  expect(answers).toEqual([null]);
});
