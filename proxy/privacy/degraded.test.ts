/**
 * The ladder's last step (docs/networks.md#the-fallback-ladder): opportunistic mode with the cleartext
 * fallback allowed. Encrypted DNS is refused → the network's own resolver
 * answers, unencrypted, in state `degraded`, never cached; once an encrypted
 * connection opens, back to it. Strict mode never gets there, whatever the
 * setting. Real servers: the network's resolver (lab-dns-server.mjs) and
 * Debian's unbound appearing on the resolver's port later.
 */
import { describe, expect, onTestFinished, test } from 'vitest';
import { parseResolverArg } from '../config/resolvers.js';
import { defaultConfig, startDotstub, type StubProxy } from '../dotstub.js';
import type { QueryRecord } from '../engine/query-record.js';
import { testPki } from '../../test-support/certs.js';
import { firstA, UdpClient } from '../../test-support/dns-client.js';
import { startHotspotDns } from '../../test-support/fake-portal.js';
import { waitForEvent, waitForState } from '../../test-support/proxy-harness.js';
import { freePort, startUnbound } from '../../test-support/unbound.js';

async function start(mode: 'strict' | 'opportunistic'): Promise<{ proxy: StubProxy; client: UdpClient; resolverPort: number; asked: string[]; records: QueryRecord[] }> {
  const dns = await startHotspotDns();
  onTestFinished(() => dns.stop());
  const resolverPort = await freePort();
  const { proxy, bound } = await startDotstub(
    defaultConfig(parseResolverArg(`127.0.0.1:${resolverPort}#dns.test`), {
      listen: [{ host: '127.0.0.1', port: 0 }],
      auth: { mode, ca: [testPki().caPem] },
      watchNetwork: false,
      allowDegraded: true,
      networkDns: [`127.0.0.1:${dns.port}`],
      pool: { ...defaultConfig(parseResolverArg('quad9')).pool, maxBackoffMs: 1000 },
    }),
  );
  onTestFinished(() => proxy.stop(300));
  const client = await UdpClient.open(bound[0]!.port);
  onTestFinished(() => client.close());
  const records: QueryRecord[] = [];
  proxy.on('query', (r) => records.push(r));
  return { proxy, client, resolverPort, asked: dns.asked, records };
}

describe('degraded mode', () => {
  test('opportunistic + allowed: the network resolver answers unencrypted while 853 is refused, uncached; encrypted again as soon as it connects', async () => {
    const r = await start('opportunistic');
    await waitForState(r.proxy, 'degraded', 5000);
    expect(r.proxy.privacy.state.reason).toMatch(/unencrypted to this network's resolver \(127\.0\.0\.1\)/);
    const a = await r.client.query('www.example');
    expect(firstA(a)).toBe('127.0.0.1');
    await r.client.query('www.example');
    expect(r.records.filter((q) => q.name === 'www.example').map((q) => q.source)).toEqual(['cleartext', 'cleartext']);
    expect(r.asked.filter((q) => q === 'www.example a')).toHaveLength(2);

    const unbound = await startUnbound({ port: r.resolverPort, localData: ['www.example. 60 IN A 192.0.2.99'] });
    onTestFinished(() => unbound.stop());
    await waitForState(r.proxy, 'private', 5000);
    const before = r.asked.length;
    expect(firstA(await r.client.query('www.example'))).toBe('192.0.2.99');
    expect(r.asked.length).toBe(before);
  });

  test('strict mode never falls back to cleartext, whatever the setting', async () => {
    const r = await start('strict');
    await waitForState(r.proxy, 'blocked', 5000);
    let attempts = 0;
    r.proxy.on('connection', (e) => void (e.type === 'close' && e.error !== null && attempts++));
    expect((await r.client.query('www.example', { timeoutMs: 3000 })).rcode).toBe('SERVFAIL');
    // Two more refused attempts after it (the back-off is capped at 1 s here): where opportunistic mode falls back.
    await waitForEvent(r.proxy, 'connection', () => attempts >= 2, 5000, 'two more refused attempts');
    expect(r.proxy.privacy.state.state).toBe('blocked');
    expect(r.asked).toEqual([]);
  });
});
