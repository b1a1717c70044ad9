/**
 * The life of one TLS connection to a resolver, written once for DoT and
 * DoH (as undici writes its client once and plugs HTTP/1 or HTTP/2 into
 * it): the socket, authentication, the deadlines, the in-flight map, idle
 * close, drain, and failing what is in flight when it closes. A protocol
 * half (dot/connection.ts, doh/connection.ts) plugs in how queries are
 * written and answers read; it never decides the connection's state.
 *
 *   connecting ──TCP──► (handshake deadline) ──TLS──► authenticated? ──no──► closed (error)
 *       │ connect        │ a post-quantum ClientHello           │ yes
 *       │ deadline       │ unanswered for half of it:   half.start() refuses? ──yes──► closed (error)
 *       ▼                └► dialled again once,                   │ no
 *     closed ('connect'     classical only          open ──► 'ready', held queries written
 *       phase)              (key-agreement.ts)
 *                                             │ drain() / server going away / keepalive 0
 *                                             ▼
 *                                          draining ──last answer──► closed
 *   open, nothing in flight for idleTimeoutMs ──► closed ('idle')
 *
 * Invariants:
 * - Every query accepted by send() gets exactly one handler call: an answer
 *   or an error (its own, or the connection's when it closes), unless
 *   cancel() took it back first. Its entry leaves the in-flight map exactly
 *   once, and only this module calls handlers.
 * - Nothing is written before the server is authenticated as the policy
 *   requires: queries sent while connecting wait in the map, and the
 *   protocol half is started (DoH: its HTTP/2 session) only after
 *   authentication succeeded.
 * - A failure before the connection opened names the phase it reached:
 *   'connect' until TCP connected, 'handshake' after (the deadline that
 *   fires and a socket error alike).
 * - A TLS session ticket is passed on only from an authenticated, verified
 *   connection that is not closed: the listener exists only from the moment
 *   authentication succeeded, so a ticket from before it cannot be kept.
 * - 'close' is emitted once, before the handlers of the queries it failed run.
 */
import { EventEmitter } from 'node:events';
import tls from 'node:tls';
import net from 'node:net';
import type { ResolverSpec } from '../../config/resolvers.js';
import type { UpstreamQuestion } from '../../dns/upstream-query.js';
import { ConnectionClosedError, ConnectTimeoutError, type DotstubError } from '../../errors.js';
import type { AuthPolicy } from '../auth-policy.js';
import type { PoolOptions } from '../pool/options.js';
import type {
  AnswerHandler,
  CloseReason,
  ConnectionFactory,
  ConnectionSpec,
  ConnectionState,
  HandshakeInfo,
  PoolConnection,
  PoolConnectionEvents,
  SendInfo,
} from './contract.js';
import { InFlightMap } from './in-flight.js';
import { idleWithinKeepalive } from './keepalive.js';
import { agreedGroup, firstFlightWaitMs, offersPostQuantum } from './key-agreement.js';
import { ackEvidence, markOf, peerVerdict, type AckEvidence, type PeerVerdict } from './peer-acks.js';
import type { Link, Protocol, ProtocolHalf, Query } from './protocol.js';
import { authenticatePeer, secureContextFor, socketFailure } from './tls.js';

type Limits = Pick<PoolOptions, 'maxInFlight' | 'idleTimeoutMs' | 'connectTimeoutMs' | 'handshakeTimeoutMs'>;

/** The pool's factory for connections speaking `protocol` to `resolver`. */
export function connectionFactory<S>(resolver: ResolverSpec, auth: AuthPolicy, limits: Limits, protocol: Protocol<S>): ConnectionFactory {
  const secureContext = secureContextFor(auth);
  const fixed: Limits = {
    maxInFlight: limits.maxInFlight,
    idleTimeoutMs: limits.idleTimeoutMs,
    connectTimeoutMs: limits.connectTimeoutMs,
    handshakeTimeoutMs: limits.handshakeTimeoutMs,
  };
  return (spec) => new Connection(spec, { resolver, auth, secureContext, limits: fixed }, protocol);
}

interface Setup {
  readonly resolver: ResolverSpec;
  readonly auth: AuthPolicy;
  /** Shared per trust-anchor set (secureContextFor); undefined: Node's default roots. */
  readonly secureContext: tls.SecureContext | undefined;
  readonly limits: Limits;
}

