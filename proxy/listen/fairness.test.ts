/**
 * Fair shares through dotstub (in-process, real sockets, real unbound): a
 * few greedy clients pipelining thousands of queries must not take the
 * proxy's whole in-flight capacity; a polite client asking now and then gets
 * every answer, and nobody gets SERVFAIL for it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectedA, firstA, queryBytes, RawTcpConnection, TcpClient, UdpClient, type Answer } from '../../test-support/dns-client.js';
import { startProxy, waitFor, type Harness } from '../../test-support/proxy-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';

const NAMES = 200;
/** A small capacity, so a few greedy clients can exhaust it quickly: one connection (no burst extras) of 100 in flight. */
const MAX_IN_FLIGHT = 100;

let unbound: UnboundServer;
let h: Harness;

beforeAll(async () => {
  unbound = await startUnbound({ names: NAMES });
  h = await startProxy({ resolverArg: unbound.resolverArg, pool: { maxInFlight: MAX_IN_FLIGHT, burstConnections: 0 }, cache: false });
  await waitFor(() => h.proxy.privacy.state.state === 'private', 10_000, 'private state');
});
afterAll(async () => {
  await h?.stop();
  await unbound?.stop();
});

const rcodeOf = (m: Buffer): number => (m[3] as number) & 0xf;
const tcOf = (m: Buffer): boolean => ((m[2] as number) & 0x02) !== 0;

/** A polite client: one query at a time, every `everyMs`, until `until` resolves. Returns every answer's rcode (or the error). */
async function politeWhile(client: UdpClient | TcpClient, until: Promise<unknown>, everyMs: number): Promise<string[]> {
  let done = false;
  void until.finally(() => (done = true));
  const results: string[] = [];
  for (let i = 0; !done; i++) {
    const n = i % NAMES;
    try {
      const a: Answer = await client.query(`n${n}.test`, { timeoutMs: 3000 });
      results.push(a.rcode === 'NOERROR' && firstA(a) === expectedA(n) ? 'ok' : a.rcode);
    } catch (err) {
      results.push((err as Error).message);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return results;
}

describe('fair shares', () => {
  test('10 TCP clients pipelining 2,000 queries each: a polite UDP and TCP client get every answer, nobody gets SERVFAIL', async () => {
    const before = { ...h.proxy.counters };
    const greedy = await Promise.all(Array.from({ length: 10 }, () => RawTcpConnection.open(h.port)));
    const politeUdp = await UdpClient.open(h.port);
    const politeTcp = await TcpClient.open(h.port);
    try {
      const perClient = 2000;
      // Each writes all of its queries at once.
      greedy.forEach((c, k) => {
        const frames = Array.from({ length: perClient }, (_, i) => queryBytes(`n${(k * perClient + i) % NAMES}.test`, { id: i + 1 }));
        for (const f of frames) c.send(f);
      });
      const greedyDone = Promise.all(greedy.map((c) => c.waitForMessages(perClient, 40_000)));
      const [answers, udpResults, tcpResults] = await Promise.all([
        greedyDone,
        politeWhile(politeUdp, greedyDone, 20),
        politeWhile(politeTcp, greedyDone, 20),
      ]);
      expect(udpResults.filter((r) => r !== 'ok')).toEqual([]);
      expect(tcpResults.filter((r) => r !== 'ok')).toEqual([]);
      expect(udpResults.length).toBeGreaterThan(5);
      const greedyRcodes = answers.flat().map(rcodeOf);
      expect(greedyRcodes.length).toBe(10 * perClient);
      expect(greedyRcodes.filter((r) => r !== 0)).toEqual([]);
      expect(h.proxy.counters.servfails - before.servfails).toBe(0);
      expect(h.proxy.counters.inFlightCapHits - before.inFlightCapHits).toBe(0);
    } finally {
      for (const c of greedy) c.destroy();
      politeUdp.close();
      politeTcp.close();
    }
  });

  test('a UDP client sending 1,500 queries at once gets TC beyond its share, never silence or SERVFAIL; a polite one gets every answer', async () => {
    const before = { ...h.proxy.counters };
    const greedy = await UdpClient.open(h.port);
    const polite = await UdpClient.open(h.port);
    try {
      const burst = Promise.all(
        Array.from({ length: 1500 }, (_, i) => greedy.query(`n${i % NAMES}.test`, { timeoutMs: 10_000 }).then((a) => a.raw)),
      );
      const [answers, politeResults] = await Promise.all([burst, politeWhile(polite, burst, 5)]);
      expect(politeResults.filter((r) => r !== 'ok')).toEqual([]);
      expect(answers).toHaveLength(1500);
      expect(answers.filter((a) => rcodeOf(a) !== 0).length).toBe(0);
      expect(answers.filter(tcOf).length).toBeGreaterThan(0);
      expect(h.proxy.counters.servfails - before.servfails).toBe(0);
    } finally {
      greedy.close();
      polite.close();
    }
  });
});
