/**
 * The fallback against real servers: DoT to a port where nothing listens,
 * DoH to Debian's unbound. Queries are answered over DoH; once a DoT server
 * appears on that port (a second unbound), they go back to DoT by themselves.
 * The two unbounds answer `who.test` differently, so each answer says which
 * path it took.
 */
import dnsPacket from 'dns-packet';
import { afterAll, expect, test } from 'vitest';
import { freePort, startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { request } from '../../test-support/upstream-requests.js';
import { customResolver } from '../config/resolvers.js';
import type { UpstreamAnswer } from '../dns/upstream-answer.js';
import type { DotstubError } from '../errors.js';
import { dohConnectionFactory } from './doh/connection.js';
import { dotConnectionFactory } from './dot/connection.js';
import { Fallback } from './fallback.js';
import type { TransportChange } from './managed.js';
import { Pool } from './pool.js';
import { DEFAULT_POOL_OPTIONS } from './pool/options.js';

const servers: UnboundServer[] = [];
let fallback: Fallback | undefined;
afterAll(async () => {
  fallback?.destroy();
  await Promise.all(servers.map((s) => s.stop()));
});

function who(f: Fallback): Promise<{ err: DotstubError | null; address: string | undefined }> {
  return new Promise((resolve) =>
    f.resolve(request('who.test'), (_r, err, answer: UpstreamAnswer | null) => {
      const a = answer ? dnsPacket.decode(answer.raw).answers?.find((r) => r.type === 'A') : undefined;
      resolve({ err, address: a && 'data' in a ? String(a.data) : undefined });
    }),
  );
}

test('DoT port closed: answered over DoH; DoT appears: back to DoT, without a query lost', async () => {
  const doh = await startUnbound({ names: 10, dohPort: 0, extra: { 'who.test.': '192.0.2.43' } });
  servers.push(doh);
  const dotPort = await freePort();
  const resolver = customResolver({ address: '127.0.0.1', port: dotPort, authName: 'dns.test', dohUrl: doh.dohUrl });
  const auth = { mode: 'strict' as const, ca: [doh.pki.caPem] };
  const options = { ...DEFAULT_POOL_OPTIONS, connectTimeoutMs: 2000 };
  fallback = new Fallback({
    primary: new Pool({ transport: 'dot', resolver, options, selfRetry: false, factory: dotConnectionFactory(resolver, auth, options) }),
    secondary: new Pool({ transport: 'doh', resolver, options, factory: dohConnectionFactory(resolver, auth, options) }),
    primaryPort: dotPort,
    secondaryPort: doh.dohPort as number,
    // The ladder's 10 s / 5 s → 60 s, scaled down for a test.
    options: { minSwitchIntervalMs: 1000, probeMinMs: 200, probeMaxMs: 400 },
  });
  const events: TransportChange[] = [];
  fallback.on('transport', (e) => events.push(e));

  const first = await who(fallback);
  expect(first).toEqual({ err: null, address: '192.0.2.43' });
  expect(fallback.transport).toBe('doh');
  expect(events.map((e) => e.reason)).toContain(`port ${dotPort} is blocked here; using DNS-over-HTTPS on ${doh.dohPort}`);
  expect(events.find((e) => e.detail)?.detail).toMatch(/ECONNREFUSED/);

  const dot = await startUnbound({ names: 10, port: dotPort, extra: { 'who.test.': '192.0.2.85' } });
  servers.push(dot);
  const answers: string[] = [];
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const r = await who(fallback);
    expect(r.err).toBeNull();
    answers.push(r.address as string);
    if (r.address === '192.0.2.85') break;
    await new Promise((res) => setTimeout(res, 50));
  }
  expect(answers.at(-1)).toBe('192.0.2.85');
  expect(fallback.transport).toBe('dot');
  expect(events.at(-1)?.reason).toBe(`port ${dotPort} works again; back to DNS-over-TLS`);
  // Every answer before the switch came over DoH; none was lost or failed.
  expect(answers.slice(0, -1).every((a) => a === '192.0.2.43')).toBe(true);
});
