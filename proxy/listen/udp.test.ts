/**
 * The UDP listener on its own, with the real engine's parser behind a small
 * handler (local answers only, no upstream): what the kernel grants for the
 * receive buffer, and the cap on error answers to a garbage flood.
 */
import dgram from 'node:dgram';
import fs from 'node:fs';
import { describe, expect, onTestFinished, test } from 'vitest';
import { queryBytes, UdpClient } from '../../test-support/dns-client.js';
import { parseClientQuery } from '../dns/client-query.js';
import { servfail } from '../dns/local-reply.js';
import { ClientShares } from './client-shares.js';
import { ERROR_REPLIES_PER_SECOND, UDP_BUFFER_BYTES, UdpListener } from './udp.js';

/** Parses like the engine; error replies at once, a SERVFAIL (as if the resolver were blocked) for a query. */
const local = (raw: Buffer, _t: 'udp' | 'tcp', reply: (a: Buffer) => void): boolean => {
  const p = parseClientQuery(raw, 'udp');
  if (p.ok) {
    reply(servfail(p.query));
    return true;
  }
  if (!p.reply) return false;
  reply(p.reply);
  return true;
};

async function listener(): Promise<{ udp: UdpListener; port: number }> {
  const udp = new UdpListener({ host: '127.0.0.1', port: 0 }, local, new ClientShares(() => 1000));
  const { port } = await udp.listen();
  onTestFinished(() => udp.close());
  return { udp, port };
}

describe('UDP listener', () => {
  test('the receive buffer is what the kernel grants of 4 MiB (net.core.rmem_max), reported doubled by Linux', async () => {
    const { udp } = await listener();
    const rmemMax = Number(fs.readFileSync('/proc/sys/net/core/rmem_max', 'utf8'));
    expect(udp.receiveBufferBytes).toBe(2 * Math.min(UDP_BUFFER_BYTES, rmemMax));
  });

  test('a burst of 5,000 malformed datagrams gets at most about a second\'s budget of FORMERR; a good query in it still gets its answer', async () => {
    const { udp, port } = await listener();
    const flood = dgram.createSocket('udp4');
    onTestFinished(() => new Promise<void>((r) => flood.close(() => r())));
    await new Promise<void>((r) => flood.bind(0, '127.0.0.1', r));
    flood.setRecvBufferSize(4 * 1024 * 1024);
    let replies = 0;
    flood.on('message', () => replies++);
    // qdcount 2: FORMERR from the header alone.
    const bad = Buffer.from(queryBytes('n1.test', { id: 1, edns: null }));
    bad.writeUInt16BE(2, 4);
    for (let i = 0; i < 5000; i++) flood.send(bad, port, '127.0.0.1');
    const good = await UdpClient.open(port);
    onTestFinished(() => good.close());
    const a = await good.query('n1.test', { timeoutMs: 2000 });
    expect(a.rcode).toBe('SERVFAIL');
    // Kept: the replies still on their way are counted, so the upper bound below is honest; no event says "the last one".
    await new Promise((r) => setTimeout(r, 300));
    // Sending 5,000 takes well under a second here; allow for the refill during it.
    expect(replies).toBeGreaterThan(ERROR_REPLIES_PER_SECOND / 2);
    expect(replies).toBeLessThan(ERROR_REPLIES_PER_SECOND * 2);
    // The rest were dropped, not answered (the kernel may have dropped a few before we saw them).
    expect(udp.errorsDropped).toBeGreaterThan(2500);
    expect(udp.errorsDropped + replies).toBeLessThanOrEqual(5000);
  });

  test('the clients it remembers stay bounded: 600 clients (source ports) one query each, all answered, at most 256 idle kept', async () => {
    const { udp, port } = await listener();
    for (let i = 0; i < 600; i++) {
      const c = await UdpClient.open(port);
      try {
        expect((await c.query(`n${i}.test`, { timeoutMs: 2000 })).rcode).toBe('SERVFAIL');
      } finally {
        c.close();
      }
    }
    expect(udp.clients).toBeGreaterThan(0);
    expect(udp.clients).toBeLessThanOrEqual(256);
  });
});
