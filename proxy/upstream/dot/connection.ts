/**
 * One DNS-over-TLS connection (RFC 7858): a TLS stream to one resolver
 * address carrying pipelined queries whose answers may come back in any
 * order. Implements the pool's PoolConnection contract (../connection.ts).
 *
 *   send() ──► [held until authenticated] ──► in-flight map ──► socket
 *                                             (fresh ID → entry)
 *   socket ──► FrameReader ──► InFlightMap.match ──► handler
 *                                 │ unknown ID / question not echoed
 *                                 ▼
 *                            dropped ('mismatch' counted)
 *
 * Invariants:
 * - Every query handed to send() gets exactly one handler call: an answer,
 *   or an error when the connection closes, unless cancel() took it back first.
 * - IDs on the wire are this connection's own, unique among its in-flight
 *   queries; the client's IDs never reach the resolver.
 * - Nothing is written to the socket before the server is authenticated as
 *   the policy requires (strict mode never leaks a query to an impostor).
 */
import { EventEmitter } from 'node:events';
import tls from 'node:tls';
import type { ResolverSpec } from '../../config/resolvers.js';
import { FrameReader } from '../../dns/framing.js';
import type { UpstreamQuestion } from '../../dns/wire.js';
import { ConnectionClosedError, ConnectTimeoutError, type DotstubError } from '../../errors.js';
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
import { InFlightMap } from '../in-flight.js';
import type { PoolOptions } from '../pool/options.js';
import { ackNow } from '../quick-ack.js';
import { authenticatePeer, socketFailure } from '../tls.js';
import { secureContextFor, type AuthPolicy } from './tls.js';

interface DotConnectionOptions {
  readonly id: number;
  readonly resolver: ResolverSpec;
  readonly address: string;
  readonly auth: AuthPolicy;
  /** Shared per trust-anchor set (secureContextFor); undefined: Node's default roots. */
  readonly secureContext: tls.SecureContext | undefined;
  /** A TLS session ticket from an earlier connection to this address, to resume. */
  readonly session?: Buffer | undefined;
  readonly maxInFlight: number;
  readonly idleTimeoutMs: number;
  /** Acknowledge each read at once (quick-ack.ts). */
  readonly quickAck: boolean;
  /** Deadline for the TCP connect. */
  readonly connectTimeoutMs: number;
  /** Deadline for the TLS handshake once TCP is connected. */
  readonly handshakeTimeoutMs: number;
}

interface Pending {
  readonly question: UpstreamQuestion;
  readonly handler: AnswerHandler<unknown>;
  readonly ctx: unknown;
  /** performance.now() when the bytes were handed to the socket (0 while held). */
  writtenAt: number;
  readonly wire: Buffer;
}

/** The pool's factory for DoT connections to `resolver`. */
export function dotConnectionFactory(
  resolver: ResolverSpec,
  auth: AuthPolicy,
  options: Pick<PoolOptions, 'maxInFlight' | 'idleTimeoutMs' | 'connectTimeoutMs' | 'handshakeTimeoutMs' | 'quickAck'>,
): ConnectionFactory {
  const secureContext = secureContextFor(auth);
  return (spec) =>
    new DotConnection({
      id: spec.id,
      resolver,
      address: spec.address,
      auth,
      secureContext,
      session: spec.session,
      maxInFlight: options.maxInFlight,
      idleTimeoutMs: options.idleTimeoutMs,
      quickAck: options.quickAck ?? true,
      connectTimeoutMs: options.connectTimeoutMs,
      handshakeTimeoutMs: options.handshakeTimeoutMs,
    });
}

class DotConnection extends EventEmitter<PoolConnectionEvents> implements PoolConnection {
  readonly id: number;
  readonly address: string;
  readonly resolver: ResolverSpec;
  readonly createdAt = Date.now();
  readonly #opts: DotConnectionOptions;
  readonly #socket: tls.TLSSocket;
  readonly #reader = new FrameReader();
  readonly #pending = new InFlightMap<Pending>();
  #state: ConnectionState = 'connecting';
  /** drain() was called while connecting: go straight to draining once ready. */
  #drainRequested = false;
  /** Connect timer, then (once TCP is up) the handshake timer. */
  #connectTimer: NodeJS.Timeout | undefined;
  /** TCP connected: a failure now is in the TLS handshake. */
  #tcpConnected = false;
  #idleTimer: NodeJS.Timeout | undefined;
  #idleSince = 0;
  #idleTimeoutMs: number;
  #corked = false;
  /** Bytes written this tick, reported once per tick. */
  #bytesOut = 0;
  #closeReason: CloseReason | undefined;
  #closeError: DotstubError | undefined;
  #queriesCarried = 0;
  #handshake: HandshakeInfo | undefined;
  #keepaliveMs: number | undefined;
  #lastAnswerAt = 0;
  readonly #startedAt = performance.now();

