/**
 * One DNS-over-HTTPS session (RFC 8484): one TLS connection to one resolver
 * address carrying one HTTP/2 session, each query a POST stream of its own.
 * Streams are concurrent, so queries are pipelined and answered in any order
 * without a message ID to match: the stream is the match. Implements the
 * pool's PoolConnection contract (../connection.ts).
 *
 *   send() ──► [held until authenticated] ──► POST stream ──► :status 200 ──► body
 *                                                 │             │ other        │
 *                                                 │             ▼              ▼
 *                                                 │      HttpStatusError   question checked ──► handler
 *                                                 ▼                            │ not echoed
 *                                     RST_STREAM: HttpStreamError              ▼
 *                                     (REFUSED_STREAM: retriable close)   QuestionMismatchError
 *
 * Invariants:
 * - Every query handed to send() gets exactly one handler call: an answer,
 *   or an error (its stream's, or the connection's when it closes), unless
 *   cancel() took it back first. `#pending` holds it until then; an entry
 *   leaves it exactly once.
 * - The message ID on the wire is 0 (RFC 8484 §4.1: HTTP matches answers to
 *   queries, and a constant ID keeps the cache-friendly GET form identical).
 *   `upstreamId` is this connection's own per-stream number, unique among its
 *   in-flight queries.
 * - Nothing is written — no HTTP/2 preface, no query — before the server is
 *   authenticated as the policy requires: the HTTP/2 session is only created
 *   on an authenticated socket.
 * - The URL host is reached at the resolver's own IP addresses (no DNS to
 *   find DNS) and is the name the certificate is checked against.
 * - 'bytes' counts DNS message bytes (bodies), not HTTP/2 framing or TLS.
 * - There is no RFC 7828 keepalive on DoH: HTTP/2 governs the session's life
 *   (our idle close, the server's GOAWAY).
 */
import { EventEmitter } from 'node:events';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { dohEndpoint, type ResolverSpec } from '../../config/resolvers.js';
import { readUpstreamAnswer, type UpstreamAnswer, type UpstreamQuestion } from '../../dns/wire.js';
import {
  ConnectFailedError,
  ConnectionClosedError,
  ConnectTimeoutError,
  HttpStatusError,
  HttpStreamError,
  isDotstubError,
  MalformedMessageError,
  QuestionMismatchError,
  type DotstubError,
} from '../../errors.js';
import type {
  AnswerHandler,
  CloseReason,
  ConnectionFactory,
  ConnectionState,
  HandshakeInfo,
  PoolConnection,
  PoolConnectionEvents,
  SendInfo,
} from '../connection.js';
import { secureContextFor, type AuthPolicy } from '../dot/tls.js';
import type { PoolOptions } from '../pool/options.js';
import { authenticatePeer, socketFailure } from '../tls.js';

/** RFC 8484 §6: the media type of a DNS message in wire format. */
const DNS_MESSAGE = 'application/dns-message';
/** Largest DNS message (RFC 1035 §4.2.2 framing): a body beyond it is not one. */
const MAX_ANSWER_BYTES = 65535;
const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM, NGHTTP2_NO_ERROR } = http2.constants;

interface DohConnectionOptions {
  readonly id: number;
  readonly resolver: ResolverSpec;
  readonly address: string;
  readonly auth: AuthPolicy;
  /** Shared per trust-anchor set (secureContextFor); undefined: Node's default roots. */
  readonly secureContext: tls.SecureContext | undefined;
  /** A TLS session ticket from an earlier authenticated connection to this address. */
  readonly session: Buffer | undefined;
  readonly maxInFlight: number;
  readonly idleTimeoutMs: number;
  /** Deadline for the TCP connect. */
  readonly connectTimeoutMs: number;
  /** Deadline for the TLS handshake once TCP is connected. */
  readonly handshakeTimeoutMs: number;
}

interface Pending {
  readonly question: UpstreamQuestion;
  readonly handler: AnswerHandler<unknown>;
  readonly ctx: unknown;
  /** The DNS message (no length prefix), ID 0. */
  readonly body: Buffer;
  /** performance.now() when the stream was opened (0 while held for the handshake). */
  writtenAt: number;
  /** Open once written; undefined while held. */
  stream: http2.ClientHttp2Stream | undefined;
}

