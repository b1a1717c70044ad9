/**
 * One DNS-over-TLS connection (RFC 7858): a TLS stream to one resolver
 * address carrying pipelined queries whose answers may come back in any order.
 *
 *   send() ──► [held until authenticated] ──► in-flight map ──► socket
 *                                             (fresh ID → pending)
 *   socket ──► FrameReader ──► answer ID ──► pending? ──► question matches? ──► callback
 *                                               │ no            │ no
 *                                               ▼               ▼
 *                                         'unknown' count   'mismatch' count (dropped)
 *
 * Invariants:
 * - Every query handed to send() gets exactly one callback: an answer, or an
 *   error when the connection closes, unless cancel() took it back first.
 * - IDs on the wire are this connection's own, unique among its in-flight
 *   queries; the client's IDs never reach the resolver.
 * - Nothing is written to the socket before the server is authenticated as
 *   the policy requires (strict mode never leaks a query to an impostor).
 */
import { EventEmitter } from 'node:events';
import crypto from 'node:crypto';
import tls from 'node:tls';
import {
  CertificateError,
  ConnectFailedError,
  ConnectionClosedError,
  ConnectTimeoutError,
  PinMismatchError,
  QuestionMismatchError,
  type DotstubError,
} from '../../errors.js';
import { FrameReader } from '../../dns/framing.js';
import type { ResolverSpec } from '../../config/resolvers.js';
import { readUpstreamAnswer, type QuestionKey, type UpstreamAnswer, type UpstreamQuestion } from '../../dns/wire.js';
import { formatHostPort } from '../../host-port.js';

export type AuthMode = 'strict' | 'opportunistic';

export interface AuthPolicy {
  readonly mode: AuthMode;
  /** Extra trust anchors (PEM), added to the system store. */
  readonly ca: readonly (string | Buffer)[];
}

export interface DotConnectionOptions {
  readonly id: number;
  readonly resolver: ResolverSpec;
  readonly address: string;
  readonly auth: AuthPolicy;
  /** A TLS session ticket from an earlier connection to this address, to resume. */
  readonly session?: Buffer | undefined;
  readonly maxInFlight: number;
  readonly idleTimeoutMs: number;
  /** One deadline for TCP connect plus the TLS handshake. */
  readonly connectTimeoutMs: number;
}

export interface HandshakeInfo {
  readonly connectionId: number;
  readonly address: string;
  readonly resumed: boolean;
  /** Authenticated: CA + name, or SPKI pin, or resumed from an authenticated session. */
  readonly verified: boolean;
  /** Why the certificate didn't verify (opportunistic mode only). */
  readonly authError: string | undefined;
  readonly tlsVersion: string;
  readonly cipher: string;
  readonly handshakeMs: number;
}

export type CloseReason = 'idle' | 'server-close' | 'reset' | 'error' | 'local' | 'unresponsive' | 'keepalive-zero';

export interface CloseInfo {
  readonly connectionId: number;
  readonly reason: CloseReason;
  readonly error: DotstubError | undefined;
  /** Queries that were in flight and got ConnectionClosedError. */
  readonly failed: number;
  readonly queriesCarried: number;
  readonly wasOpen: boolean;
}

/**
 * Called once per query with its context: an answer, or the error that ended
 * it. `writtenAt` is performance.now() when the query left for the resolver
 * (after any handshake wait). One shared handler plus a context per query
 * keeps the hot path free of per-query closures.
 */
export type AnswerHandler<T> = (
  ctx: T,
  conn: DotConnection,
  upstreamId: number,
  err: DotstubError | null,
  answer: UpstreamAnswer | undefined,
  writtenAt: number,
) => void;

interface Pending {
  readonly question: UpstreamQuestion;
  readonly handler: AnswerHandler<unknown>;
  readonly ctx: unknown;
  /** performance.now() when the bytes were handed to the socket (0 while held). */
  writtenAt: number;
  readonly wire: Buffer;
}

export interface SendInfo {
  readonly connection: DotConnection;
  /** This connection's ID for the query on the wire. */
  readonly upstreamId: number;
  /** The connection was already authenticated and open: no handshake wait (the T-DNS "hit"). */
  readonly reused: boolean;
  /** Queries in flight on this connection, this one included. */
  readonly depth: number;
}

export interface DotConnectionEvents {
  ready: [HandshakeInfo];
  session: [Buffer];
  keepalive: [number];
  mismatch: [QuestionKey, QuestionKey | undefined];
  'out-of-order': [];
  bytes: [number, number];
  close: [CloseInfo];
  drain: [];
}

export type ConnectionState = 'connecting' | 'open' | 'draining' | 'closed';

const UNKNOWN_CA = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
]);

