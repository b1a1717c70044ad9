/**
 * The DNS-over-HTTPS half of a connection (RFC 8484): one HTTP/2 session on
 * the connection's TLS socket, each query a POST stream of its own. Streams
 * are concurrent, so queries are pipelined and answered in any order without
 * a message ID to match: the stream is the match. The connection's life
 * (socket, authentication, deadlines, idle, drain, close) is
 * ../connection/lifecycle.ts.
 *
 *   write ──► POST stream ──► :status 200 ──► body
 *                 │             │ other        │
 *                 │             ▼              ▼
 *                 │      HttpStatusError   question checked ──► answered
 *                 ▼                            │ not echoed
 *     RST_STREAM: HttpStreamError              ▼
 *     (REFUSED_STREAM: retriable close)   QuestionMismatchError
 *
 * Invariants:
 * - A query's stream ends it exactly once: an answer, or an error of its own
 *   (status, reset, wrong question), settled through the lifecycle.
 * - The message ID on the wire is 0 (RFC 8484 §4.1: HTTP matches answers to
 *   queries, and a constant ID keeps the cache-friendly GET form identical).
 *   `upstreamId` is the connection's own number for the stream, unique among
 *   its in-flight queries.
 * - Nothing is written — no HTTP/2 preface, no query — before the server is
 *   authenticated: the lifecycle starts this half (which creates the HTTP/2
 *   session) only on an authenticated socket that negotiated h2.
 * - The URL host is reached at the resolver's own IP addresses (no DNS to
 *   find DNS) and is the name the certificate is checked against.
 * - 'bytes' counts DNS message bytes (bodies), not HTTP/2 framing or TLS.
 * - There is no RFC 7828 keepalive on DoH: HTTP/2 governs the session's life
 *   (our idle close, the server's GOAWAY).
 */
import type * as Http2 from 'node:http2';
import { createRequire } from 'node:module';
import net from 'node:net';
import tls from 'node:tls';
import { dohEndpoint, type ResolverSpec } from '../../config/resolvers.js';
import { readUpstreamAnswer, type UpstreamAnswer } from '../../dns/upstream-answer.js';
import {
  ConnectFailedError,
  ConnectionClosedError,
  HttpStatusError,
  HttpStreamError,
  isDotstubError,
  MalformedMessageError,
  QuestionMismatchError,
  type DotstubError,
} from '../../errors.js';
import type { AuthPolicy } from '../auth-policy.js';
import type { CloseReason, ConnectionFactory } from '../connection/contract.js';
import { connectionFactory } from '../connection/lifecycle.js';
import type { Link, Protocol, ProtocolHalf, Query } from '../connection/protocol.js';
import type { PoolOptions } from '../pool/options.js';

/** RFC 8484 §6: the media type of a DNS message in wire format. */
const DNS_MESSAGE = 'application/dns-message';
/** Largest DNS message (RFC 1035 §4.2.2 framing): a body beyond it is not one. */
const MAX_ANSWER_BYTES = 65535;
/** HTTP/2 error codes (RFC 9113 §7), as node:http2's constants name them. */
const NGHTTP2_NO_ERROR = 0x0;
const NGHTTP2_REFUSED_STREAM = 0x7;
const NGHTTP2_CANCEL = 0x8;

/**
 * node:http2, loaded by the first DoH session: a proxy whose resolver answers
 * over DoT (the usual case) never needs it, and loading it costs ~2 MB of
 * resident memory (its JS, its bindings, nghttp2's pages; issue 23).
 */
let http2Module: typeof Http2 | undefined;
const http2 = (): typeof Http2 => (http2Module ??= createRequire(import.meta.url)('node:http2') as typeof Http2);

type Endpoint = ReturnType<typeof dohEndpoint>;
/** A query's stream: open once written, undefined while held for the handshake. */
type Stream = Http2.ClientHttp2Stream;

/** The pool's factory for DoH sessions to `resolver` (which must have a dohUrl). */
export function dohConnectionFactory(
  resolver: ResolverSpec,
  auth: AuthPolicy,
  options: Pick<PoolOptions, 'maxInFlight' | 'idleTimeoutMs' | 'connectTimeoutMs' | 'handshakeTimeoutMs'>,
): ConnectionFactory {
  if (resolver.dohUrl === undefined) throw new RangeError(`resolver ${resolver.label} has no DNS-over-HTTPS URL`);
  // The URL's host (what the certificate must name), port, path and :authority.
  const endpoint = dohEndpoint(resolver.dohUrl);
  const host = endpoint.host;
  const protocol: Protocol<Stream> = {
    port: endpoint.port,
    authName: host,
    tls: {
      // SNI carries the URL host; an IP literal is never sent as SNI (RFC 6066 §3).
      servername: net.isIP(host) === 0 ? host : '',
      // The certificate is checked against the URL host, not the address dialled.
      checkServerIdentity: (_name, cert) => tls.checkServerIdentity(host, cert),
      // RFC 8484 §5.2: HTTP/2 is the minimum recommended version; we speak only it.
      ALPNProtocols: ['h2'],
    },
    closedWhat: 'the HTTP/2 session',
    // RFC 8484 §4.1: ID 0. A retry may hand us a copy whose ID another transport wrote.
    wireId: () => 0,
    attach: (link) => new DohHalf(link, endpoint),
  };
  return connectionFactory(resolver, auth, options, protocol);
}

class DohHalf implements ProtocolHalf<Stream> {
  readonly #link: Link<Stream>;
  readonly #endpoint: Endpoint;
  /** Created only once the socket is authenticated; undefined before. */
  #session: Http2.ClientHttp2Session | undefined;