/** The pool's factory for DoH sessions to `resolver` (which must have a dohUrl). */
export function dohConnectionFactory(
  resolver: ResolverSpec,
  auth: AuthPolicy,
  options: Pick<PoolOptions, 'maxInFlight' | 'idleTimeoutMs' | 'connectTimeoutMs' | 'handshakeTimeoutMs'>,
): ConnectionFactory {
  if (resolver.dohUrl === undefined) throw new RangeError(`resolver ${resolver.label} has no DNS-over-HTTPS URL`);
  const secureContext = secureContextFor(auth);
  return (spec) =>
    new DohConnection({
      id: spec.id,
      resolver,
      address: spec.address,
      auth,
      secureContext,
      session: spec.session,
      maxInFlight: options.maxInFlight,
      idleTimeoutMs: options.idleTimeoutMs,
      connectTimeoutMs: options.connectTimeoutMs,
      handshakeTimeoutMs: options.handshakeTimeoutMs,
    });
}

class DohConnection extends EventEmitter<PoolConnectionEvents> implements PoolConnection {
  readonly id: number;
  readonly address: string;
  readonly createdAt = Date.now();
  readonly #opts: DohConnectionOptions;
  /** The URL's host (what the certificate must name), port, path and :authority. */
  readonly #endpoint: ReturnType<typeof dohEndpoint>;
  readonly #socket: tls.TLSSocket;
  /** Created only once the socket is authenticated; undefined before. */
  #session: http2.ClientHttp2Session | undefined;
  /** In flight by upstreamId; insertion order = send order, first = oldest. */
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #state: ConnectionState = 'connecting';
  /** drain() was called while connecting: go straight to draining once ready. */
  #drainRequested = false;
  #connectTimer: NodeJS.Timeout | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #idleSince = 0;
  #closeReason: CloseReason | undefined;
  #queriesCarried = 0;
  #handshake: HandshakeInfo | undefined;
  #lastAnswerAt = 0;
  /** A ticket that arrived before authentication finished (TLS 1.2 sends it in the handshake): emitted only if it succeeds. */
  #earlyTicket: Buffer | undefined;
  /** TCP connected: a failure now is in the TLS handshake (for the classification). */
  #tcpConnected = false;
  readonly #startedAt = performance.now();