/** A reason a user can read for a certificate that failed to verify. */
export function describeCertError(code: string, authName: string | undefined, address: string): string {
  const who = authName ?? address;
  if (UNKNOWN_CA.has(code)) return `certificate for ${who} was issued by an unknown CA: TLS interception? (${code})`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') {
    return `certificate presented at ${address} is not valid for ${who}: wrong server or TLS interception? (${code})`;
  }
  if (code === 'CERT_HAS_EXPIRED') return `certificate for ${who} has expired (${code})`;
  if (code === 'CERT_NOT_YET_VALID') return `certificate for ${who} is not valid yet: check the clock (${code})`;
  return `certificate for ${who} did not verify (${code})`;
}

/** A reason a user can read for a TCP connect that failed. */
export function describeConnectError(err: NodeJS.ErrnoException, address: string, port: number): string {
  const where = formatHostPort(address, port);
  switch (err.code) {
    case 'ECONNREFUSED':
      return `cannot connect to ${where}: connection refused (nothing listening, or this network rejects port ${port}) (ECONNREFUSED)`;
    case 'ECONNRESET':
      return `cannot connect to ${where}: the connection was reset during the TLS handshake: a middlebox blocking DNS over TLS? (ECONNRESET)`;
    case 'ENETUNREACH':
    case 'EHOSTUNREACH':
      return `cannot connect to ${where}: no route to the resolver: offline? (${err.code})`;
    case 'ETIMEDOUT':
      return `cannot connect to ${where}: port ${port} timed out from this network (ETIMEDOUT)`;
    default:
      if (err.code?.startsWith('ERR_SSL_')) {
        const alert = err.code.replace(/^ERR_SSL_(TLSV1_ALERT_|SSLV3_ALERT_)?/, '').toLowerCase().replace(/_/g, ' ');
        return `the TLS handshake with ${where} failed (${alert}): not a DNS-over-TLS server, or a middlebox interfering? (${err.code})`;
      }
      return `cannot connect to ${where}: ${err.code ?? err.message}`;
  }
}

function spkiPin(cert: tls.PeerCertificate): string | undefined {
  // `cert.pubkey` is the bare key for EC certificates; the pin is over the DER
  // SubjectPublicKeyInfo (RFC 7469 §2.4), so derive it from the certificate.
  if (!cert.raw) return undefined;
  const spki = new crypto.X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' });
  return crypto.createHash('sha256').update(spki).digest('base64');
}

function chainPins(socket: tls.TLSSocket): string[] {
  const pins: string[] = [];
  let cert: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  const seen = new Set<tls.DetailedPeerCertificate>();
  while (cert && Object.keys(cert).length > 0 && !seen.has(cert)) {
    seen.add(cert);
    const pin = spkiPin(cert);
    if (pin) pins.push(pin);
    cert = cert.issuerCertificate;
  }
  return pins;
}

