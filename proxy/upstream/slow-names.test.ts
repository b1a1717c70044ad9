/**
 * A resolver that thinks is not a dead path (issue 42). Real resolvers
 * answer a cache miss after their own round trips to the authorities: tens
 * of ms usually, a second or two in the tail, while the connection may
 * carry nothing else. Asked once the pool has timed its fast answers (~1 ms
 * on loopback), such a name takes hundreds of RTTs: it must still be sent
 * once, on a connection that is kept, and answered with what the resolver
 * said. Only a path that stops acknowledging what we send is dead
 * (hedge.test.ts drops one).
 *
 * Real proxy, real sockets: the fault server is a DoT server of our own on
 * 127.0.0.1 with per-name delays.
 */
import { expect, onTestFinished, test } from 'vitest';
import { expectedA, firstA, UdpClient } from '../../test-support/dns-client.js';
import { startFaultServer, type FaultServer } from '../../test-support/fault-server.js';
import { startProxy, waitForState, type Harness } from '../../test-support/proxy-harness.js';
import type { ConnectionEvent } from '../dotstub.js';

interface World {
  readonly server: FaultServer;
  readonly h: Harness;
  readonly c: UdpClient;
  readonly closes: ConnectionEvent[];
}

/** A fault server, a proxy without a cache in front of it, a client, and the pool's RTT learnt from 20 instant names. */
async function warmedWorld(): Promise<World> {
  const server = await startFaultServer();
  onTestFinished(() => server.stop());
  const h = await startProxy({ resolverArg: server.resolverArg, cache: false });
  onTestFinished(() => h.stop());
  const closes: ConnectionEvent[] = [];
  h.proxy.on('connection', (e) => e.type === 'close' && closes.push(e));
  await waitForState(h.proxy, 'private', 5000);
  const c = await UdpClient.open(h.port);
  onTestFinished(() => c.close());
  for (let i = 0; i < 20; i++) expect(firstA(await c.query(`q${i}.warm.test`))).toBe(expectedA(i));
  return { server, h, c, closes };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('names the resolver takes 250 ms to look up, one every 0.7 s with fast names between, asked after the RTT is known: each sent once, no connection closed, no SERVFAIL', async () => {
  const { server, h, c, closes } = await warmedWorld();
  const rounds = 8;
  const fastPerRound = 10;
  // Cache misses at the resolver: 250 ms from the first time asked (a second copy would be answered with the first).
  for (let i = 0; i < rounds; i++) server.behaviour.misses.set(`q${100 + i}.slow.test`, 250);
  const rcodes: string[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    // A name the resolver must look up, alone on the connection while it does ...
    const a = await c.query(`q${100 + i}.slow.test`, { timeoutMs: 5000 });
    rcodes.push(a.rcode);
    expect(firstA(a)).toBe(expectedA(100 + i));
    // ... then names it has (the pool's RTT is ~1 ms again after them).
    for (let j = 0; j < fastPerRound; j++) {
      const n = 1000 + i * fastPerRound + j;
      const fast = await c.query(`q${n}.fast.test`, { timeoutMs: 5000 });
      rcodes.push(fast.rcode);
      expect(firstA(fast)).toBe(expectedA(n));
    }
    await sleep(Math.max(0, 700 - (performance.now() - started)));
  }
  const sends = Array.from({ length: rounds }, (_, i) => server.seen.filter((q) => q.name === `q${100 + i}.slow.test`).length);
  const servfails = rcodes.filter((r) => r === 'SERVFAIL').length;
  console.log(
    `slow names: sends per name ${sends.join(' ')}, connections opened ${server.connections}, closed ${closes.length} (${closes.map((e) => (e.type === 'close' ? e.reason : '')).join(' ')}), SERVFAIL ${servfails}, hedges ${h.proxy.counters.hedges}`,
  );
  expect(sends, 'each slow name reached the resolver once').toEqual(Array.from({ length: rounds }, () => 1));
  expect(closes, 'no healthy connection was closed').toEqual([]);
  expect(rcodes.filter((r) => r !== 'NOERROR'), 'no SERVFAIL the resolver did not send').toEqual([]);
  expect(server.connections).toBe(1);
  expect(h.proxy.counters.hedges).toBe(0);
}, 30_000);

test('a name the resolver takes 2 s for, alone on its connection: sent once, answered, the connection kept', async () => {
  const { server, h, c, closes } = await warmedWorld();
  server.behaviour.delays.set('q300.slow.test', 2000);
  const a = await c.query('q300.slow.test', { timeoutMs: 5000 });
  const sends = server.seen.filter((q) => q.name === 'q300.slow.test').map((q) => q.connection);
  console.log(`2 s name: ${a.rcode} after ${Math.round(a.ms)} ms, sent on ${sends.join(', ')}, connections closed ${closes.length}`);
  expect(a.rcode).toBe('NOERROR');
  expect(firstA(a)).toBe(expectedA(300));
  expect(a.ms).toBeGreaterThanOrEqual(1900);
  expect(sends).toEqual([1]);
  expect(closes).toEqual([]);
  expect(h.proxy.counters.hedges).toBe(0);
  // The connection that waited is the one the next query uses.
  expect(firstA(await c.query('q301.after.test'))).toBe(expectedA(301));
  expect(server.seen.filter((q) => q.name === 'q301.after.test').map((q) => q.connection)).toEqual([1]);
}, 20_000);
