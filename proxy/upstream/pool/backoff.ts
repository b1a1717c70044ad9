/**
 * Back-off while a resolver can't be reached: each connection attempt that
 * fails (every address of its race) doubles the wait before the next, from
 * 250 ms up to `maxBackoffMs`; the first authenticated connection ends it.
 * Meanwhile queries fail at once with the reason (no pile-up behind a dead
 * network), except that a query may still start one attempt at most once
 * a QUERY_CONNECT_INTERVAL_MS, so the first query after the path comes
 * back is answered instead of waiting out the back-off (issue 8).
 *
 * Invariants: one retry timer at a time (scheduling replaces it; it is
 * unref'd, so it never holds the process open); the last failure's error
 * is kept only while failing, for the queries that fail at once.
 */
import type { DotstubError } from '../../errors.js';

/** While backing off, queries may start a connection attempt this often (issue 8: recovery in seconds). */
const QUERY_CONNECT_INTERVAL_MS = 1_000;

export class Backoff {
  readonly #maxMs: number;
  /** Consecutive failed attempts; 0 once a connection came up. */
  #failures = 0;
  /** Date.now() until which the pool backs off (meaningful while #failures > 0). */
  #retryAt = 0;
  /** Date.now() when the last connection attempt started. */
  #lastAttemptAt = 0;
  #lastError: DotstubError | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(maxMs: number) {
    this.#maxMs = maxMs;
  }

  /** The error that failed the last attempt, while failing. */
  get lastError(): DotstubError | undefined {
    return this.#lastError;
  }

  /** A connection attempt starts now. */
  attempted(): void {
    this.#lastAttemptAt = Date.now();
  }

  /** A connection authenticated: the resolver is reachable. */
  connected(): void {
    this.#failures = 0;
    this.#lastError = undefined;
  }

  /** An attempt failed (every address of it): the next waits longer. Returns the consecutive failures and the wait, ms. */
  failed(error: DotstubError | undefined): { readonly consecutive: number; readonly backoffMs: number } {
    this.#failures++;
    const backoffMs = Math.min(this.#maxMs, 250 * 2 ** Math.min(this.#failures - 1, 16));
    this.#retryAt = Date.now() + backoffMs;
    this.#lastError = error;
    return { consecutive: this.#failures, backoffMs };
  }

  /** Forget the failures (the network changed: they measured the old one); cancels the timer. */
  reset(): void {
    this.#failures = 0;
    this.#retryAt = 0;
    this.#lastError = undefined;
    this.cancel();
  }

  backingOff(): boolean {
    return this.#failures > 0 && Date.now() < this.#retryAt;
  }

  /** ms until a query or the user may start another attempt (≤ 0: now). */
  untilNextAttempt(): number {
    return this.#lastAttemptAt + QUERY_CONNECT_INTERVAL_MS - Date.now();
  }

  /** Runs `fn` in `ms`, instead of whatever was scheduled. */
  schedule(fn: () => void, ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(fn, ms);
    this.#timer.unref();
  }

  cancel(): void {
    clearTimeout(this.#timer);
  }
}
