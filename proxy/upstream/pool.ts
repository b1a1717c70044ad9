/**
 * The connections to one resolver: opened at start so the first query
 * doesn't pay the handshake, reused for every query, resumed with the last
 * TLS session ticket after an idle close, and backed off when the network
 * refuses them.
 *
 * Invariants:
 * - At most `size` connections exist at once (connecting or open); draining
 *   ones (server asked to close) don't count against new work.
 * - A ticket is kept only from an authenticated connection, so resumption
 *   never bypasses authentication.
 * - While connecting fails, queries fail at once with the reason (no pile-up
 *   behind a dead network); a timer keeps trying so the pool recovers by itself.
 */
import { EventEmitter } from 'node:events';
import {
  DotConnection,
  type AuthPolicy,
  type CloseInfo,
  type HandshakeInfo,
  type SendInfo,
  type AnswerHandler,
} from './dot/connection.js';
import { InFlightCapError, PoolClosedError, type DotstubError } from '../errors.js';
import type { ResolverSpec } from '../config/resolvers.js';
import type { QuestionKey, UpstreamQuestion } from '../dns/wire.js';

export interface PoolOptions {
  /** Connections kept per resolver (RFC 7858 §3.4 suggests few; one is usually best). */
  readonly size: number;
  /** Queries in flight per connection before backpressure. */
  readonly maxInFlight: number;
  readonly idleTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly auth: AuthPolicy;
  /** Smallest and largest per-attempt query deadline; the RTT estimate picks in between. */
  readonly queryTimeoutMinMs: number;
  readonly queryTimeoutMaxMs: number;
  /** Longest wait between reconnect attempts while the resolver is unreachable. */
  readonly maxBackoffMs: number;
}

export const DEFAULT_POOL_OPTIONS: Omit<PoolOptions, 'auth'> = {
  size: 1,
  maxInFlight: 1000,
  idleTimeoutMs: 60_000,
  connectTimeoutMs: 5_000,
  queryTimeoutMinMs: 800,
  queryTimeoutMaxMs: 2_500,
  maxBackoffMs: 30_000,
};

export interface ConnectFailure {
  readonly resolverId: string;
  readonly address: string;
  readonly error: DotstubError;
  readonly consecutive: number;
  readonly retryInMs: number;
}

export interface PoolEvents {
  open: [DotConnection, HandshakeInfo];
  close: [DotConnection, CloseInfo];
  'connect-failed': [ConnectFailure];
  keepalive: [DotConnection, number];
  mismatch: [DotConnection, QuestionKey, QuestionKey | undefined];
  'out-of-order': [DotConnection];
  bytes: [number, number];
  drained: [];
}

let connectionCounter = 0;

export class Pool extends EventEmitter<PoolEvents> {
  readonly resolver: ResolverSpec;
  readonly options: PoolOptions;
  /** Live connections (connecting, open or draining); closed ones are removed at once. */
  readonly #connections: DotConnection[] = [];
  /** Latest session ticket per address. */
  readonly #tickets = new Map<string, Buffer>();
  #addressIndex = 0;
  #failures = 0;
  #retryAt = 0;
  #lastError: DotstubError | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;
  // RFC 6298-style smoothed RTT of answered queries, in ms.
  #srtt: number | undefined;
  #rttvar = 0;

  constructor(resolver: ResolverSpec, options: PoolOptions) {
    super();
    this.resolver = resolver;
    this.options = options;
  }

