/**
 * Which connection a query goes to, and when a burst needs more of them
 * (issue 12). After an idle moment a server may send only TCP's initial
 * window (ten segments, ~13 KB of answers) before it hears back, so a
 * page's worth of padded answers (468-octet blocks) would arrive over three
 * or four round trips on one connection. A connection is therefore given
 * only as many queries as its answers fit in that window (the answer size
 * is measured as answers come); the rest go to the next open connection,
 * and when every open one is full the pool opens extra ones for the burst.
 *
 * Invariants: pick() is a pure choice over the connections it is shown
 * (it sends nothing and opens nothing); a window is never below
 * MIN_WINDOW_QUERIES, so huge answers still pipeline; a connection that is
 * still connecting takes queries only when no open one can (its handshake
 * takes longer than an open connection's next round trips).
 */
import type { PoolConnection } from '../connection/contract.js';

/**
 * What a server sends in its first round trip after an idle moment: TCP's
 * initial window (RFC 6928: ten segments). Measured from unbound as Debian
 * ships it (Nagle on): a first small segment with one answer, then full
 * ones — about 13,500 octets; the last partial segment of a burst waits for
 * an ACK whatever the client does, so a little under that.
 */
const INITIAL_WINDOW_BYTES = 10 * 1_300;
/** Per answer beyond its DNS octets: DoT's length prefix and a TLS record's header and tag (HTTP/2's frame headers are in the same range). */
const ANSWER_OVERHEAD_BYTES = 2 + 22;
/** Until answers are seen, assume they are padded (RFC 8467's 468-octet blocks): the smaller budget. */
const FIRST_ANSWER_BYTES_GUESS = 468;
/** A window's budget is never below this many queries (huge answers still pipeline). */
const MIN_WINDOW_QUERIES = 4;

/** The window budget: how many queries one connection's initial window carries answers for. */
export class AnswerWindow {
  /** Smoothed size of an answer in octets (1/16 gain). */
  #answerBytes = FIRST_ANSWER_BYTES_GUESS;

  observe(answerBytes: number): void {
    this.#answerBytes += (answerBytes - this.#answerBytes) / 16;
  }

  /** How many answers of the current size one initial window carries. */
  queries(): number {
    return Math.max(MIN_WINDOW_QUERIES, Math.floor(INITIAL_WINDOW_BYTES / (this.#answerBytes + ANSWER_OVERHEAD_BYTES)));
  }
}

export interface Pick {
  /** Where the query goes; undefined when no connection can take it. */
  readonly conn: PoolConnection | undefined;
  /**
   * Every open connection's window is full: the windows the queries in
   * flight need (one per connection), so the pool can open more for the
   * burst; 0 when no burst is under way.
   */
  readonly burstWindows: number;
}

/**
 * The first open connection (oldest first) whose window has room; when
 * every open one is full, the least-loaded of them (a burst); with no open
 * one that can take it, the least-loaded that is connecting. `avoid` is
 * skipped (a retry's last connection), and so is any connection that is
 * not `available`.
 */
export function pick(connections: readonly PoolConnection[], avoid: PoolConnection | undefined, window: number): Pick {
  let best: PoolConnection | undefined;
  let leastLoaded: PoolConnection | undefined;
  let connecting: PoolConnection | undefined;
  let openInFlight = 0;
  for (const c of connections) {
    if (c.state === 'open') openInFlight += c.inFlight;
    if (!c.available || c === avoid) continue;
    if (c.state !== 'open') {
      if (!connecting || c.inFlight < connecting.inFlight) connecting = c;
    } else if (c.inFlight < window) {
      best ??= c;
    } else if (!leastLoaded || c.inFlight < leastLoaded.inFlight) {
      leastLoaded = c;
    }
  }
  if (best) return { conn: best, burstWindows: 0 };
  if (leastLoaded) return { conn: leastLoaded, burstWindows: Math.ceil((openInFlight + 1) / window) };
  return { conn: connecting, burstWindows: 0 };
}
