/**
 * What DoT and DoH share, checked on both against real servers on real
 * sockets: a handshake that stalls after TCP connected is told apart from a
 * port that gives no answer, and a TLS session ticket is kept only from an
 * authenticated connection while it is open; a ClientHello a path swallows
 * for its size is sent again, once, with classical key agreement only, and
 * post-quantum key agreement is agreed where nothing is in the way (on a
 * runtime whose TLS library offers it: scripts/test.mjs runs this file on the
 * packaged Node 24 too).
 */
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { testPki, type TestPki } from '../../../test-support/certs.js';
import { startHelloFilter } from '../../../test-support/hello-filter.js';
import { customResolver, type ResolverSpec } from '../../config/resolvers.js';
import { ConnectTimeoutError, type DotstubError } from '../../errors.js';
import { classifyFailure } from '../../network/classify.js';
import type { ConnectionFactory, HandshakeInfo, PoolConnection } from './contract.js';
import { offersPostQuantum } from './key-agreement.js';
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

const postQuantum = offersPostQuantum();
/** The smallest packet every IPv6 path carries: a classical ClientHello fits it, a post-quantum one doesn't. */
const MIN_PATH_PACKET = 1280;

/** A connection made by the transport's own factory, closed when the test ends. */
function connect(
  factory: (r: ResolverSpec, a: AuthPolicy, o: typeof DEFAULT_POOL_OPTIONS) => ConnectionFactory,
  port: number,
  options = DEFAULT_POOL_OPTIONS,
  mode: AuthPolicy['mode'] = 'strict',
  classical = false,
): PoolConnection {
  const conn = factory(resolverAt(port), { mode, ca: [pki.caPem] }, options)({ id: 1, address: '127.0.0.1', session: undefined, classical });
  onTestFinished(() => conn.close());
  return conn;
}

/** The connection's handshake, or its failure. */
function opened(conn: PoolConnection): Promise<HandshakeInfo> {
  return new Promise((resolve, reject) => {
    conn.once('ready', resolve);
    conn.once('close', (info) => reject(info.error ?? new Error(`closed (${info.reason})`)));
  });
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
    const startedAt = performance.now();
    const conn = connect(factory, port, { ...DEFAULT_POOL_OPTIONS, connectTimeoutMs: 2_000, handshakeTimeoutMs: 300 });
    const err = await closeError(conn);
    expect(err).toBeInstanceOf(ConnectTimeoutError);
    expect(err?.message).toMatch(/handshake/);
    expect(classifyFailure(err as DotstubError, port, name).kind).toBe('handshake-stall');
    // The classical retry (where the first ClientHello was post-quantum) shares the handshake deadline: no later failure.
    expect(performance.now() - startedAt).toBeLessThan(300 + 250);
  }, 10_000);

  test('a ClientHello the path swallows for its size is sent again, once, offering classical key agreement only', async () => {
    const server = await ticketServer();
    const filter = await startHelloFilter(server.port, MIN_PATH_PACKET);
    onTestFinished(() => filter.close());
    const handshake = await opened(connect(factory, filter.port, { ...DEFAULT_POOL_OPTIONS, handshakeTimeoutMs: 1_000 }));
    expect(handshake).toMatchObject({ verified: true, keyGroup: 'X25519' });
    expect(filter.passed).toHaveLength(1);
    expect(filter.passed[0]).toBeLessThanOrEqual(MIN_PATH_PACKET);
    if (postQuantum) {
      // The first ClientHello (X25519MLKEM768's key share: ~1.6 KB) got no answer; the classical one did, half the deadline later.
      expect(filter.swallowed).toHaveLength(1);
      expect(filter.swallowed[0]).toBeGreaterThan(MIN_PATH_PACKET);
      expect(handshake.classicalOnly).toBe('retried');
      expect(handshake.handshakeMs).toBeGreaterThanOrEqual(500);
      expect(handshake.handshakeMs).toBeLessThan(1_000);
    } else {
      // OpenSSL 3.0 offers classical groups only: its ClientHello fits, nothing to retry.
      expect(filter.swallowed).toEqual([]);
      expect(handshake.classicalOnly).toBeNull();
    }
  }, 10_000);

  test('a server that began to answer and stalled gets no classical retry: the ClientHello arrived', async () => {
    const server = await ticketServer();
    const filter = await startHelloFilter(server.port, 65_535, 20);
    onTestFinished(() => filter.close());
    const startedAt = performance.now();
    const err = await closeError(connect(factory, filter.port, { ...DEFAULT_POOL_OPTIONS, handshakeTimeoutMs: 600 }));
    expect(err).toBeInstanceOf(ConnectTimeoutError);
    expect(err?.message).toMatch(/stalled for 600 ms/);
    expect(filter.passed).toHaveLength(1);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(590);
  }, 10_000);

  test('on a network that lost a post-quantum ClientHello before, the first one is classical', async () => {
    const server = await ticketServer();
    const filter = await startHelloFilter(server.port, MIN_PATH_PACKET);
    onTestFinished(() => filter.close());
    const handshake = await opened(connect(factory, filter.port, DEFAULT_POOL_OPTIONS, 'strict', true));
    expect(filter.swallowed).toEqual([]);
    expect(handshake).toMatchObject({ keyGroup: 'X25519', classicalOnly: postQuantum ? 'network' : null });
    expect(handshake.handshakeMs).toBeLessThan(500);
  }, 10_000);

  test('with nothing in the way, the best group both ends have is agreed, and said: post-quantum where the runtime has it (Node 24), X25519 where it has not (OpenSSL 3.0)', { timeout: 10_000 }, async () => {
    const server = await ticketServer();
    const handshake = await opened(connect(factory, server.port));
    // scripts/test.mjs runs this file on both runtimes: each one's own truth, never a skip.
    expect(handshake).toMatchObject({ verified: true, keyGroup: postQuantum ? 'X25519MLKEM768' : 'X25519', classicalOnly: null });
  });

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
