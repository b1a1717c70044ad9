/**
 * The start's warm-up (warm-up.ts): made-up questions through dotstub's own
 * engine, cache and DoT pool to a DoT server of its own on loopback. What a
 * user must be able to rely on: it answers its own questions, the resolver
 * the user chose never sees one, nothing of it is in the proxy's counts or
 * records, and a stop during it is not held up.
 */
import { describe, expect, onTestFinished, test } from 'vitest';
import { firstA, UdpClient } from '../test-support/dns-client.js';
import { startFaultServer } from '../test-support/fault-server.js';
import { startProxy } from '../test-support/proxy-harness.js';
import { defaultConfig } from './dotstub.js';
import { parseResolverArg } from './config/resolvers.js';
import { warmQueryPath } from './warm-up.js';

const config = defaultConfig(parseResolverArg('127.0.0.1:1#dns.test', []), { listen: [{ host: '127.0.0.1', port: 0 }] });

describe('the warm-up of the query path', () => {
  test('every made-up question is answered by its own loopback server, through the cache and without it', async () => {
    const cached = await warmQueryPath({ ...config, cache: {} }, { queries: 400 });
    expect(cached).toMatchObject({ queries: 400, answered: 400 });
    const uncached = await warmQueryPath({ ...config, cache: null }, { queries: 400 });
    expect(uncached).toMatchObject({ queries: 400, answered: 400 });
  });

  test("started with it, the user's resolver is asked nothing and the proxy counts and records nothing; the first real lookup is answered", async () => {
    const s = await startFaultServer();
    onTestFinished(() => s.stop());
    const h = await startProxy({ resolverArg: s.resolverArg, warmUp: true });
    onTestFinished(() => h.stop());
    const records: unknown[] = [];
    h.proxy.on('query', (r) => records.push(r));
    const done = await h.warmedUp;
    expect(done?.answered).toBe(2000);
    expect(s.seen).toHaveLength(0);
    expect(h.proxy.counters.queries).toBe(0);
    expect(records).toHaveLength(0);

    const c = await UdpClient.open(h.port);
    onTestFinished(() => c.close());
    expect(firstA(await c.query('example.com'))).toBeDefined();
    expect(s.seen.map((q) => q.name)).toEqual(['example.com']);
    expect(h.proxy.counters.queries).toBe(1);
    expect(records).toHaveLength(1);
  });

  test("its connections are numbered apart: the user's next connection after it is the next number", async () => {
    const s = await startFaultServer();
    onTestFinished(() => s.stop());
    const h = await startProxy({ resolverArg: s.resolverArg, warmUp: true });
    onTestFinished(() => h.stop());
    const carriedBy = new Map<string, number | null>();
    h.proxy.on('query', (r) => carriedBy.set(r.name ?? '', r.connectionId));
    const c = await UdpClient.open(h.port);
    onTestFinished(() => c.close());
    expect(firstA(await c.query('before.example'))).toBeDefined();
    await h.warmedUp;
    // The server closes the connection on this name (once): the next lookup goes on the user's next connection.
    s.behaviour.killers.set('close.example', 1);
    await c.query('close.example').catch(() => undefined);
    expect(firstA(await c.query('after.example'))).toBeDefined();
    const before = carriedBy.get('before.example') as number;
    expect(before).toBeGreaterThan(0);
    expect(carriedBy.get('after.example')).toBe(before + 1);
  });

  test('a stop during the warm-up is not held up by it', async () => {
    const s = await startFaultServer();
    onTestFinished(() => s.stop());
    const h = await startProxy({ resolverArg: s.resolverArg, warmUp: true });
    const from = performance.now();
    await h.stop();
    const done = await h.warmedUp;
    expect(performance.now() - from).toBeLessThan(2000);
    expect(done?.queries).toBeLessThan(2000);
  });
});
