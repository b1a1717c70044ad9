/**
 * Queries that meet "no route" (the link is down, or its address was just
 * taken away: a Wi-Fi switch, a cable out, a renumbering) wait for the
 * network to come back instead of failing at once: a DNS client's first try
 * lasts a second or more, and a link back within that answers them. The
 * pool parks such a query here and attempts it again on the next network
 * change (the kernel reports the link and route coming back); one that has
 * waited `holdMs` since it first met "no route" fails with that error.
 *
 * Only "no route from this machine" parks a query (ENETUNREACH,
 * EADDRNOTAVAIL): a refused, reset, dropped or ICMP-rejected connection is
 * the network's answer and still fails at once, as the fallback ladder and
 * the classifier expect.
 */
import type { DotstubError } from '../../errors.js';
import type { Flight } from './flight.js';

const OFFLINE = new Set(['ENETUNREACH', 'EADDRNOTAVAIL']);

/**
 * While there is no route, the pool does not try again on a timer: the
 * network watch (network/watch.ts, the kernel's route and address events)
 * calls networkChanged() the moment a route comes, which tries at once, and
 * a lookup may still start an attempt (at most once a second). This slow
 * timer only covers an idle machine where nothing reports changes. Offline
 * is quiet: no attempt every few seconds, no wake-ups for nothing (issue 41).
 */
export const OFFLINE_RETRY_MS = 300_000;

/** Whether `err` says this machine has no route at all (not that the resolver or the network refused). */
export function isOffline(err: DotstubError): boolean {
  const code = (err.cause as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && OFFLINE.has(code);
}

export class OfflineHold {
  readonly #holdMs: number;
  readonly #expire: (flight: Flight, error: DotstubError) => void;
  readonly #parked = new Map<Flight, NodeJS.Timeout>();

  constructor(holdMs: number, expire: (flight: Flight, error: DotstubError) => void) {
    this.#holdMs = holdMs;
    this.#expire = expire;
  }

  get size(): number {
    return this.#parked.size;
  }

  /** Parks `flight` when `err` is "no route" and it has not waited `holdMs` yet; false: it fails now. */
  park(flight: Flight, err: DotstubError): boolean {
    if (!isOffline(err)) return false;
    flight.parkedSince ||= performance.now();
    const left = flight.parkedSince + this.#holdMs - performance.now();
    if (left <= 0) return false;
    flight.conn = undefined;
    const timer = setTimeout(() => {
      if (this.#parked.delete(flight)) this.#expire(flight, err);
    }, left);
    this.#parked.set(flight, timer);
    return true;
  }

  /**
   * Every parked flight, unparked: the network changed, so they are tried
   * again. The wait was not their own retry: it counts as collateral.
   */
  release(): Flight[] {
    const flights = [...this.#parked.keys()];
    for (const timer of this.#parked.values()) clearTimeout(timer);
    this.#parked.clear();
    for (const flight of flights) flight.collateral++;
    return flights;
  }
}
