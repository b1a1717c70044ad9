/**
 * What the network does, as dotstub classifies it from real sockets: a port
 * that refuses, a server that accepts and never finishes the handshake, a
 * server that isn't TLS, and an interceptor with its own CA. Each ends in
 * the status's `network` field and the connect-failed event with its kind,
 * a sentence and how long the attempt took. (A port that drops packets needs
 * a firewall in a namespace; its rule is unit-tested in classify.test.ts.)
 */
import net from 'node:net';
import { describe, expect, onTestFinished, test } from 'vitest';
import { startFaultServer } from '../../test-support/fault-server.js';
import { startProxy, waitForEvent } from '../../test-support/proxy-harness.js';
import { freePort } from '../../test-support/unbound.js';
import type { ConnectionEvent } from '../dotstub.js';

async function listen(onConnection: (s: net.Socket) => void): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    onConnection(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return (server.address() as net.AddressInfo).port;
}

async function firstFailure(port: number): Promise<{ event: Extract<ConnectionEvent, { type: 'connect-failed' }>; network: unknown }> {
  const h = await startProxy({ resolverArg: `127.0.0.1:${port}#dns.test`, pool: { handshakeTimeoutMs: 600 } });
  onTestFinished(() => h.stop());
  const events: ConnectionEvent[] = [];
  h.proxy.on('connection', (e) => events.push(e));
  await waitForEvent(h.proxy, 'connection', () => events.some((e) => e.type === 'connect-failed'), 5000, 'a connect failure');
  const event = events.find((e) => e.type === 'connect-failed') as Extract<ConnectionEvent, { type: 'connect-failed' }>;
  return { event, network: h.proxy.privacy.network };
}

describe('failures classified from real sockets', () => {
  test('a closed port: refused, decided at once', async () => {
    const { event, network } = await firstFailure(await freePort());
    expect(event).toMatchObject({ kind: 'refused', classification: 'NET_REFUSED', transport: 'dot' });
    expect(event.sentence).toMatch(/refuses encrypted DNS/);
    // At once: not by the 2.5 s connect timer.
    expect(event.afterMs).toBeLessThan(2000);
    expect(network).toMatchObject({ kind: 'refused', address: '127.0.0.1' });
  });

  test('accepted but the handshake never finishes: a stall, decided by the handshake timer', async () => {
    const port = await listen(() => undefined);
    const { event } = await firstFailure(port);
    expect(event.kind).toBe('handshake-stall');
    expect(event.afterMs).toBeGreaterThanOrEqual(550);
    expect(event.afterMs).toBeLessThan(5000);
  });

  test('something that is not a TLS server answers', async () => {
    const port = await listen((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    const { event } = await firstFailure(port);
    expect(['not-tls', 'reset-after-hello']).toContain(event.kind);
  });

  test('an interceptor with its own CA: intercepted, and the issuer named', async () => {
    const s = await startFaultServer({ cert: 'impostor' });
    onTestFinished(() => s.stop());
    const { event, network } = await firstFailure(s.port);
    expect(event.kind).toBe('intercepted');
    expect(event.sentence).toMatch(/issued by evil test CA/);
    expect(network).toMatchObject({ kind: 'intercepted', classification: 'NET_INTERCEPTED' });
  });
});
