/**
 * Polite to a resolver (issue 42, item 3): at most 2 connections to one
 * resolver in steady state and 4 in a burst (RFC 7766 §6.2.2, RFC 7858
 * §3.4), never more in flight on a connection than the server takes, and
 * no failed lookup when a server closes a connection after N queries or
 * refuses one beyond its cap per client. Against the project's fault
 * server (server-side counts of connections at once) and dnsdist 1.7 as
 * operators set it (setMaxTCPConnectionsPerClient, setMaxTCPQueriesPerConnection).
 *
 * Each burst is a page's: 140 names at once, after the network's memory
 * said the last burst here needed 14 windows (NetworkHint.burstWindows),
 * which is what makes a loopback pool open connections for it.
 */
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { INTEROP_LABEL, interopMissing, startInterop, type InteropServer } from '../../../test-support/dot-servers.js';
import { startFaultServer, type FaultServer } from '../../../test-support/fault-server.js';
import { testPki } from '../../../test-support/certs.js';
import { skipWith } from '../../../test-support/skips.js';
import { request } from '../../../test-support/upstream-requests.js';
import { customResolver } from '../../config/resolvers.js';
import type { ManagedConnectFailure } from '../managed.js';
import { Pool } from '../pool.js';
import { DEFAULT_POOL_OPTIONS, type PoolOptions } from '../pool/options.js';
import { dotConnectionFactory } from './connection.js';

const BURST = 140;

interface Counted {
  readonly pool: Pool;
  /** Connections that existed at once (connecting, open or draining), as the pool made them. */
  mostAtOnce(): number;
  /** Counts connections at once again from those that exist now. */
  resetMost(): void;
  now(): number;
  readonly failures: ManagedConnectFailure[];
}

function poolTo(host: string, port: number, caPem: string, authName: string, options: Partial<PoolOptions> = {}): Counted {
  const auth = { mode: 'strict' as const, ca: [caPem] };
  const resolver = customResolver({ address: host, port, authName });
  const opts = { ...DEFAULT_POOL_OPTIONS, ...options };
  const make = dotConnectionFactory(resolver, auth, opts);
  let live = 0;
  let most = 0;
  const pool = new Pool({
    transport: 'dot',
    resolver,
    options: opts,
    factory: (spec) => {
      const c = make(spec);
      most = Math.max(most, ++live);
      c.once('close', () => live--);
      return c;
    },
  });
  onTestFinished(() => pool.destroy());
  const failures: ManagedConnectFailure[] = [];
  pool.on('connect-failed', (f) => failures.push(f));
  return { pool, mostAtOnce: () => most, resetMost: () => (most = live), now: () => live, failures };
}