  constructor(link: Link<Stream>, endpoint: Endpoint) {
    this.#link = link;
    this.#endpoint = endpoint;
  }

  start(): DotstubError | undefined {
    const link = this.#link;
    const socket = link.socket;
    if (socket.alpnProtocol !== 'h2') {
      return new ConnectFailedError(
        `${link.address} port ${this.#endpoint.port} does not speak HTTP/2 (ALPN ${socket.alpnProtocol || 'none'}): not a DNS-over-HTTPS server, or a proxy in the way?`,
      );
    }
    const session = http2().connect(`https://${this.#endpoint.authority}`, {
      createConnection: () => socket,
      settings: { enablePush: false },
    });
    this.#session = session;
    // RFC 9113 §6.8: the server is shutting the session down; streams above its last ID were refused and come back as retriable.
    session.on('goaway', (errorCode) => link.goAway(errorCode === NGHTTP2_NO_ERROR ? 'server-close' : 'error'));
    session.on('error', (err: NodeJS.ErrnoException) => {
      if (link.state() !== 'closed') link.fail('error', new ConnectionClosedError(`HTTP/2 session with ${link.address} failed: ${err.code ?? err.message}`, { cause: err }));
    });
    session.on('close', () => {
      if (link.state() !== 'closed') link.serverClosed();
    });
    return undefined;
  }

  write(id: number, q: Query<Stream>): void {
    const link = this.#link;
    const session = this.#session as Http2.ClientHttp2Session;
    const body = q.framed.subarray(2);
    let stream: Stream;
    try {
      stream = session.request({
        ':method': 'POST',
        ':path': this.#endpoint.path,
        'content-type': DNS_MESSAGE,
        accept: DNS_MESSAGE,
        'content-length': body.length,
      });
    } catch (err) {
      // The session is closing (GOAWAY received, or out of stream IDs).
      link.settle(id, new ConnectionClosedError(`HTTP/2 session with ${link.address} cannot open a stream: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err }));
      return;
    }
    q.own = stream;
    stream.end(body);
    link.bytes(body.length, 0);
    let status = 0;
    let contentType = '';
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
      contentType = String(headers['content-type'] ?? '');
    });
    stream.on('data', (chunk: Buffer) => {
      if (link.queries.get(id) !== q) return;
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        link.settle(id, new MalformedMessageError(`answer from ${link.address} is larger than any DNS message (${size} bytes)`));
        stream.close(NGHTTP2_CANCEL);
        return;
      }
      chunks.push(chunk);
    });
    // Each handler first checks the query is still this stream's: a query
    // taken back frees its ID for a later one.
    stream.on('end', () => {
      if (link.queries.get(id) !== q) return;
      link.bytes(0, size);
      if (status !== 200) {
        link.settle(id, new HttpStatusError(`DNS-over-HTTPS server ${this.#endpoint.authority} at ${link.address} answered HTTP ${status || 'without a status'}`, status));
        return;
      }
      if (!contentType.toLowerCase().startsWith(DNS_MESSAGE)) {
        link.settle(id, new MalformedMessageError(`DNS-over-HTTPS server at ${link.address} answered "${contentType || 'no content-type'}", not ${DNS_MESSAGE}`));
        return;
      }
      this.#onAnswer(id, q, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
    stream.on('error', (err: NodeJS.ErrnoException) => {
      // 'close' follows with the RST code; it decides.
      void err;
    });
    stream.on('close', () => {
      if (link.queries.get(id) !== q) return;
      const code = stream.rstCode ?? NGHTTP2_NO_ERROR;
      const state = link.state();
      if (code === NGHTTP2_REFUSED_STREAM || state === 'closed' || state === 'draining') {
        // RFC 9113 §8.7: a refused stream (or one the server's GOAWAY left
        // unprocessed) was not acted on and is safe to retry elsewhere.
        link.settle(id, new ConnectionClosedError(`${link.address} did not process the query (HTTP/2 stream refused or connection going away)`));
      } else {
        link.settle(id, new HttpStreamError(`DNS-over-HTTPS server at ${link.address} reset the request (HTTP/2 error ${code})`, code));
      }
    });
  }

  abandon(q: Query<Stream>): void {
    // RST_STREAM(CANCEL), RFC 9113 §8.4: the server may stop working on it.
    if (q.own && !q.own.closed) q.own.close(NGHTTP2_CANCEL);
  }

  shutdown(reason: CloseReason): void {
    const socket = this.#link.socket;
    const graceful = reason === 'idle' || reason === 'local' || reason === 'server-close';
    if (this.#session) {
      // GOAWAY then close (RFC 9113 §6.8) when we choose to; at once otherwise.
      if (graceful) this.#session.close(() => socket.destroy());
      else this.#session.destroy();
    }
    if (!this.#session || !graceful) socket.destroy();
  }

  #onAnswer(id: number, q: Query<Stream>, raw: Buffer): void {
    const link = this.#link;
    let answer: UpstreamAnswer;
    try {
      answer = readUpstreamAnswer(raw, q.question);
    } catch (err) {
      if (err instanceof QuestionMismatchError) link.mismatch(err.asked, err.got);
      // Authenticated HTTP can't carry a spoofed answer, and a stream gets one
      // body: no other answer will come, so fail now rather than at the deadline.
      link.settle(id, isDotstubError(err) ? err : new MalformedMessageError(String(err)));
      return;
    }
    const outOfOrder = !link.queries.isOldest(id);
    link.queries.take(id);
    link.answered(id, q, answer, outOfOrder);
  }
}
