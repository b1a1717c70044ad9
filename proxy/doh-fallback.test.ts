/**
 * The proxy with a resolver that has a DoH URL, where port 853 is closed:
 * a client's query over UDP is answered through DNS-over-HTTPS, and the
 * proxy says so (transport, privacy state, the transport event).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { firstA, UdpClient } from '../test-support/dns-client.js';
import { startProxy, waitForEvent, waitForState, type Harness } from '../test-support/proxy-harness.js';
import { freePort, startUnbound, type UnboundServer } from '../test-support/unbound.js';
import type { TransportChange } from './upstream/managed.js';

let unbound: UnboundServer;
let h: Harness;
let client: UdpClient;
const transports: TransportChange[] = [];
let dotPort = 0;

beforeAll(async () => {
  unbound = await startUnbound({ names: 10, dohPort: 0, extra: { 'who.test.': '192.0.2.43' } });
  dotPort = await freePort();
  h = await startProxy({ resolverArg: `127.0.0.1:${dotPort}#dns.test`, dohUrl: unbound.dohUrl, warm: false });
  h.proxy.on('transport', (t) => transports.push(t));
  client = await UdpClient.open(h.port);
});
afterAll(async () => {
  client?.close();
  await h?.stop();
  await unbound?.stop();
});

test('port 853 closed: answered over DoH; status says transport doh, private, and why', async () => {
  expect(h.proxy.transport).toBeNull();
  const a = await client.query('who.test');
  expect(firstA(a)).toBe('192.0.2.43');
  await waitForState(h.proxy, 'private');
  await waitForEvent(h.proxy, 'transport', () => h.proxy.transport === 'doh');
  expect(h.proxy.privacy.state.reason).toMatch(/via DNS-over-HTTPS, verified/);
  expect(transports.map((t) => t.reason)).toContain(`port ${dotPort} is blocked here; using DNS-over-HTTPS on ${unbound.dohPort}`);
  const names = await Promise.all(Array.from({ length: 10 }, (_, i) => client.query(`n${i}.test`)));
  expect(names.map((n) => firstA(n))).toEqual(Array.from({ length: 10 }, (_, i) => `192.0.2.${i + 1}`));
});

test('DoT and DoH both unreachable: blocked, and the reason names both failures', async () => {
  const both = await startProxy({ resolverArg: `127.0.0.1:${await freePort()}#dns.test`, dohUrl: `https://dns.test:${await freePort()}/dns-query` });
  try {
    await waitForState(both.proxy, 'blocked');
    expect(both.proxy.privacy.state.reason).toMatch(/:\d+: connection refused.*DNS-over-HTTPS failed too: cannot connect .*connection refused/);
    expect(both.proxy.transport).toBeNull();
  } finally {
    await both.stop();
  }
});