/** `n` names at once; resolves to the errors' messages (none: every one answered). */
async function burst(pool: Pool, names: (i: number) => string, n = BURST): Promise<string[]> {
  const out = await Promise.all(
    Array.from({ length: n }, (_, i) => new Promise<string | null>((resolve) => pool.resolve(request(names(i)), (_req, err) => resolve(err ? `${names(i)}: ${err.message}` : null)))),
  );
  return out.filter((e): e is string => e !== null);
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

async function faultServer(): Promise<FaultServer> {
  const s = await startFaultServer();
  onTestFinished(() => s.stop());
  return s;
}

function toFault(s: FaultServer, options: Partial<PoolOptions> = {}): Counted {
  const pki = testPki();
  return poolTo('127.0.0.1', s.port, pki.caPem, pki.authName, options);
}

describe('the fault server, counting connections on its side', () => {
  test('a page burst of 140 names: every one answered, at most 4 connections at once, at most 2 once the burst is over', { timeout: 15_000 }, async () => {
    const s = await faultServer();
    const c = toFault(s);
    c.pool.prefer({ burstWindows: 14 });
    expect(await burst(c.pool, (i) => `q${i}.page.test`)).toEqual([]);
    console.log(`burst: ${s.mostAtOnce} connections at once (server side), ${c.mostAtOnce()} (pool side)`);
    expect(s.mostAtOnce).toBeLessThanOrEqual(4);
    expect(c.mostAtOnce()).toBeLessThanOrEqual(4);
    // The burst is over: the extras close, down to the steady 2.
    expect(await until(() => s.tcpConnections <= 2 && c.now() <= 2, 4000), `${s.tcpConnections} connections 4 s after the burst`).toBe(true);
    // A second page's burst keeps to the same caps.
    s.resetMostAtOnce();
    expect(await burst(c.pool, (i) => `q${i}.second.test`)).toEqual([]);
    expect(s.mostAtOnce).toBeLessThanOrEqual(4);
  });

  test('a server that takes 2 connections per client: 0 failed lookups, no back-off, and the cap is remembered for the resolver', { timeout: 15_000 }, async () => {
    const s = await faultServer();
    s.behaviour.maxConnections = 2;
    const c = toFault(s);
    c.pool.prefer({ burstWindows: 14 });
    expect(await burst(c.pool, (i) => `q${i}.page.test`)).toEqual([]);
    expect(c.failures.map((f) => f.message)).toEqual([]);
    const refused = s.refused;
    console.log(`2 connections per client: ${refused} refused in the first burst`);
    // Learnt: the next burst, and a new pool to the same resolver (a switch away and back), open no connection beyond the cap.
    expect(await burst(c.pool, (i) => `q${i}.second.test`)).toEqual([]);
    expect(s.refused - refused).toBe(0);
    c.pool.destroy();
    expect(await until(() => s.tcpConnections === 0, 2000)).toBe(true);
    const again = toFault(s);
    again.pool.prefer({ burstWindows: 14 });
    expect(await burst(again.pool, (i) => `q${i}.third.test`)).toEqual([]);
    expect(s.refused - refused).toBe(0);
    expect(again.failures).toEqual([]);
  });

  test('a server that closes a connection after 100 queries: 0 failed lookups over 4 bursts, nothing sent twice once it is learnt', { timeout: 15_000 }, async () => {
    const s = await faultServer();
    s.behaviour.closeAfterQueries = 100;
    const c = toFault(s);
    // The first close with queries unanswered (the first or second burst) teaches the pool the count: from then on a connection
    // is drained at its 100th query and a new one takes the rest, and nothing is sent twice.
    for (let round = 0; round < 2; round++) expect(await burst(c.pool, (i) => `q${i}.r${round}.test`)).toEqual([]);
    const retries = c.pool.counters.retries;
    for (let round = 2; round < 4; round++) expect(await burst(c.pool, (i) => `q${i}.r${round}.test`)).toEqual([]);
    console.log(`closes after 100: ${retries} queries retried in the first two bursts, ${c.pool.counters.retries - retries} in the next two`);
    expect(c.pool.counters.retries - retries).toBe(0);
    expect(s.mostAtOnce).toBeLessThanOrEqual(4);
  });

  test('a server that bans this client: backed off, and said in words', { timeout: 15_000 }, async () => {
    const s = await faultServer();
    s.behaviour.maxConnections = 2;
    const c = toFault(s);
    c.pool.prefer({ burstWindows: 14 });
    expect(await burst(c.pool, (i) => `q${i}.page.test`)).toEqual([]);
    // From now on every new connection is closed as it is accepted, and the open ones go.
    s.behaviour.refuseAll = true;
    s.resetAll();
    const failed = await burst(c.pool, (i) => `q${i}.banned.test`, 10);
    expect(failed.length).toBeGreaterThan(0);
    expect(c.failures.length).toBeGreaterThan(0);
    const words = c.failures.at(-1)?.message ?? '';
    console.log(`banned: ${words}`);
    expect(words).toMatch(/refuses more connections from this machine/);
    expect(words).toMatch(/dotstub keeps to 2/);
    // Backed off: a query now fails at once, without a new connection each time.
    const before = s.refused;
    await burst(c.pool, (i) => `q${i}.later.test`, 10);
    expect(s.refused - before).toBeLessThanOrEqual(1);
  });
});

describe(INTEROP_LABEL.dnsdist, skipWith(interopMissing('dnsdist')), () => {
  describe('with setMaxTCPConnectionsPerClient(2)', () => {
    let server: InteropServer;
    beforeAll(async () => {
      server = await startInterop('dnsdist', { maxConnectionsPerClient: 2 });
    }, 20_000);
    afterAll(() => server?.stop());

    test('page bursts of 140 names: 0 failed lookups, no back-off', { timeout: 20_000 }, async () => {
      const c = poolTo(server.host, server.port, server.pki.caPem, server.pki.authName);
      c.pool.prefer({ burstWindows: 14 });
      expect(await burst(c.pool, (i) => `n${i}.test`)).toEqual([]);
      console.log(`dnsdist, 2 per client: ${c.mostAtOnce()} connections at once in the first burst`);
      // Learnt from the refusals: the next bursts keep to 2.
      c.resetMost();
      for (let round = 1; round < 3; round++) expect(await burst(c.pool, (i) => `n${(i + round * 7) % 300}.test`)).toEqual([]);
      expect(c.mostAtOnce()).toBeLessThanOrEqual(2);
      expect(c.failures.map((f) => f.message)).toEqual([]);
    });
  });

  describe('with setMaxTCPQueriesPerConnection(100)', () => {
    let server: InteropServer;
    beforeAll(async () => {
      server = await startInterop('dnsdist', { maxQueriesPerConnection: 100 });
    }, 20_000);
    afterAll(() => server?.stop());

    test('bursts of 140 names: 0 failed lookups, nothing sent twice once the count is learnt', { timeout: 20_000 }, async () => {
      const c = poolTo(server.host, server.port, server.pki.caPem, server.pki.authName);
      for (let round = 0; round < 2; round++) expect(await burst(c.pool, (i) => `n${(i + round * 7) % 300}.test`)).toEqual([]);
      const retries = c.pool.counters.retries;
      for (let round = 2; round < 4; round++) expect(await burst(c.pool, (i) => `n${(i + round * 7) % 300}.test`)).toEqual([]);
      console.log(`dnsdist, closes after 100: ${retries} retried in the first two bursts, ${c.pool.counters.retries - retries} in the next two`);
      expect(c.pool.counters.retries - retries).toBe(0);
      expect(c.mostAtOnce()).toBeLessThanOrEqual(4);
    });
  });
});
