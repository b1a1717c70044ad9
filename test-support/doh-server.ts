/**
 * A DoH server of our own (HTTP/2 over TLS on 127.0.0.1:0 with the test
 * PKI) for what unbound won't do: record the queries exactly as they arrive,
 * delay answers per name, answer with another HTTP status, reset streams,
 * send GOAWAY. Answers come from `answerTo` (A 192.0.2.1 unless told).
 */
import http2 from 'node:http2';
import type net from 'node:net';
import tls from 'node:tls';
import dnsPacket from 'dns-packet';
import { testPki } from './certs.js';

interface ReceivedQuery {
  readonly headers: http2.IncomingHttpHeaders;
  /** The DNS message as it arrived (no length prefix). */
  readonly body: Buffer;
  readonly name: string;
}

export type DohBehaviour =
  | { readonly kind: 'answer'; readonly delayMs?: number; readonly address?: string }
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'reset'; readonly code: number }
  /** Answer for another name than asked. */
  | { readonly kind: 'wrong-question' };

export interface DohServerOptions {
  /** What to do per query name; default: answer at once. */
  readonly behaviour?: (name: string) => DohBehaviour;
  /** Present the impostor certificate (same name, a CA nobody trusts). */
  readonly impostor?: boolean;
}

export interface FakeDohServer {
  readonly port: number;
  readonly url: string;
  readonly received: ReceivedQuery[];
  /** Sends GOAWAY on every open session; `lastStreamId` omitted: every stream received so far will still be answered. */
  goaway(lastStreamId?: number): void;
  close(): Promise<void>;
}

function answer(query: Buffer, address: string, nameOverride?: string): Buffer {
  const q = dnsPacket.decode(query);
  const question = q.questions?.[0];
  if (!question) throw new Error('query without a question');
  const name = nameOverride ?? question.name;
  return dnsPacket.encode({
    type: 'response',
    id: q.id ?? 0,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [{ ...question, name }],
    answers: [{ type: 'A', name, ttl: 60, data: address }],
  });
}

export async function startFakeDohServer(options: DohServerOptions = {}): Promise<FakeDohServer> {
  const pki = testPki();
  const received: ReceivedQuery[] = [];
  const sessions = new Set<http2.ServerHttp2Session>();
  const server = http2.createSecureServer({
    key: options.impostor ? pki.impostorKey : pki.serverKey,
    cert: options.impostor ? pki.impostorCert : pki.serverCert,
    allowHTTP1: false,
  });
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', () => undefined);
    stream.on('end', () => {
      const body = Buffer.concat(chunks);
      const name = dnsPacket.decode(body).questions?.[0]?.name ?? '';
      received.push({ headers, body, name });
      const b = options.behaviour?.(name) ?? { kind: 'answer' };
      const reply = (): void => {
        if (stream.closed) return;
        if (b.kind === 'status') {
          stream.respond({ ':status': b.status, 'content-type': 'text/plain' });
          stream.end('no');
        } else if (b.kind === 'reset') {
          stream.close(b.code);
        } else {
          const out = b.kind === 'wrong-question' ? answer(body, '192.0.2.66', 'other.test') : answer(body, b.address ?? '192.0.2.1');
          stream.respond({ ':status': 200, 'content-type': 'application/dns-message', 'content-length': out.length });
          stream.end(out);
        }
      };
      if (b.kind === 'answer' && b.delayMs) setTimeout(reply, b.delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `https://${pki.authName}:${port}/dns-query`,
    received,
    goaway(lastStreamId?: number) {
      for (const s of sessions) s.goaway(http2.constants.NGHTTP2_NO_ERROR, lastStreamId);
    },
    async close() {
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A TLS server that presents the impostor certificate and counts the
 * application bytes any client sends after the handshake: what a client that
 * leaks before authenticating would send an interceptor.
 */
export async function startImpostorTls(alpn = 'h2'): Promise<{
  readonly port: number;
  /** Application bytes decrypted from clients. */
  bytesReceived(): number;
  /** TLS handshakes the server finished. */
  handshakes(): number;
  /** TCP connections accepted. */
  connections(): number;
  /** TCP connections accepted and since closed (by either side): all they sent has been received. */
  closedConnections(): number;
  close(): Promise<void>;
}> {
  const pki = testPki();
  let bytes = 0;
  let handshakes = 0;
  let connections = 0;
  let closedConnections = 0;
  const sockets = new Set<tls.TLSSocket>();
  const server = tls.createServer({ key: pki.impostorKey, cert: pki.impostorCert, ALPNProtocols: [alpn] }, (s) => {
    handshakes++;
    sockets.add(s);
    s.on('data', (d: Buffer) => (bytes += d.length));
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connection', (raw: net.Socket) => {
    connections++;
    raw.once('close', () => closedConnections++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    bytesReceived: () => bytes,
    handshakes: () => handshakes,
    connections: () => connections,
    closedConnections: () => closedConnections,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
