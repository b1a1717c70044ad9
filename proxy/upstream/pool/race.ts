/**
 * Opening a connection is a race across the resolver's address families
 * (Happy Eyeballs, RFC 8305 §5; issue 8): IPv6 first, IPv4 `attemptDelayMs`
 * later, or at once when IPv6 fails; both in flight, the first to
 * authenticate wins and the others are abandoned. The race fails only when
 * every address failed, and then reports the most telling failure with
 * each address's outcome and timing.
 *
 * Invariants: a race ends once (won, or lost when its last racer failed);
 * after that it starts no address and its timer is cleared; it never
 * closes a connection itself: the winner's rivals go to the pool's
 * `abandon` (which re-sends what they held without using a retry).
 */
import { isInterception, type DotstubError } from '../../errors.js';
import type { PoolConnection } from '../connection/contract.js';

/** One address's part in a connection race: when it was tried and how it ended. */
export interface AddressAttempt {
  readonly address: string;
  /** ms after the race began that this address was tried. */
  readonly startMs: number;
  /** ms from this address's start to its outcome; null while still connecting when the race ended. */
  readonly afterMs: number | null;
  readonly outcome: 'won' | 'failed' | 'abandoned';
  readonly error: DotstubError | undefined;
}

/** A connection race that ended with a winner after more than one address was tried. */
export interface RaceResult {
  readonly winner: string;
  readonly attempts: readonly AddressAttempt[];
  /** ms from the race's start to the winner's authentication. */
  readonly afterMs: number;
}

/**
 * The addresses one race tries, the `index`th of each family: IPv6 first,
 * then IPv4 (RFC 8305 §4 would interleave more; one per family keeps the
 * decision within the connect timer plus one delay). A failed race moves
 * the index on, to each family's next address.
 */
export function raceAddresses(all: readonly string[], index: number): string[] {
  const v6 = all.filter((a) => a.includes(':'));
  const v4 = all.filter((a) => !a.includes(':'));
  if (v6.length === 0 || v4.length === 0) return [all[index % all.length] as string];
  return [v6[index % v6.length] as string, v4[index % v4.length] as string];
}

/** What a lost race reports ('connect-failed'), with the back-off it starts. */
export interface ConnectFailure {
  readonly resolverId: string;
  readonly address: string;
  readonly error: DotstubError;
  readonly consecutive: number;
  readonly retryInMs: number;
  /** No route from this machine (offline.ts): the next attempt waits for the network to change, not for retryInMs alone. */
  readonly offline: boolean;
  /** The addresses tried were the resolver's IPv4 ones through this NAT64 prefix (a network without IPv4); null: its own. */
  readonly nat64Prefix: string | null;
  /** How long the attempt took to fail, ms (the whole race, when more than one address was tried). */
  readonly afterMs: number;
  /** Each address tried and how it ended, in the order they started. */
  readonly attempts: readonly AddressAttempt[];
}

export class ConnectionRace {
  /** Date.now() when the race began. */
  readonly startedAt = Date.now();
  /** Addresses not tried yet, in order. */
  readonly #pending: string[];
  /** Per racer: the address and when it started (ms after startedAt). */
  readonly #racers = new Map<PoolConnection, { readonly address: string; readonly startMs: number }>();
  readonly #attempts: AddressAttempt[] = [];
  readonly #delayMs: number;
  /** Opens a connection to an address; undefined when the pool no longer opens any (closed). */
  readonly #open: (address: string) => PoolConnection | undefined;
  #timer: NodeJS.Timeout | undefined;
  #done = false;

  constructor(addresses: readonly string[], delayMs: number, open: (address: string) => PoolConnection | undefined) {
    this.#pending = [...addresses];
    this.#delayMs = delayMs;
    this.#open = open;
  }

  /** Whether the race has ended (won, or every address failed). */
  get done(): boolean {
    return this.#done;
  }

  has(conn: PoolConnection): boolean {
    return this.#racers.has(conn);
  }

