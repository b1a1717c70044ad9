/**
 * What broken or hostile upstreams do to a DoT connection, through the real
 * proxy and real sockets: a server that loses DNS framing, a query the
 * server closes the connection over, and the memory a private CA cost per
 * reconnection.
 */
import { describe, expect, onTestFinished, test } from 'vitest';
import { expectedA, firstA, UdpClient } from '../../../test-support/dns-client.js';
import { startFaultServer, type FaultServer } from '../../../test-support/fault-server.js';
import { startProxy, waitForState, type Harness } from '../../../test-support/proxy-harness.js';
import { startUnbound } from '../../../test-support/unbound.js';
import { customResolver } from '../../config/resolvers.js';
import type { ConnectionEvent } from '../../dotstub.js';
import { DEFAULT_POOL_OPTIONS } from '../pool/options.js';
import { dotConnectionFactory } from './connection.js';

async function faultProxy(): Promise<{ s: FaultServer; h: Harness; c: UdpClient; closes: ConnectionEvent[] }> {
  const s = await startFaultServer();
  onTestFinished(() => s.stop());
  const h = await startProxy({ resolverArg: s.resolverArg });
  onTestFinished(() => h.stop());
  const closes: ConnectionEvent[] = [];
  h.proxy.on('connection', (e) => e.type === 'close' && closes.push(e));
  await waitForState(h.proxy, 'private', 5000);
  const c = await UdpClient.open(h.port);
  onTestFinished(() => c.close());
  return { s, h, c, closes };
}

describe('a DoT server that loses DNS framing is replaced, not kept', () => {
  for (const kind of ['tiny', 'query', 'garbage'] as const) {
    test(`${kind}: the connection is replaced and queries after it are answered`, async () => {
      const { s, c, closes } = await faultProxy();
      s.behaviour.desync.set('broken.test', kind);
      expect(firstA(await c.query('n1.test'))).toBe(expectedA(1));
      const broken = c.query('broken.test', { timeoutMs: 8000 });
      const during = Array.from({ length: 10 }, (_, i) => c.query(`n${i + 10}.test`, { timeoutMs: 8000 }));
      // Every query in flight beside the broken one is answered (on a new connection).
      for (const [i, a] of (await Promise.all(during)).entries()) expect(firstA(a)).toBe(expectedA(i + 10));
      expect((await broken).rcode).toBe('SERVFAIL');
      // Later queries go through at once: the broken stream is gone.
      const after = await c.query('n42.test');
      expect(firstA(after)).toBe(expectedA(42));
      // Not after a deadline (2.5 s): the broken stream is not waited on.
      expect(after.ms).toBeLessThan(2000);
      expect(closes.some((e) => e.type === 'close' && (e.reason === 'desync' || e.reason === 'unresponsive'))).toBe(true);
      expect(s.connections).toBeGreaterThanOrEqual(2);
    }, 20_000);
  }
});

describe('a query the server closes the connection over', () => {
  test('is quarantined after two connections died over it; 30 other queries in flight meanwhile are all answered', async () => {
    const { s, c } = await faultProxy();
    s.behaviour.killers.set('killer.test', 100);
    const killer = c.query('killer.test', { timeoutMs: 8000 });
    const others = Array.from({ length: 30 }, (_, i) => c.query(`n${i}.test`, { timeoutMs: 8000 }));
    const answers = await Promise.all(others);
    expect(answers.filter((a) => a.rcode !== 'NOERROR')).toEqual([]);
    answers.forEach((a, i) => expect(firstA(a)).toBe(expectedA(i)));
    expect((await killer).rcode).toBe('SERVFAIL');
    // Asked again, it is refused here and never reaches the server to kill another connection.
    const connections = s.connections;
    const again = await c.query('killer.test');
    expect(again.rcode).toBe('SERVFAIL');
    // Refused here, not after a deadline (2.5 s).
    expect(again.ms).toBeLessThan(1000);
    expect(s.connections).toBe(connections);
    expect(firstA(await c.query('n99.test'))).toBe(expectedA(99));
  }, 20_000);
});

describe('a private CA (--ca) costs nothing per reconnection', () => {
  test('400 fresh TLS connections with an extra trust anchor: resident memory stays flat', async () => {
    const unbound = await startUnbound({ names: 10 });
    onTestFinished(() => unbound.stop());
    const resolver = customResolver({ address: unbound.host, port: unbound.port, authName: 'dns.test' });
    const auth = { mode: 'strict' as const, ca: [unbound.pki.caPem] };
    const factory = dotConnectionFactory(resolver, auth, DEFAULT_POOL_OPTIONS);
    const connectOnce = (id: number): Promise<void> =>
      new Promise((resolve, reject) => {
        const conn = factory({ id, address: unbound.host, session: undefined });
        conn.once('ready', (info) => {
          if (!info.verified) reject(new Error('not verified'));
          conn.close('local');
        });
        conn.once('close', (info) => (info.wasOpen ? resolve() : reject(info.error ?? new Error('closed before ready'))));
      });
    const gc = (globalThis as { gc?: () => void }).gc;
    for (let i = 0; i < 50; i++) await connectOnce(i); // warm up allocators and JIT
    gc?.();
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 400; i++) await connectOnce(1000 + i);
    gc?.();
    const grownMb = (process.memoryUsage().rss - before) / 1e6;
    // A context per connection grew ~0.6–0.9 MB each (240–360 MB here); shared, it stays within noise.
    expect(grownMb).toBeLessThan(60);
  }, 60_000);
});