  /** Opens the pool's connections now instead of on the first query. */
  warm(): void {
    while (!this.#closed && this.#connections.length < this.options.size && !this.#inBackoff()) this.#open();
  }

  get connections(): readonly DotConnection[] {
    return this.#connections;
  }

  get inFlight(): number {
    let n = 0;
    for (const c of this.#connections) n += c.inFlight;
    return n;
  }

  /** The reason the last connection attempt failed, while the pool is backing off. */
  get lastError(): DotstubError | undefined {
    return this.#inBackoff() ? this.#lastError : undefined;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Smoothed RTT in ms (undefined until an answer arrived). */
  get srttMs(): number | undefined {
    return this.#srtt;
  }

  observeRtt(ms: number): void {
    if (this.#srtt === undefined) {
      this.#srtt = ms;
      this.#rttvar = ms / 2;
    } else {
      this.#rttvar = 0.75 * this.#rttvar + 0.25 * Math.abs(this.#srtt - ms);
      this.#srtt = 0.875 * this.#srtt + 0.125 * ms;
    }
  }

  /** Deadline for one attempt: RTO-like, within the configured bounds. */
  queryTimeoutMs(): number {
    const { queryTimeoutMinMs: min, queryTimeoutMaxMs: max } = this.options;
    if (this.#srtt === undefined) return max;
    return Math.min(max, Math.max(min, 2 * (this.#srtt + 4 * this.#rttvar)));
  }

  /**
   * Sends on the least-loaded open connection, opening one if none can take
   * it. Throws InFlightCapError when every connection is full, the connect
   * error while the resolver is unreachable, PoolClosedError after close().
   * `avoid` is skipped when another connection can take the query (retries).
   */
  send<T>(wire: Buffer, question: UpstreamQuestion, handler: AnswerHandler<T>, ctx: T, avoid?: DotConnection): SendInfo {
    if (this.#closed) throw new PoolClosedError(`resolver ${this.resolver.label} is no longer in use`);
    let best: DotConnection | undefined;
    for (const c of this.#connections) {
      if (!c.available || c === avoid) continue;
      if (!best || (c.state === 'open' && best.state !== 'open') || (c.state === best.state && c.inFlight < best.inFlight)) best = c;
    }
    if (!best) {
      if (this.#liveCount() < this.options.size) {
        if (this.#inBackoff() && this.#lastError) throw this.#lastError;
        best = this.#open();
      } else if (avoid?.available) {
        best = avoid;
      }
    }
    if (!best) {
      throw new InFlightCapError(
        `all ${this.options.size} connection(s) to ${this.resolver.label} have ${this.options.maxInFlight} queries in flight`,
      );
    }
    const info = best.send(wire, question, handler, ctx);
    if (!info) throw new InFlightCapError(`connection ${best.id} cannot take more queries`);
    return info;
  }

  /** Stops taking queries; resolves once every in-flight query is settled and the connections are closed. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    const waits = this.#connections.map(
      (c) => new Promise<void>((resolve) => (c.state === 'closed' ? resolve() : c.once('close', () => resolve()))),
    );
    for (const c of [...this.#connections]) c.drain();
    await Promise.all(waits);
    this.emit('drained');
  }

  /** Closes at once, failing whatever is in flight. */
  destroy(): void {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    for (const c of [...this.#connections]) c.close('local');
  }

  #liveCount(): number {
    let n = 0;
    for (const c of this.#connections) if (c.state === 'connecting' || c.state === 'open') n++;
    return n;
  }

  #inBackoff(): boolean {
    return this.#failures > 0 && Date.now() < this.#retryAt;
  }

  #open(): DotConnection {
    const address = this.resolver.addresses[this.#addressIndex % this.resolver.addresses.length] as string;
    const conn = new DotConnection({
      id: ++connectionCounter,
      resolver: this.resolver,
      address,
      auth: this.options.auth,
      session: this.#tickets.get(address),
      maxInFlight: this.options.maxInFlight,
      idleTimeoutMs: this.options.idleTimeoutMs,
      connectTimeoutMs: this.options.connectTimeoutMs,
    });
    this.#connections.push(conn);
    conn.on('ready', (info) => {
      this.#failures = 0;
      this.#lastError = undefined;
      this.emit('open', conn, info);
    });
    conn.on('session', (ticket) => this.#tickets.set(address, ticket));
    conn.on('keepalive', (ms) => this.emit('keepalive', conn, ms));
    conn.on('mismatch', (asked, got) => this.emit('mismatch', conn, asked, got));
    conn.on('out-of-order', () => this.emit('out-of-order', conn));
    conn.on('bytes', (out, inn) => this.emit('bytes', out, inn));
    conn.on('close', (info) => this.#onClose(conn, info));
    return conn;
  }

  #onClose(conn: DotConnection, info: CloseInfo): void {
    const idx = this.#connections.indexOf(conn);
    if (idx >= 0) this.#connections.splice(idx, 1);
    if (!info.wasOpen && !this.#closed) {
      // The connection never came up: try the next address, back off, and keep
      // trying in the background so the pool comes back by itself.
      this.#failures++;
      this.#addressIndex++;
      const backoff = Math.min(this.options.maxBackoffMs, 250 * 2 ** Math.min(this.#failures - 1, 16));
      this.#retryAt = Date.now() + backoff;
      this.#lastError = info.error;
      if (info.error) {
        this.emit('connect-failed', {
          resolverId: this.resolver.id,
          address: conn.address,
          error: info.error,
          consecutive: this.#failures,
          retryInMs: backoff,
        });
      }
      clearTimeout(this.#retryTimer);
      this.#retryTimer = setTimeout(() => this.warm(), backoff + 5);
      this.#retryTimer.unref();
    }
    this.emit('close', conn, info);
  }
}
