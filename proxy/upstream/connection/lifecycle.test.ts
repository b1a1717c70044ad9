/**
 * What DoT and DoH share, checked on both against real servers on real
 * sockets: a handshake that stalls after TCP connected is told apart from a
 * port that gives no answer, and a TLS session ticket is kept only from an
 * authenticated connection while it is open.
 */
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { testPki, type TestPki } from '../../../test-support/certs.js';
import { customResolver, type ResolverSpec } from '../../config/resolvers.js';
import { ConnectTimeoutError, type DotstubError } from '../../errors.js';
import { classifyFailure } from '../../network/classify.js';
import type { ConnectionFactory, PoolConnection } from './contract.js';
import { dohConnectionFactory } from '../doh/connection.js';
import { dotConnectionFactory } from '../dot/connection.js';
import type { AuthPolicy } from '../auth-policy.js';
import { DEFAULT_POOL_OPTIONS } from '../pool/options.js';

const transports = [
  { name: 'DoT', factory: dotConnectionFactory },
  { name: 'DoH', factory: dohConnectionFactory },
] as const;

let pki: TestPki;
beforeAll(() => {
  pki = testPki();
});

function resolverAt(port: number): ResolverSpec {
  return customResolver({ address: '127.0.0.1', port, authName: pki.authName, dohUrl: `https://${pki.authName}:${port}/dns-query` });
}

/** A connection made by the transport's own factory, closed when the test ends. */
function connect(
  factory: (r: ResolverSpec, a: AuthPolicy, o: typeof DEFAULT_POOL_OPTIONS) => ConnectionFactory,
  port: number,
  options = DEFAULT_POOL_OPTIONS,
  mode: AuthPolicy['mode'] = 'strict',
): PoolConnection {
  const conn = factory(resolverAt(port), { mode, ca: [pki.caPem] }, options)({ id: 1, address: '127.0.0.1', session: undefined });
  onTestFinished(() => conn.close());
  return conn;
}

function closeError(conn: PoolConnection): Promise<DotstubError | undefined> {
  return new Promise((resolve) => conn.once('close', (info) => resolve(info.error)));
}

/** A TCP listener that accepts and never says a word: TCP connects, TLS never completes. */
async function silentListener(): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as net.AddressInfo).port;
}

/**
 * A TLS 1.3 server with the test certificate that sends session tickets
 * after the handshake: HTTP/2 for DoH, and (no ALPN offered) a TLS peer that
 * stays silent for DoT.
 */
async function ticketServer(impostor = false): Promise<{ port: number; closed: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let onClose: (() => void) | undefined;
  const server = http2.createSecureServer({
    key: impostor ? pki.impostorKey : pki.serverKey,
    cert: impostor ? pki.impostorCert : pki.serverCert,
    allowHTTP1: true,
    minVersion: 'TLSv1.3',
  });
  server.on('secureConnection', (s: tls.TLSSocket) => s.on('error', () => undefined));
  // The TCP connection, whatever became of its TLS: closed, nothing more can reach the client.
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => {
      sockets.delete(s);
      onClose?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    /** Resolves once the server has seen its client's connection end: nothing more can reach the client. */
    closed: () => new Promise((resolve) => (onClose = resolve)),
  };
}

describe.each(transports)('$name', ({ name, factory }) => {
  test('a handshake that stalls after TCP connected is a handshake stall, not a port that gives no answer', async () => {
    const port = await silentListener();
    const conn = connect(factory, port, { ...DEFAULT_POOL_OPTIONS, connectTimeoutMs: 2_000, handshakeTimeoutMs: 300 });
    const err = await closeError(conn);
    expect(err).toBeInstanceOf(ConnectTimeoutError);
    expect(err?.message).toMatch(/handshake/);
    expect(classifyFailure(err as DotstubError, port, name).kind).toBe('handshake-stall');
  }, 10_000);

  test('an authenticated connection passes on its session tickets', async () => {
    const server = await ticketServer();
    const conn = connect(factory, server.port);
    const ticket = await new Promise<Buffer>((resolve) => conn.once('session', resolve));
    expect(conn.handshake?.verified).toBe(true);
    expect(ticket.length).toBeGreaterThan(0);
  }, 10_000);

  test('a connection closed as it authenticated keeps none of the tickets that arrive after', async () => {
    const server = await ticketServer();
    const conn = connect(factory, server.port);
    let tickets = 0;
    conn.on('session', () => tickets++);
    conn.once('ready', () => conn.close('local'));
    await server.closed();
    expect(conn.state).toBe('closed');
    expect(tickets).toBe(0);
  }, 10_000);

  test('an unverified connection (opportunistic, impostor certificate) passes on no ticket', async () => {
    const server = await ticketServer(true);
    const conn = connect(factory, server.port, DEFAULT_POOL_OPTIONS, 'opportunistic');
    let tickets = 0;
    conn.on('session', () => tickets++);
    const ready = await new Promise((resolve) => conn.once('ready', resolve));
    expect(ready).toMatchObject({ verified: false });
    conn.close('local');
    await server.closed();
    expect(tickets).toBe(0);
  }, 10_000);
});