  /** Starts the first address (queries sent now are held there until one authenticates), and times the next. */
  start(): PoolConnection | undefined {
    const first = this.#pending.shift();
    const conn = first === undefined ? undefined : this.#startAddress(first);
    this.#armNext();
    return conn;
  }

  /** `conn` authenticated first: each rival still racing is handed to `abandon`. A result when more than one address was tried. */
  won(conn: PoolConnection, abandon: (rival: PoolConnection) => void): RaceResult | undefined {
    if (this.#done) return undefined;
    this.#end();
    const now = Date.now() - this.startedAt;
    const me = this.#racers.get(conn);
    if (me) this.#attempts.push({ address: me.address, startMs: me.startMs, afterMs: now - me.startMs, outcome: 'won', error: undefined });
    for (const [other, r] of this.#racers) {
      if (other === conn || other.state === 'closed') continue;
      this.#attempts.push({ address: r.address, startMs: r.startMs, afterMs: null, outcome: 'abandoned', error: undefined });
      abandon(other);
    }
    this.#attempts.sort((a, b) => a.startMs - b.startMs);
    return this.#attempts.length > 1 && me ? { winner: me.address, attempts: this.#attempts, afterMs: now } : undefined;
  }

  /**
   * `conn` failed before it came up. RFC 8305 §5: the next address starts
   * at once. True while others still race (what `conn` held moves to them);
   * false when it was the last: the race is lost.
   */
  failed(conn: PoolConnection, error: DotstubError | undefined): boolean {
    if (this.#done) return false;
    const r = this.#racers.get(conn);
    if (r) this.#attempts.push({ address: r.address, startMs: r.startMs, afterMs: Date.now() - this.startedAt - r.startMs, outcome: 'failed', error });
    this.#racers.delete(conn);
    if (this.#pending.length > 0) this.#startNext();
    if (this.#racers.size > 0) return true;
    this.#end();
    return false;
  }

  /** Each address tried and how it ended, in the order they started. */
  attempts(): AddressAttempt[] {
    return [...this.#attempts].sort((a, b) => a.startMs - b.startMs);
  }

  /** Stops starting addresses (the pool closed). */
  cancel(): void {
    clearTimeout(this.#timer);
  }

  #end(): void {
    this.#done = true;
    clearTimeout(this.#timer);
  }

  #startAddress(address: string): PoolConnection | undefined {
    const conn = this.#open(address);
    if (conn) this.#racers.set(conn, { address, startMs: Date.now() - this.startedAt });
    return conn;
  }

  #armNext(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.length === 0 || this.#done) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#startNext();
    }, this.#delayMs);
    this.#timer.unref();
  }

  #startNext(): void {
    const next = this.#pending.shift();
    if (next === undefined || this.#done) return;
    if (!this.#startAddress(next)) return;
    this.#armNext();
  }
}

/** No route: common for one family on a network that lacks it, so the least telling. */
const NO_ROUTE = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

/**
 * What a lost race (or a lone connection that never opened: no race) tells:
 * its most telling failure, the address that failed so, and how long it took.
 */
export function lostRace(
  race: ConnectionRace | undefined,
  conn: PoolConnection,
  connError: DotstubError | undefined,
): Pick<ConnectFailure, 'address' | 'afterMs' | 'attempts'> & { readonly error: DotstubError | undefined } {
  const attempts = race ? race.attempts() : [];
  const error = mostTelling(attempts) ?? connError;
  const address = attempts.find((a) => a.error === error)?.address ?? conn.address;
  return { error, address, afterMs: Date.now() - (race ? race.startedAt : conn.createdAt), attempts };
}

/** Which failure of a race to report: interception first, then the first other than "no route", then the first. */
export function mostTelling(attempts: readonly AddressAttempt[]): DotstubError | undefined {
  const failed = attempts.filter((a) => a.error !== undefined).map((a) => a.error as DotstubError);
  return (
    failed.find((e) => isInterception(e)) ??
    failed.find((e) => !NO_ROUTE.has((e.cause as NodeJS.ErrnoException | undefined)?.code ?? '')) ??
    failed[0]
  );
}