class Connection<S> extends EventEmitter<PoolConnectionEvents> implements PoolConnection {
  readonly id: number;
  readonly address: string;
  readonly createdAt = Date.now();
  readonly #setup: Setup;
  readonly #protocol: Protocol<S>;
  /** Replaced once, before any query was written, when the classical retry dials again. */
  #socket: tls.TLSSocket;
  /** The TCP socket under it: its byte counts and its kernel's acknowledgements (peer-acks.ts). */
  #raw: net.Socket | undefined;
  readonly ackEvidence: AckEvidence = ackEvidence();
  /** Why only classical groups are offered (contract.ts HandshakeInfo); null: the library's own offer. */
  #classicalOnly: HandshakeInfo['classicalOnly'];
  readonly #half: ProtocolHalf<S>;
  readonly #queries = new InFlightMap<Query<S>>();
  #state: ConnectionState = 'connecting';
  /** drain() or the server's going away while connecting: go straight to draining once ready. */
  #drainRequested = false;
  /** The connect deadline, then (once TCP is up) the handshake deadline. */
  #connectTimer: NodeJS.Timeout | undefined;
  /** TCP connected: a failure now is in the TLS handshake. */
  #tcpConnected = false;
  #idleTimer: NodeJS.Timeout | undefined;
  #idleSince = 0;
  #idleTimeoutMs: number;
  #closeReason: CloseReason | undefined;
  #queriesCarried = 0;
  #handshake: HandshakeInfo | undefined;
  #keepaliveMs: number | undefined;
  #lastAnswerAt = 0;
  readonly #startedAt = performance.now();

  constructor(spec: ConnectionSpec, setup: Setup, protocol: Protocol<S>) {
    super();
    this.id = spec.id;
    this.address = spec.address;
    this.#setup = setup;
    this.#protocol = protocol;
    this.#idleTimeoutMs = setup.limits.idleTimeoutMs;
    this.#classicalOnly = spec.classical === true && offersPostQuantum() ? 'network' : null;
    this.#socket = this.#dial(spec, setup.limits.handshakeTimeoutMs);
    this.#half = protocol.attach(this.#link());
  }

