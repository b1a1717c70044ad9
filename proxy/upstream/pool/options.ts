/**
 * What a pool of connections is told at start: sizes, caps and deadlines,
 * their defaults, and the checks a pool makes of them. Its own module so
 * that settings, the CLI and the connections read the options without
 * importing the pool (imports in proxy/ run one way, down the query path).
 */

export interface PoolOptions {
  /** Connections kept per resolver (RFC 7858 §3.4 suggests few; one is usually best). */
  readonly size: number;
  /**
   * Queries in flight per connection; beyond it they wait for room. Default
   * 100: what AdGuard DNS publishes it takes on one connection, and what
   * operators give dnsdist (WORLD.md); fewer when a server shows it takes
   * fewer (limits.ts).
   */
  readonly maxInFlight: number;
  /**
   * Extra connections opened when a burst needs more than the open ones'
   * initial windows (0: every burst shares the kept connections). Default 3:
   * with the one kept, 4 at once, the most the pool ever opens to one
   * resolver (BURST_CONNECTIONS below; RFC 7766 §6.2.2, RFC 7858 §3.4
   * ask for few). It was 8 until issue 42 (9 at once for a page's burst).
   */
  readonly burstConnections?: number;
  readonly idleTimeoutMs: number;
  /** Deadline for the TCP connect (a dropped port is decided in this long). */
  readonly connectTimeoutMs: number;
  /** Deadline for the TLS handshake once TCP is up (a stalled handshake); DoT and DoH alike. */
  readonly handshakeTimeoutMs: number;
  /**
   * Smallest and largest per-attempt query deadline; the RTT estimate picks
   * in between (rtt.ts). The largest also bounds how long an attempt waits
   * on a connection that is still delivering other answers.
   */
  readonly queryTimeoutMinMs: number;
  readonly queryTimeoutMaxMs: number;
  /** Longest wait between reconnect attempts while the resolver is unreachable. */
  readonly maxBackoffMs: number;
  /** Happy Eyeballs: start the next address family this long after the first (RFC 8305 §5 recommends 250 ms). */
  readonly attemptDelayMs?: number;
  /**
   * DoT: acknowledge answers at once (TCP_QUICKACK, quick-ack.ts) so a
   * resolver that uses Nagle's algorithm never holds an answer for our
   * delayed ACK. Default on; off only to measure what it saves. (unbound's
   * DoH server does not hold answers this way, so DoH does without.)
   */
  readonly quickAck?: boolean;
  /**
   * Send a query again on a second connection once its own has read nothing
   * for about 4 × SRTT (hedge.ts), instead of waiting out its deadline.
   * Default on; off to see the deadlines alone (tests).
   */
  readonly hedge?: boolean;
}

/** Connections kept to one resolver outside bursts, whatever the options say (RFC 7766 §6.2.2, RFC 7858 §3.4: few). */
export const STEADY_CONNECTIONS = 2;
/** Connections to one resolver at once in a burst (connecting, open or draining), whatever the options say. */
export const BURST_CONNECTIONS = 4;

/** The most queries a pool with `options` has in flight at once: its connections at most (4), each at its cap. */
export function poolCapacity(options: Pick<PoolOptions, 'size' | 'burstConnections' | 'maxInFlight'>): number {
  return Math.max(1, Math.min(options.size + (options.burstConnections ?? 0), BURST_CONNECTIONS)) * options.maxInFlight;
}

export const DEFAULT_POOL_OPTIONS: PoolOptions = {
  size: 1,
  maxInFlight: 100,
  burstConnections: 3,
  idleTimeoutMs: 60_000,
  connectTimeoutMs: 2_500,
  handshakeTimeoutMs: 3_000,
  queryTimeoutMinMs: 800,
  queryTimeoutMaxMs: 2_500,
  // Idle recovery within 10 s (issue 24): while lookups come, each may try once a second anyway (backoff.ts).
  maxBackoffMs: 10_000,
  attemptDelayMs: 250,
  quickAck: true,
};

/** Throws a RangeError for options no pool can work with. */
export function validatePoolOptions(options: PoolOptions): void {
  if (!(options.size >= 1)) throw new RangeError(`pool size must be at least 1, got ${options.size}`);
  const extra = options.burstConnections ?? 0;
  if (!(Number.isInteger(extra) && extra >= 0)) throw new RangeError(`burst connections must be a whole number from 0, got ${extra}`);
}
