/**
 * Resumption never launders authentication: a ticket from a connection that
 * did not verify (opportunistic mode) must not make the next connection look
 * verified. Against Debian's unbound, with the test CA not trusted.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startUnbound, type UnboundServer } from '../../../test-support/unbound.js';
import { request } from '../../../test-support/upstream-requests.js';
import { customResolver } from '../../config/resolvers.js';
import type { HandshakeInfo } from '../connection/contract.js';
import { Pool } from '../pool.js';
import { DEFAULT_POOL_OPTIONS } from '../pool/options.js';
import { dotConnectionFactory } from './connection.js';

let unbound: UnboundServer;
beforeAll(async () => {
  unbound = await startUnbound({ names: 10 });
});
afterAll(async () => {
  await unbound.stop();
});

test('opportunistic: an unverified connection yields no ticket, so the next one is not "verified" by resuming it', async () => {
  const resolver = customResolver({ address: unbound.host, port: unbound.port, authName: 'dns.test' });
  const options = { ...DEFAULT_POOL_OPTIONS, idleTimeoutMs: 150 };
  const pool = new Pool({ transport: 'dot', resolver, options, factory: dotConnectionFactory(resolver, { mode: 'opportunistic', ca: [] }, options) });
  const opened: HandshakeInfo[] = [];
  pool.on('open', (e) => opened.push(e));
  const closed = new Promise<void>((r) => pool.once('close', () => r()));
  const ask = (name: string): Promise<void> => new Promise((r) => pool.resolve(request(name), () => r()));
  try {
    await ask('n1.test');
    // The idle close (150 ms), awaited rather than slept through.
    await closed;
    await ask('n2.test');
    expect(opened).toHaveLength(2);
    expect(opened.map((o) => o.verified)).toEqual([false, false]);
    expect(opened[1]?.resumed).toBe(false);
  } finally {
    pool.destroy();
  }
});