  constructor(opts: DotConnectionOptions) {
    super();
    this.id = opts.id;
    this.address = opts.address;
    this.resolver = opts.resolver;
    this.#opts = opts;
    this.#idleTimeoutMs = opts.idleTimeoutMs;
    const authName = opts.resolver.authName;
    this.#socket = tls.connect({
      host: opts.address,
      port: opts.resolver.port,
      // SNI carries the authentication name (RFC 8310 §8.1); never an IP literal.
      servername: authName,
      minVersion: 'TLSv1.2',
      secureContext: opts.secureContext,
      // We authenticate ourselves on 'secureConnect' so that opportunistic mode
      // can proceed and strict mode can explain its refusal.
      rejectUnauthorized: false,
      session: opts.session,
      // No ALPN: RFC 7858 doesn't use it, and a server that configures ALPN
      // for other protocols answers an unknown "dot" with a fatal alert.
    });
    this.#socket.setNoDelay(true);
    // Two timers, as browsers have (NETWORK.md): the TCP connect, then the TLS
    // handshake. A drop and a stalled handshake are different problems.
    this.#connectTimer = setTimeout(() => {
      this.#fail(
        'error',
        new ConnectTimeoutError(`port ${opts.resolver.port} at ${opts.address} gave no answer within ${opts.connectTimeoutMs} ms: probably blocked on this network`, 'connect'),
      );
    }, opts.connectTimeoutMs);
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
    this.#socket.on('secureConnect', () => this.#onSecureConnect());
    this.#socket.on('session', (ticket: Buffer) => {
      // Only an authenticated connection's ticket may be resumed: a resumed
      // session counts as verified (../tls.ts), so an unverified one's would
      // launder an opportunistic connection into a "verified" one.
      if ((this.#state === 'open' || this.#state === 'draining') && this.#handshake?.verified) this.emit('session', ticket);
    });
    this.#socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    this.#socket.on('end', () => {
      // The server closed its side (RFC 7766 §6.2.4): nothing more will be answered.
      if (this.#state !== 'closed') this.#fail('server-close', undefined);
    });
    this.#socket.on('error', (err: NodeJS.ErrnoException) => {
      if (this.#state === 'closed') return;
      const f = socketFailure(err, { connecting: this.#state === 'connecting', tcpConnected: this.#tcpConnected, address: opts.address, port: opts.resolver.port });
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
  /** The server's RFC 7828 idle timeout, if it announced one. */
  get keepaliveMs(): number | undefined {
    return this.#keepaliveMs;
  }
  get idleTimeoutMs(): number {
    return this.#idleTimeoutMs;
  }
  /** Accepts new queries: connecting or open, and below the in-flight cap. */
  get available(): boolean {
    return (
      (this.#state === 'connecting' || this.#state === 'open') && !this.#drainRequested && this.#pending.size < this.#opts.maxInFlight
    );
  }
  /** performance.now() of the last answer matched to a query (0 if none). */
  get lastAnswerAt(): number {
    return this.#lastAnswerAt;
  }

  /**
   * Sends an upstream query, framed (two-octet length first, RFC 7858 §3.3);
   * its ID is overwritten in place. Returns null when the
   * connection can't take it (closed, draining or at its cap): the caller
   * picks another connection or answers SERVFAIL.
   */
  send<T>(framed: Buffer, question: UpstreamQuestion, handler: AnswerHandler<T>, ctx: T): SendInfo | null {
    if (!this.available) return null;
    const pending: Pending = { question, handler: handler as AnswerHandler<unknown>, ctx, writtenAt: 0, wire: framed };
    const id = this.#pending.add(pending);
    // The caller hands over a framed query it won't touch again; only the ID is ours to write.
    framed.writeUInt16BE(id, 2);
    this.#queriesCarried++;
    const reused = this.#state === 'open';
    // Before authentication the query waits in the map (writtenAt 0); ready flushes it.
    if (reused) this.#write(pending);
    return { connection: this, upstreamId: id, reused, depth: this.#pending.size };
  }

  /** Takes a query back (its deadline passed); a late answer is then ignored. */
  cancel(upstreamId: number): void {
    if (this.#pending.cancel(upstreamId)) this.#afterSettle();
  }

  /** performance.now() when the query was written to the socket (0 while held for the handshake). */
  writtenAt(upstreamId: number): number {
    return this.#pending.get(upstreamId)?.writtenAt ?? 0;
  }

  /** Stop taking queries; close once the in-flight ones are answered. */
  drain(): void {
    if (this.#state === 'closed') return;
    if (this.#pending.size === 0) {
      this.close('local');
      return;
    }
    this.#drainRequested = true;
    if (this.#state === 'open') this.#state = 'draining';
  }

  /** Closes now; in-flight queries fail with ConnectionClosedError. */
  close(reason: CloseReason = 'local'): void {
    if (this.#state === 'closed') return;
    this.#fail(reason, undefined);
  }

  #write(pending: Pending): void {
    pending.writtenAt = performance.now();
    if (!this.#corked) {
      // Batch every query of this turn of the event loop into one write: a
      // burst of datagrams read together (each its own callback, so each its
      // own tick) leaves in a few full segments rather than one segment per
      // query. That matters after an idle moment, when TCP may send only ten
      // segments before it hears back (issue 12); setImmediate runs right
      // after the I/O of this turn, so a lone query isn't held.
      this.#corked = true;
      this.#socket.cork();
      setImmediate(() => {
        this.#corked = false;
        this.#socket.uncork();
        this.emit('bytes', this.#bytesOut, 0);
        this.#bytesOut = 0;
      });
    }
    this.#socket.write(pending.wire);
    this.#bytesOut += pending.wire.length;
  }

  #onSecureConnect(): void {
    const opts = this.#opts;
    const socket = this.#socket;
    const resumed = socket.isSessionReused();
    const auth = authenticatePeer(
      socket,
      { mode: opts.auth.mode, pins: opts.resolver.pins, authName: opts.resolver.authName, address: opts.address, label: opts.resolver.label },
      resumed,
    );
    if (!auth.ok) {
      this.#fail('error', auth.error);
      return;
    }
    const { verified, authError } = auth;
    clearTimeout(this.#connectTimer);
    this.#connectTimer = undefined;
    this.#state = this.#drainRequested ? 'draining' : 'open';
    const cipher = socket.getCipher();
    this.#handshake = {
      connectionId: this.id,
      address: opts.address,
      resumed,
      verified,
      authError,
      tlsVersion: socket.getProtocol() ?? 'unknown',
      cipher: cipher.standardName ?? cipher.name,
      handshakeMs: performance.now() - this.#startedAt,
    };
    this.emit('ready', this.#handshake);
    if (this.#pending.size > 0) {
      for (const pending of this.#pending.values()) if (pending.writtenAt === 0) this.#write(pending);
    } else {
      this.#armIdle();
    }
  }

  #onData(chunk: Buffer): void {
    this.emit('bytes', 0, chunk.length);
    let messages: Buffer[];
    try {
      messages = this.#reader.push(chunk);
    } catch (err) {
      this.#fail('desync', new ConnectionClosedError(`resolver at ${this.address} broke DNS framing`, { cause: err }));
      return;
    }
    for (const raw of messages) {
      if (this.#state === 'closed') return;
      this.#onMessage(raw);
    }
    // ACK what was read now, not with our next query, while more answers are
    // due: a resolver using Nagle holds its next answer (or the rest of this
    // one) until this is acknowledged (quick-ack.ts). After the answers were
    // passed on, so that the clients are not kept waiting for a syscall; and
    // not when queries are already corked for this turn (under load, most
    // reads): their segment leaves within the turn and carries the ACK.
    if (this.#opts.quickAck && this.#pending.size > 0 && !this.#corked) ackNow(this.#socket);
    // An incomplete frame can already show it isn't DNS: two octets of length,
    // two of ID, then flags whose top bit (QR) every answer sets. Text from a
    // broken server or a middlebox ("HTTP/1.1 400") fails this at once instead
    // of holding the stream until a deadline.
    if (this.#state !== 'closed' && this.#reader.buffered >= 5 && (this.#reader.peek()[4] as number) < 0x80) {
      this.#fail('desync', new ConnectionClosedError(`resolver at ${this.address} sent bytes that are not a DNS answer: framing lost`));
    }
  }

  #onMessage(raw: Buffer): void {
    // A frame too short for a DNS header, or a query where an answer belongs,
    // means the stream lost its framing (a broken server, or a middlebox
    // writing into it): nothing after it can be trusted. Replace the connection;
    // its queries are retried on the next one.
    if (raw.length < 12 || (raw[2] as number) < 0x80) {
      this.#fail('desync', new ConnectionClosedError(`resolver at ${this.address} sent bytes that are not a DNS answer: framing lost`));
      return;
    }
    const m = this.#pending.match(raw);
    if (m.kind === 'unknown') return; // late answer to a cancelled query, or a bogus ID
    if (m.kind === 'mismatch') {
      // RFC 7858 §3.3 / RFC 5452: an answer must echo the question. Drop it
      // and leave the query pending: its deadline decides what happens next.
      this.emit('mismatch', m.asked, m.got);
      return;
    }
    this.#lastAnswerAt = performance.now();
    if (m.outOfOrder) this.emit('out-of-order');
    if (m.answer.keepaliveMs !== undefined) this.#onKeepalive(m.answer.keepaliveMs);
    m.entry.handler(m.entry.ctx, this, m.answer.id, null, m.answer, m.entry.writtenAt);
    this.#afterSettle();
  }

  #onKeepalive(ms: number): void {
    if (ms === this.#keepaliveMs) return;
    this.#keepaliveMs = ms;
    this.emit('keepalive', ms);
    if (ms === 0) {
      // RFC 7828 §3.3.2: the server asks us to close; finish what is in flight.
      if (this.#state === 'open') this.#state = 'draining';
      this.#closeReason = 'keepalive-zero';
      return;
    }
    // Honour the server's timeout, never exceed our own.
    this.#idleTimeoutMs = Math.min(this.#opts.idleTimeoutMs, ms);
  }

  #afterSettle(): void {
    if (this.#pending.size > 0) return;
    if (this.#state === 'draining') {
      this.close(this.#closeReason ?? 'local');
      return;
    }
    this.#armIdle();
  }

  #armIdle(): void {
    this.#idleSince = Date.now();
    if (this.#idleTimer) return;
    const check = (): void => {
      this.#idleTimer = undefined;
      if (this.#state !== 'open') return;
      const idleFor = Date.now() - this.#idleSince;
      if (this.#pending.size === 0 && idleFor >= this.#idleTimeoutMs) {
        this.close('idle');
        return;
      }
      const wait = this.#pending.size === 0 ? this.#idleTimeoutMs - idleFor : this.#idleTimeoutMs;
      this.#idleTimer = setTimeout(check, Math.max(wait, 1));
      this.#idleTimer.unref();
    };
    this.#idleTimer = setTimeout(check, this.#idleTimeoutMs);
    this.#idleTimer.unref();
  }

  #fail(reason: CloseReason, error: DotstubError | undefined): void {
    if (this.#state === 'closed') return;
    const wasOpen = this.#state !== 'connecting';
    this.#state = 'closed';
    this.#closeReason = reason;
    this.#closeError = error;
    clearTimeout(this.#connectTimer);
    clearTimeout(this.#idleTimer);
    if (reason === 'idle' || reason === 'local' || reason === 'keepalive-zero') this.#socket.end();
    else this.#socket.destroy();
    const pending = this.#pending.failAll();
    const closedError =
      error ??
      new ConnectionClosedError(
        reason === 'server-close'
          ? `resolver at ${this.address} closed the connection`
          : reason === 'reset'
            ? `connection to ${this.address} was reset`
            : `connection to ${this.address} closed (${reason})`,
      );
    this.emit('close', {
      connectionId: this.id,
      reason,
      error: this.#closeError,
      failed: pending.length,
      queriesCarried: this.#queriesCarried,
      wasOpen,
    });
    for (const [id, p] of pending) p.handler(p.ctx, this, id, closedError, undefined, p.writtenAt);
  }
}