  /**
   * Opens the TCP connection and the TLS handshake over it, with their two
   * deadlines, as browsers have (docs/networks.md#middleboxes): the TCP
   * connect, then the TLS handshake (`handshakeMs`). A dropped port and a
   * stalled handshake are different problems. Dialled again once, offering
   * classical groups only, when a post-quantum ClientHello got no answer
   * (key-agreement.ts); each socket's events count only while it is the
   * connection's.
   */
  #dial(spec: ConnectionSpec, handshakeMs: number): tls.TLSSocket {
    const setup = this.#setup;
    const protocol = this.#protocol;
    const classical = this.#classicalOnly !== null;
    // A TCP socket of our own under the TLS one: its bytesRead says whether the server answered the ClientHello.
    const raw = net.connect({ host: spec.address, port: protocol.port });
    this.#raw = raw;
    raw.on('error', () => undefined); // the TLS socket over it reports it
    raw.setNoDelay(true);
    const socket = tls.connect({
      socket: raw,
      host: spec.address,
      ...protocol.tls,
      minVersion: 'TLSv1.2',
      secureContext: classical ? secureContextFor(setup.auth, true) : setup.secureContext,
      // Authenticated on 'secureConnect' (tls.ts) so that opportunistic mode
      // can proceed and strict mode can say why it refused.
      rejectUnauthorized: false,
      session: spec.session,
      // No ecdhCurve unless the network lost a post-quantum ClientHello: the
      // runtime's TLS library offers its own groups. On the packaged Node 24
      // (OpenSSL 3.5) that is the post-quantum hybrid X25519MLKEM768 first,
      // with an X25519 key share beside it, so a resolver that has ML-KEM
      // protects the queries against recording now and decrypting later, and
      // one that hasn't takes X25519 without a HelloRetryRequest (unbound 1.17
      // on OpenSSL 3.0 does). The cost, measured (bench/results/pq-handshake.md):
      // a ClientHello of ~1.6 KB instead of ~0.3 (two segments at a 1500-byte
      // MTU), handshake time within noise. A list of our own would tie the
      // proxy to one library's group names: OpenSSL 3.0 (Node 20) rejects a
      // list naming X25519MLKEM768. The classical groups are the context's (tls.ts).
    });
    const mine = (): boolean => socket === this.#socket && this.#state !== 'closed';
    const { connectTimeoutMs } = setup.limits;
    this.#tcpConnected = false;
    clearTimeout(this.#connectTimer);
    this.#connectTimer = setTimeout(() => {
      this.#fail(
        'error',
        new ConnectTimeoutError(`port ${protocol.port} at ${spec.address} gave no answer within ${connectTimeoutMs} ms: probably blocked on this network`, 'connect'),
      );
    }, connectTimeoutMs);
    raw.once('connect', () => {
      if (!mine()) return;
      this.#tcpConnected = true;
      clearTimeout(this.#connectTimer);
      if (this.#state !== 'connecting') return;
      const stalled = (): void =>
        this.#fail(
          'error',
          new ConnectTimeoutError(`the TLS handshake with ${spec.address} stalled for ${setup.limits.handshakeTimeoutMs} ms after the connection opened`, 'handshake'),
        );
      if (classical || !offersPostQuantum()) {
        this.#connectTimer = setTimeout(stalled, handshakeMs);
        return;
      }
      const waitMs = firstFlightWaitMs(handshakeMs);
      this.#connectTimer = setTimeout(() => {
        if (!mine() || this.#state !== 'connecting') return;
        if (raw.bytesRead > 0) {
          // The server answered: the ClientHello arrived, whatever stalls now is no size of ours.
          this.#connectTimer = setTimeout(stalled, handshakeMs - waitMs);
          return;
        }
        this.#classicalOnly = 'retried';
        this.#socket = this.#dial(spec, handshakeMs - waitMs);
        socket.destroy();
      }, waitMs);
    });
    socket.once('secureConnect', () => {
      if (mine()) this.#onSecureConnect();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (!mine()) return;
      const f = socketFailure(err, { connecting: this.#state === 'connecting', tcpConnected: this.#tcpConnected, address: spec.address, port: protocol.port });
      this.#fail(f.reason, f.error);
    });
    socket.on('close', () => {
      if (mine()) this.#fail(this.#state === 'connecting' ? 'error' : 'reset', undefined);
    });
    return socket;
  }

  get state(): ConnectionState {
    return this.#state;
  }
  get inFlight(): number {
    return this.#queries.size;
  }
  get queriesCarried(): number {
    return this.#queriesCarried;
  }
  get handshake(): HandshakeInfo | undefined {
    return this.#handshake;
  }
  /** The server's RFC 7828 idle timeout, if it announced one (DoT only: HTTP/2 governs a DoH session's life). */
  get keepaliveMs(): number | undefined {
    return this.#keepaliveMs;
  }
  get idleTimeoutMs(): number {
    return this.#idleTimeoutMs;
  }
  get available(): boolean {
    return (this.#state === 'connecting' || this.#state === 'open') && !this.#drainRequested && this.#queries.size < this.#setup.limits.maxInFlight;
  }
  get lastAnswerAt(): number {
    return this.#lastAnswerAt;
  }

  /** Returns null when the connection can't take the query (closed, draining or at its cap): the caller picks another or answers SERVFAIL. */
  send<T>(framed: Buffer, question: UpstreamQuestion, handler: AnswerHandler<T>, ctx: T): SendInfo | null {
    if (!this.available) return null;
    const query: Query<S> = { question, handler: handler as AnswerHandler<unknown>, ctx, framed, writtenAt: 0, mark: undefined, own: undefined };
    const id = this.#queries.add(query);
    // The caller hands over a framed query it won't touch again; only the ID octets are ours to write.
    framed.writeUInt16BE(this.#protocol.wireId(id), 2);
    this.#queriesCarried++;
    const reused = this.#state === 'open';
    // Before authentication the query waits in the map (writtenAt 0); #onSecureConnect writes it.
    if (reused) this.#write(id, query);
    return { connection: this, upstreamId: id, reused, depth: this.#queries.size };
  }

  cancel(upstreamId: number): void {
    const query = this.#queries.take(upstreamId);
    if (!query) return;
    this.#half.abandon(query);
    this.#afterSettle();
  }

  writtenAt(upstreamId: number): number {
    return this.#queries.get(upstreamId)?.writtenAt ?? 0;
  }

  peerSilence(ackWaitMs: number): Promise<PeerVerdict> {
    const raw = this.#raw;
    if (!raw || (this.#state !== 'open' && this.#state !== 'draining')) return Promise.resolve('acking');
    // The latest query that has waited long enough for its ACK: TCP acknowledges in order, so it speaks for those before it.
    const now = performance.now();
    let latest: Query<S> | undefined;
    for (const [, q] of this.#queries.entries()) {
      if (q.mark && q.writtenAt > 0 && now - q.writtenAt >= ackWaitMs && (!latest || q.writtenAt > latest.writtenAt)) latest = q;
    }
    if (!latest?.mark) return Promise.resolve('acking');
    return peerVerdict(raw, latest.mark);
  }

  drain(): void {
    if (this.#state === 'closed') return;
    if (this.#queries.size === 0) {
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

  /** The half's view of this connection: the only way it changes state or settles a query. */
  #link(): Link<S> {
    const current = (): tls.TLSSocket => this.#socket;
    return {
      address: this.address,
      // The socket in use: the classical retry replaces it before the half starts.
      get socket() {
        return current();
      },
      state: () => this.#state,
      queries: this.#queries,
      answered: (id, query, answer, outOfOrder) => {
        this.#lastAnswerAt = performance.now();
        if (outOfOrder) this.emit('out-of-order');
        query.handler(query.ctx, this, id, null, answer, query.writtenAt);
        this.#afterSettle();
      },
      settle: (id, err) => {
        const query = this.#queries.take(id);
        if (!query) return;
        query.handler(query.ctx, this, id, err, undefined, query.writtenAt);
        this.#afterSettle();
      },
      fail: (reason, error) => this.#fail(reason, error),
      goAway: (reason) => {
        if (this.#state === 'closed') return;
        this.#closeReason = reason;
        this.#drainRequested = true;
        if (this.#state === 'open') this.#state = 'draining';
        if (this.#queries.size === 0) this.#fail(reason, undefined);
      },
      serverClosed: () => this.#fail(this.#closeReason ?? 'server-close', undefined),
      keepalive: (ms) => this.#onKeepalive(ms),
      bytes: (written, read) => this.emit('bytes', written, read),
      mismatch: (asked, got) => this.emit('mismatch', asked, got),
    };
  }

  #write(id: number, query: Query<S>): void {
    query.writtenAt = performance.now();
    if (this.#raw) query.mark = markOf(this.#raw);
    this.#half.write(id, query);
  }

  #onSecureConnect(): void {
    if (this.#state !== 'connecting') return;
    const { resolver, auth } = this.#setup;
    const socket = this.#socket;
    const resumed = socket.isSessionReused();
    const peer = authenticatePeer(
      socket,
      { mode: auth.mode, pins: resolver.pins, authName: this.#protocol.authName, address: this.address, label: resolver.label },
      resumed,
    );
    if (!peer.ok) {
      this.#fail('error', peer.error);
      return;
    }
    const refused = this.#half.start();
    if (refused) {
      this.#fail('error', refused);
      return;
    }
    clearTimeout(this.#connectTimer);
    this.#connectTimer = undefined;
    if (peer.verified) {
      // Only a verified connection's ticket may be resumed: a resumed session
      // counts as verified (tls.ts), so an unverified one's would launder an
      // opportunistic connection into a "verified" one. Node holds a ticket
      // that arrives during the handshake until after 'secureConnect', so it
      // reaches this listener.
      socket.on('session', (ticket: Buffer) => {
        if (this.#state !== 'closed') this.emit('session', ticket);
      });
    }
    this.#state = this.#drainRequested ? 'draining' : 'open';
    const cipher = socket.getCipher();
    this.#handshake = {
      connectionId: this.id,
      address: this.address,
      resumed,
      verified: peer.verified,
      authError: peer.authError ?? null,
      tlsVersion: socket.getProtocol() ?? 'unknown',
      cipher: cipher.standardName ?? cipher.name,
      keyGroup: agreedGroup(socket),
      classicalOnly: this.#classicalOnly,
      handshakeMs: performance.now() - this.#startedAt,
    };
    this.emit('ready', this.#handshake);
    if (this.#queries.size > 0) {
      for (const [id, query] of this.#queries.entries()) if (query.writtenAt === 0) this.#write(id, query);
    } else {
      this.#armIdle();
    }
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
    // Honour the server's timeout, closing before it would (keepalive.ts); never exceed our own.
    this.#idleTimeoutMs = idleWithinKeepalive(ms, this.#setup.limits.idleTimeoutMs);
  }

  #afterSettle(): void {
    if (this.#queries.size > 0 || this.#state === 'closed') return;
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
      if (this.#queries.size === 0 && idleFor >= this.#idleTimeoutMs) {
        this.close('idle');
        return;
      }
      const wait = this.#queries.size === 0 ? this.#idleTimeoutMs - idleFor : this.#idleTimeoutMs;
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
    clearTimeout(this.#connectTimer);
    clearTimeout(this.#idleTimer);
    this.#half.shutdown(reason);
    const failed = this.#queries.failAll();
    for (const [, query] of failed) this.#half.abandon(query);
    const closedError =
      error ??
      new ConnectionClosedError(
        reason === 'server-close'
          ? `resolver at ${this.address} closed ${this.#protocol.closedWhat}`
          : reason === 'reset'
            ? `connection to ${this.address} was reset`
            : `connection to ${this.address} closed (${reason})`,
      );
    this.emit('close', { connectionId: this.id, reason, error, failed: failed.length, queriesCarried: this.#queriesCarried, wasOpen });
    for (const [id, query] of failed) query.handler(query.ctx, this, id, closedError, undefined, query.writtenAt);
  }
}