export class DotConnection extends EventEmitter<DotConnectionEvents> {
  readonly id: number;
  readonly address: string;
  readonly resolver: ResolverSpec;
  readonly createdAt = Date.now();
  readonly #opts: DotConnectionOptions;
  readonly #socket: tls.TLSSocket;
  readonly #reader = new FrameReader();
  /** In flight, keyed by wire ID; Map order is send order, so the first entry is the oldest. */
  readonly #pending = new Map<number, Pending>();
  #state: ConnectionState = 'connecting';
  /** drain() was called while connecting: go straight to draining once ready. */
  #drainRequested = false;
  #nextId: number = crypto.randomInt(0, 65536);
  #connectTimer: NodeJS.Timeout | undefined;
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
  #lastReceiveAt = 0;
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
      ca: opts.auth.ca.length ? [...tls.rootCertificates, ...opts.auth.ca] : undefined,
      // We authenticate ourselves on 'secureConnect' so that opportunistic mode
      // can proceed and strict mode can explain its refusal.
      rejectUnauthorized: false,
      session: opts.session,
      // No ALPN: RFC 7858 doesn't use it, and a server that configures ALPN
      // for other protocols answers an unknown "dot" with a fatal alert.
    });
    this.#socket.setNoDelay(true);
    this.#connectTimer = setTimeout(() => {
      this.#fail(
        'error',
        new ConnectTimeoutError(
          `port ${opts.resolver.port} at ${opts.address} timed out after ${opts.connectTimeoutMs} ms from this network`,
        ),
      );
    }, opts.connectTimeoutMs);
    this.#socket.on('secureConnect', () => this.#onSecureConnect());
    this.#socket.on('session', (ticket: Buffer) => {
      if (this.#state === 'open' || this.#state === 'draining') this.emit('session', ticket);
    });
    this.#socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    this.#socket.on('end', () => {
      // The server closed its side (RFC 7766 §6.2.4): nothing more will be answered.
      if (this.#state !== 'closed') this.#fail('server-close', undefined);
    });
    this.#socket.on('error', (err: NodeJS.ErrnoException) => {
      if (this.#state === 'closed') return;
      if (this.#state === 'connecting') {
        this.#fail('error', new ConnectFailedError(describeConnectError(err, opts.address, opts.resolver.port), { cause: err }));
      } else {
        this.#fail(err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'reset' : 'error', new ConnectionClosedError(`connection to ${opts.address} failed: ${err.code ?? err.message}`, { cause: err }));
      }
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
  /** performance.now() of the last byte received (0 if none). */
  get lastReceiveAt(): number {
    return this.#lastReceiveAt;
  }

  /**
   * Sends an upstream query, framed (two-octet length first, RFC 7858 §3.3);
   * its ID is overwritten in place. Returns null when the
   * connection can't take it (closed, draining or at its cap): the caller
   * picks another connection or answers SERVFAIL.
   */
  send<T>(framed: Buffer, question: UpstreamQuestion, handler: AnswerHandler<T>, ctx: T): SendInfo | null {
    if (!this.available) return null;
    let id = this.#nextId;
    while (this.#pending.has(id)) id = (id + 1) & 0xffff;
    this.#nextId = (id + 1) & 0xffff;
    // The caller hands over a framed query it won't touch again; only the ID is ours to write.
    framed.writeUInt16BE(id, 2);
    const pending: Pending = { question, handler: handler as AnswerHandler<unknown>, ctx, writtenAt: 0, wire: framed };
    this.#pending.set(id, pending);
    this.#queriesCarried++;
    const reused = this.#state === 'open';
    // Before authentication the query waits in the map (writtenAt 0n); ready flushes it.
    if (reused) this.#write(pending);
    return { connection: this, upstreamId: id, reused, depth: this.#pending.size };
  }

  /** Takes a query back (its deadline passed); a late answer is then ignored. */
  cancel(upstreamId: number): void {
    if (this.#pending.delete(upstreamId)) this.#afterSettle();
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
      // Batch every query of this tick into one TLS record and one syscall.
      this.#corked = true;
      this.#socket.cork();
      process.nextTick(() => {
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
    let verified: boolean;
    let authError: string | undefined;
    if (resumed) {
      // The ticket came from a connection that passed authentication; the PSK
      // proves this server holds it.
      verified = true;
    } else if (opts.resolver.pins.length > 0) {
      const presented = chainPins(socket);
      verified = presented.some((p) => opts.resolver.pins.includes(p));
      if (!verified) {
        authError = `no certificate from ${opts.address} matches the SPKI pins for ${opts.resolver.label}: TLS interception or a changed key? (presented ${presented.join(', ') || 'none'})`;
        if (opts.auth.mode === 'strict') {
          this.#fail('error', new PinMismatchError(authError));
          return;
        }
      }
    } else if (socket.authorized && opts.resolver.authName !== undefined) {
      verified = true;
    } else {
      verified = false;
      const code = opts.resolver.authName === undefined ? 'NO_AUTH_NAME' : String(socket.authorizationError ?? 'UNKNOWN');
      authError =
        code === 'NO_AUTH_NAME'
          ? `no authentication name or SPKI pin is configured for ${opts.address}`
          : describeCertError(code, opts.resolver.authName, opts.address);
      if (opts.auth.mode === 'strict') {
        this.#fail('error', new CertificateError(`refused ${opts.address}: ${authError}`, code));
        return;
      }
    }
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
    this.#lastReceiveAt = performance.now();
    this.emit('bytes', 0, chunk.length);
    let messages: Buffer[];
    try {
      messages = this.#reader.push(chunk);
    } catch (err) {
      this.#fail('error', new ConnectionClosedError(`resolver at ${this.address} broke DNS framing`, { cause: err }));
      return;
    }
    for (const raw of messages) {
      if (this.#state === 'closed') return;
      this.#onMessage(raw);
    }
  }

  #onMessage(raw: Buffer): void {
    if (raw.length < 2) return;
    const id = raw.readUInt16BE(0);
    const pending = this.#pending.get(id);
    if (!pending) return; // late answer to a cancelled query, or a bogus ID
    let answer: UpstreamAnswer;
    try {
      answer = readUpstreamAnswer(raw, pending.question);
    } catch (err) {
      // RFC 7858 §3.3 / RFC 5452: an answer must echo the question. Drop it
      // and leave the query pending: its deadline decides what happens next.
      this.emit('mismatch', pending.question.key, err instanceof QuestionMismatchError ? err.got : undefined);
      return;
    }
    const oldest = this.#pending.keys().next().value;
    if (oldest !== id) this.emit('out-of-order');
    this.#pending.delete(id);
    if (answer.keepaliveMs !== undefined) this.#onKeepalive(answer.keepaliveMs);
    pending.handler(pending.ctx, this, id, null, answer, pending.writtenAt);
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
    if (this.#state === 'open') this.emit('drain');
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
    const pending = [...this.#pending];
    this.#pending.clear();
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
