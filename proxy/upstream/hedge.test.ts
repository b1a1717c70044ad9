/**
 * A connection whose path died is hedged (issue 32): a NAT on the way
 * forgets the connection and drops its packets, with no RST, while a new
 * connection would pass. A query waiting on it is sent again on a second
 * connection once the peer has acknowledged nothing of it for longer than
 * an ACK takes, instead of waiting out the whole deadline (800 ms at least)
 * before a retry. And on a healthy connection nothing is sent twice; a slow
 * resolver is no dead path (slow-names.test.ts).
 *
 * Real proxy, real sockets: the fault server is a DoT server of our own
 * whose one connection loses its path (TCP repair mode: its kernel neither
 * answers nor acknowledges) while the others answer.
 */
import { expect, onTestFinished, test } from 'vitest';
import { firstA, UdpClient } from '../../test-support/dns-client.js';
import { dropPathSupport, startFaultServer } from '../../test-support/fault-server.js';
import { skipWith } from '../../test-support/skips.js';
import { startProxy, waitForState } from '../../test-support/proxy-harness.js';
import { formatRecord, type QueryRecord } from '../engine/query-record.js';

const expectedA = (n: number): string => `192.0.2.${(n % 254) + 1}`;

test('a query waiting on a connection whose path died is answered on a second connection within 250 ms; one answer, one record that names the hedge', { ...skipWith(dropPathSupport()), timeout: 20_000 }, async () => {
  const server = await startFaultServer();
  onTestFinished(() => server.stop());
  const h = await startProxy({ resolverArg: server.resolverArg, cache: false });
  onTestFinished(() => h.stop());
  const records: QueryRecord[] = [];
  h.proxy.on('query', (r) => records.push(r));
  await waitForState(h.proxy, 'private', 5000);
  const c = await UdpClient.open(h.port);
  onTestFinished(() => c.close());
  // A healthy connection first: the pool learns its round trip (loopback, ~1 ms).
  for (let i = 0; i < 20; i++) expect(firstA(await c.query(`q${i}.warm.test`))).toBe(expectedA(i));
  expect(new Set(server.seen.map((q) => q.connection))).toEqual(new Set([1]));

  // The path forgets connection 1: nothing sent on it is answered or acknowledged, and nothing says so (no RST).
  server.dropPath(1);
  const started = performance.now();
  const a = await c.query('q77.silent.test', { timeoutMs: 5000 });
  const tookMs = performance.now() - started;
  expect(firstA(a)).toBe(expectedA(77));
  console.log(`silent connection: answered in ${Math.round(tookMs)} ms`);
  // Without the hedge, the query waits for its deadline (800 ms at least), then retries: the hedge waits
  // for the ACK that doesn't come (floor 100 ms) + a 25 ms deadline slot + reading TCP's state, then a handshake (resumed).
  expect(tookMs, 'answered within an ACK wait + a deadline slot + a handshake').toBeLessThan(250);

  // Sent twice: on the dead connection, where the path lost it (the server never read it), then on another one, which answered.
  const sent = server.seen.filter((q) => q.name === 'q77.silent.test');
  expect(sent.map((q) => q.connection)).toEqual([2]);
  // One answer to the client, one record, and the record says it was sent again.
  const mine = records.filter((r) => r.name === 'q77.silent.test');
  expect(mine).toHaveLength(1);
  expect(mine[0]).toMatchObject({ rcode: 'NOERROR', connectionId: expect.any(Number) as number, hedge: { connectionId: mine[0]?.connectionId } });
  expect(mine[0]?.hedge?.afterMs).toBeGreaterThanOrEqual(40);
  // Where the time went: the wait before it was sent again, then the copy's own queue and round trip; what is left is the proxy's own.
  const r = mine[0] as QueryRecord;
  const before = r.earlierUs ?? 0;
  expect(before).toBeGreaterThanOrEqual(40_000);
  const own = r.latencyUs - before - r.queueUs - r.upstreamUs;
  // Each figure is rounded to the µs on its own: their sum may pass the total by one or two.
  expect(own, 'the silence is not counted as time in the proxy').toBeGreaterThanOrEqual(-2);
  expect(own, 'the silence is not counted as time in the proxy').toBeLessThan(before / 2);
  expect(formatRecord(mine[0] as QueryRecord)).toMatch(/ sent again on #2 after \d+ ms of silence$/);
  expect(h.proxy.counters.hedges).toBe(1);

  // The hedge answered and connection 1 stayed silent: it is retired, and what follows goes to the new one at once.
  const next = await c.query('q78.after.test', { timeoutMs: 5000 });
  expect(firstA(next)).toBe(expectedA(78));
  expect(next.ms).toBeLessThan(100);
  expect(server.seen.filter((q) => q.name === 'q78.after.test').map((q) => q.connection)).toEqual([2]);
});

test('a healthy connection under load sends nothing twice (≤ 0.5 % duplicate sends)', async () => {
  const server = await startFaultServer();
  onTestFinished(() => server.stop());
  const h = await startProxy({ resolverArg: server.resolverArg, cache: false });
  onTestFinished(() => h.stop());
  await waitForState(h.proxy, 'private', 5000);
  const c = await UdpClient.open(h.port);
  onTestFinished(() => c.close());
  // 4,000 fresh names, 40 in flight at a time: thousands of queries a second on loopback.
  const total = 4000;
  let next = 0;
  let failed = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      const n = next++;
      const a = await c.query(`q${n}.load.test`, { timeoutMs: 5000 }).catch(() => null);
      if (!a || firstA(a) !== expectedA(n)) failed++;
    }
  };
  await Promise.all(Array.from({ length: 40 }, worker));
  expect(failed).toBe(0);
  const sends = server.seen.filter((q) => q.name.endsWith('.load.test')).length;
  const duplicates = sends - total;
  console.log(`healthy load: ${total} queries, ${sends} sends, ${duplicates} duplicates, ${h.proxy.counters.hedges} hedges`);
  expect(duplicates).toBeLessThanOrEqual(total * 0.005);
  expect(h.proxy.counters.hedges).toBe(duplicates);
}, 60_000);