  constructor(opts: DohConnectionOptions) {
    super();
    this.id = opts.id;
    this.address = opts.address;
    this.#opts = opts;
    this.#endpoint = dohEndpoint(opts.resolver.dohUrl as string);
    const host = this.#endpoint.host;
    this.#socket = tls.connect({
      host: opts.address,
      port: this.#endpoint.port,
      // SNI carries the URL host; an IP literal is never sent as SNI (RFC 6066 §3).
      servername: net.isIP(host) === 0 ? host : '',
      // The certificate is checked against the URL host, not the address dialled.
      checkServerIdentity: (_name, cert) => tls.checkServerIdentity(host, cert),
      // RFC 8484 §5.2: HTTP/2 is the minimum recommended version; we speak only it.
      ALPNProtocols: ['h2'],
      minVersion: 'TLSv1.2',
      secureContext: opts.secureContext,
      // Authenticated on 'secureConnect' (../tls.ts) so opportunistic mode can
      // proceed and strict mode can say why it refused.
      rejectUnauthorized: false,
      session: opts.session,
    });
    this.#socket.setNoDelay(true);
    // Two timers, as DoT has: the TCP connect, then the TLS handshake. A
    // dropped port and a stalled handshake are different problems.
    this.#connectTimer = setTimeout(() => {
      this.#fail(
        'error',
        new ConnectTimeoutError(`port ${this.#endpoint.port} at ${opts.address} gave no answer within ${opts.connectTimeoutMs} ms: probably blocked on this network`, 'connect'),
      );
    }, opts.connectTimeoutMs);
    this.#socket.once('secureConnect', () => this.#onSecureConnect());
    this.#socket.on('session', (ticket: Buffer) => {
      if (this.#handshake?.verified) this.emit('session', ticket);
      else if (this.#state === 'connecting') this.#earlyTicket = ticket;
    });
    this.#socket.once('connect', () => {
      this.#tcpConnected = true;
      clearTimeout(this.#connectTimer);
      if (this.#state !== 'connecting') return;
      this.#connectTimer = setTimeout(() => {
        this.#fail(
          'error',
          new ConnectTimeoutError(`the TLS handshake with ${opts.address} stalled for ${opts.handshakeTimeoutMs} ms after the connection opened`, 'handshake'),
        );
      }, opts.handshakeTimeoutMs);
    });
    this.#socket.on('error', (err: NodeJS.ErrnoException) => {
      if (this.#state === 'closed') return;
      const f = socketFailure(err, { connecting: this.#state === 'connecting', tcpConnected: this.#tcpConnected, address: opts.address, port: this.#endpoint.port });
      this.#fail(f.reason, f.error);
    });
    this.#socket.on('close', () => {
      if (this.#state !== 'closed') this.#fail(this.#state === 'connecting' ? 'error' : 'reset', undefined);
    });
  }

  get state(): ConnectionState {
    return this.#state;
  }
  get inFlight(): number {
    return this.#pending.size;
  }
  get queriesCarried(): number {
    return this.#queriesCarried;
  }
  get handshake(): HandshakeInfo | undefined {
    return this.#handshake;
  }
  /** HTTP/2 governs the session's life (idle close, GOAWAY); there is no RFC 7828 timeout. */
  get keepaliveMs(): number | undefined {
    return undefined;
  }
  get idleTimeoutMs(): number {
    return this.#opts.idleTimeoutMs;
  }
  get available(): boolean {
    return (this.#state === 'connecting' || this.#state === 'open') && !this.#drainRequested && this.#pending.size < this.#opts.maxInFlight;
  }
  get lastAnswerAt(): number {
    return this.#lastAnswerAt;
  }

  /** Sends a framed query (two-octet length first, as the engine builds it for every stream transport); its ID octets are set to 0. */
  send<T>(framed: Buffer, question: UpstreamQuestion, handler: AnswerHandler<T>, ctx: T): SendInfo | null {
    if (!this.available) return null;
    // RFC 8484 §4.1: ID 0. A retry may hand us a copy whose ID another transport wrote.
    framed.writeUInt16BE(0, 2);
    let id = this.#nextId;
    while (this.#pending.has(id)) id = id >= 0x7fffffff ? 1 : id + 1;
    this.#nextId = id >= 0x7fffffff ? 1 : id + 1;
    const pending: Pending = { question, handler: handler as AnswerHandler<unknown>, ctx, body: framed.subarray(2), writtenAt: 0, stream: undefined };
    this.#pending.set(id, pending);
    this.#queriesCarried++;
    const reused = this.#state === 'open';
    if (reused) this.#write(id, pending);
    return { connection: this, upstreamId: id, reused, depth: this.#pending.size };
  }

  cancel(upstreamId: number): void {
    const p = this.#pending.get(upstreamId);
    if (!p) return;
    this.#pending.delete(upstreamId);
    // RST_STREAM(CANCEL), RFC 9113 §8.4: the server may stop working on it.
    if (p.stream && !p.stream.closed) p.stream.close(NGHTTP2_CANCEL);
    this.#afterSettle();
  }

  writtenAt(upstreamId: number): number {
    return this.#pending.get(upstreamId)?.writtenAt ?? 0;
  }

  drain(): void {
    if (this.#state === 'closed') return;
    if (this.#pending.size === 0) {
      this.close('local');
      return;
    }
    this.#drainRequested = true;
    if (this.#state === 'open') this.#state = 'draining';
  }

  close(reason: CloseReason = 'local'): void {
    if (this.#state === 'closed') return;
    this.#fail(reason, undefined);
  }

  #onSecureConnect(): void {
    if (this.#state !== 'connecting') return;
    const opts = this.#opts;
    const socket = this.#socket;
    const resumed = socket.isSessionReused();
    const auth = authenticatePeer(
      socket,
      { mode: opts.auth.mode, pins: opts.resolver.pins, authName: this.#endpoint.host, address: opts.address, label: opts.resolver.label },
      resumed,
    );
    if (!auth.ok) {
      this.#fail('error', auth.error);
      return;
    }
    if (socket.alpnProtocol !== 'h2') {
      this.#fail(
        'error',
        new ConnectFailedError(
          `${opts.address} port ${this.#endpoint.port} does not speak HTTP/2 (ALPN ${socket.alpnProtocol || 'none'}): not a DNS-over-HTTPS server, or a proxy in the way?`,
        ),
      );
      return;
    }
    clearTimeout(this.#connectTimer);
    this.#connectTimer = undefined;
    const session = http2.connect(`https://${this.#endpoint.authority}`, {
      createConnection: () => socket,
      settings: { enablePush: false },
    });
    this.#session = session;
    session.on('goaway', (errorCode) => this.#onGoaway(errorCode));
    session.on('error', (err: NodeJS.ErrnoException) => {
      if (this.#state !== 'closed') this.#fail('error', new ConnectionClosedError(`HTTP/2 session with ${opts.address} failed: ${err.code ?? err.message}`, { cause: err }));
    });
    session.on('close', () => {
      if (this.#state !== 'closed') this.#fail(this.#closeReason ?? 'server-close', undefined);
    });
    this.#state = this.#drainRequested ? 'draining' : 'open';
    const cipher = socket.getCipher();
    this.#handshake = {
      connectionId: this.id,
      address: opts.address,
      resumed,
      verified: auth.verified,
      authError: auth.authError,
      tlsVersion: socket.getProtocol() ?? 'unknown',
      cipher: cipher.standardName ?? cipher.name,
      handshakeMs: performance.now() - this.#startedAt,
    };
    this.emit('ready', this.#handshake);
    if (this.#earlyTicket && auth.verified) this.emit('session', this.#earlyTicket);
    this.#earlyTicket = undefined;
    if (this.#pending.size > 0) {
      for (const [id, p] of this.#pending) if (p.writtenAt === 0) this.#write(id, p);
    } else {
      this.#armIdle();
    }
  }

  #write(id: number, p: Pending): void {
    const session = this.#session as http2.ClientHttp2Session;
    p.writtenAt = performance.now();
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request({
        ':method': 'POST',
        ':path': this.#endpoint.path,
        'content-type': DNS_MESSAGE,
        accept: DNS_MESSAGE,
        'content-length': p.body.length,
      });
    } catch (err) {
      // The session is closing (GOAWAY received, or out of stream IDs).
      this.#settle(id, new ConnectionClosedError(`HTTP/2 session with ${this.address} cannot open a stream: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err }), undefined);
      return;
    }
    p.stream = stream;
    stream.end(p.body);
    this.emit('bytes', p.body.length, 0);
    let status = 0;
    let contentType = '';
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
      contentType = String(headers['content-type'] ?? '');
    });
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        this.#settle(id, new MalformedMessageError(`answer from ${this.address} is larger than any DNS message (${size} bytes)`), undefined);
        stream.close(NGHTTP2_CANCEL);
        return;
      }
      chunks.push(chunk);
    });
    stream.on('end', () => {
      if (!this.#pending.has(id)) return;
      this.emit('bytes', 0, size);
      if (status !== 200) {
        this.#settle(id, new HttpStatusError(`DNS-over-HTTPS server ${this.#endpoint.authority} at ${this.address} answered HTTP ${status || 'without a status'}`, status), undefined);
        return;
      }
      if (!contentType.toLowerCase().startsWith(DNS_MESSAGE)) {
        this.#settle(id, new MalformedMessageError(`DNS-over-HTTPS server at ${this.address} answered "${contentType || 'no content-type'}", not ${DNS_MESSAGE}`), undefined);
        return;
      }
      this.#onAnswer(id, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
    stream.on('error', (err: NodeJS.ErrnoException) => {
      // 'close' follows with the RST code; it decides.
      void err;
    });
    stream.on('close', () => {
      if (!this.#pending.has(id)) return;
      const code = stream.rstCode ?? NGHTTP2_NO_ERROR;
      if (code === NGHTTP2_REFUSED_STREAM || this.#state === 'closed' || this.#state === 'draining') {
        // RFC 9113 §8.7: a refused stream (or one the server's GOAWAY left
        // unprocessed) was not acted on and is safe to retry elsewhere.
        this.#settle(id, new ConnectionClosedError(`${this.address} did not process the query (HTTP/2 stream refused or connection going away)`), undefined);
      } else {
        this.#settle(id, new HttpStreamError(`DNS-over-HTTPS server at ${this.address} reset the request (HTTP/2 error ${code})`, code), undefined);
      }
    });
  }

  #onAnswer(id: number, raw: Buffer): void {
    const p = this.#pending.get(id) as Pending;
    let answer: UpstreamAnswer;
    try {
      answer = readUpstreamAnswer(raw, p.question);
    } catch (err) {
      if (err instanceof QuestionMismatchError) this.emit('mismatch', err.asked, err.got);
      // Authenticated HTTP can't carry a spoofed answer, and a stream gets one
      // body: no other answer will come, so fail now rather than at the deadline.
      this.#settle(id, isDotstubError(err) ? err : new MalformedMessageError(String(err)), undefined);
      return;
    }
    this.#lastAnswerAt = performance.now();
    if (this.#pending.keys().next().value !== id) this.emit('out-of-order');
    this.#settle(id, null, answer);
  }

  #settle(id: number, err: DotstubError | null, answer: UpstreamAnswer | undefined): void {
    const p = this.#pending.get(id);
    if (!p) return;
    this.#pending.delete(id);
    p.handler(p.ctx, this, id, err, answer, p.writtenAt);
    this.#afterSettle();
  }

  /** RFC 9113 §6.8: the server is shutting the session down; streams above its last ID were refused and come back as retriable. */
  #onGoaway(errorCode: number): void {
    if (this.#state === 'closed') return;
    this.#closeReason = errorCode === NGHTTP2_NO_ERROR ? 'server-close' : 'error';
    this.#drainRequested = true;
    if (this.#state === 'open') this.#state = 'draining';
    if (this.#pending.size === 0) this.#fail(this.#closeReason, undefined);
  }

  #afterSettle(): void {
    if (this.#pending.size > 0 || this.#state === 'closed') return;
    if (this.#state === 'draining') {
      this.close(this.#closeReason ?? 'local');
      return;
    }
    if (this.#state === 'open') this.#armIdle();
  }

  #armIdle(): void {
    this.#idleSince = Date.now();
    if (this.#idleTimer) return;
    const check = (): void => {
      this.#idleTimer = undefined;
      if (this.#state !== 'open') return;
      const idleFor = Date.now() - this.#idleSince;
      if (this.#pending.size === 0 && idleFor >= this.#opts.idleTimeoutMs) {
        this.close('idle');
        return;
      }
      const wait = this.#pending.size === 0 ? this.#opts.idleTimeoutMs - idleFor : this.#opts.idleTimeoutMs;
      this.#idleTimer = setTimeout(check, Math.max(wait, 1));
      this.#idleTimer.unref();
    };
    this.#idleTimer = setTimeout(check, this.#opts.idleTimeoutMs);
    this.#idleTimer.unref();
  }

  #fail(reason: CloseReason, error: DotstubError | undefined): void {
    if (this.#state === 'closed') return;
    const wasOpen = this.#state !== 'connecting';
    this.#state = 'closed';
    this.#closeReason = reason;
    clearTimeout(this.#connectTimer);
    clearTimeout(this.#idleTimer);
    const graceful = reason === 'idle' || reason === 'local' || reason === 'server-close';
    if (this.#session) {
      // GOAWAY then close (RFC 9113 §6.8) when we choose to; at once otherwise.
      if (graceful) this.#session.close(() => this.#socket.destroy());
      else this.#session.destroy();
    }
    if (!this.#session || !graceful) this.#socket.destroy();
    const pending = [...this.#pending];
    this.#pending.clear();
    for (const [, p] of pending) if (p.stream && !p.stream.closed) p.stream.close(NGHTTP2_CANCEL);
    const closedError =
      new ConnectionClosedError(
        reason === 'server-close'
          ? `resolver at ${this.address} closed the HTTP/2 session`
          : reason === 'reset'
            ? `connection to ${this.address} was reset`
            : `connection to ${this.address} closed (${reason})`,
      );
    this.emit('close', {
      connectionId: this.id,
      reason,
      error,
      failed: pending.length,
      queriesCarried: this.#queriesCarried,
      wasOpen,
    });
    for (const [id, p] of pending) p.handler(p.ctx, this, id, error ?? closedError, undefined, p.writtenAt);
  }
}
