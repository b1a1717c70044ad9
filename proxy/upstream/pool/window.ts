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

/** A train shorter than this says nothing about the window (a page's own name, a couple of lookups). */
const MIN_TRAIN_QUERIES = 2 * MIN_WINDOW_QUERIES;
/** Gain of the smoothed count per round trip (a cut train is one sample). */
const ARRIVALS_GAIN = 1 / 4;
/**
 * Windows are measured only on paths at least this long: on a path of a few
 * milliseconds, this process's own pauses are as long as a round trip and
 * would split or merge flights at random (a loopback or LAN resolver gets
 * the byte estimate, and there a round trip more costs little).
 */
const MIN_MEASURED_RTT_MS = 10;
/** The share of a measured window given to queries. */
const ARRIVALS_MARGIN = 0.9;

/**
 * A connection's train: the queries written on it from idle (nothing in
 * flight) until its first answer, and the answers that came in the same
 * flight as that first one (within half a round trip of it).
 */
interface Train {
  sent: number;
  firstAt: number;
  arrived: number;
}

/**
 * The window budget: how many answers one connection delivers in its first
 * round trip after an idle moment. Measured from arrivals, not bytes
 * (issue 32): a server with Nagle off sends about one answer a segment (10
 * in TCP's initial window, whatever their size), one with Nagle on about
 * 2.5. Until a train of queries has been cut by the server's window, the
 * budget is the byte estimate: TCP's initial window over the answers' size.
 */
export class AnswerWindow {
  /** Smoothed size of an answer in octets (1/16 gain). */
  #answerBytes = FIRST_ANSWER_BYTES_GUESS;
  /** Answers a connection delivered in its first round trip, smoothed over trains the server's window cut; 0: not measured yet. */
  #arrivals = 0;
  readonly #trains = new WeakMap<PoolConnection, Train>();

  observe(answerBytes: number): void {
    this.#answerBytes += (answerBytes - this.#answerBytes) / 16;
  }

  /** A query written on `conn`, `depth` in flight with it: depth 1 starts a train; more join it until its first answer. */
  sent(conn: PoolConnection, depth: number): void {
    if (depth <= 1) {
      this.#trains.set(conn, { sent: 1, firstAt: 0, arrived: 0 });
      return;
    }
    const t = this.#trains.get(conn);
    if (t && t.firstAt === 0) t.sent++;
  }

  /**
   * An answer read on `conn` at `now` (ms, performance.now()), the path's
   * round trip `rttMs`: answers within half a round trip of the train's
   * first are its first flight; the first one after that ends the train.
   * Paths under MIN_MEASURED_RTT_MS keep the byte estimate.
   */
  answered(conn: PoolConnection, now: number, rttMs: number): void {
    const t = this.#trains.get(conn);
    if (!t) return;
    if (!(rttMs >= MIN_MEASURED_RTT_MS)) {
      this.#trains.delete(conn);
      return;
    }
    if (t.firstAt === 0) t.firstAt = now;
    else if (now - t.firstAt >= rttMs / 2) {
      this.#trains.delete(conn);
      // The server stopped after `arrived` and went on a round trip later: its window, measured.
      if (t.sent >= MIN_TRAIN_QUERIES && t.arrived < t.sent) this.#arrivals += (t.arrived - this.#arrivals) * (this.#arrivals === 0 ? 1 : ARRIVALS_GAIN);
      return;
    }
    t.arrived++;
    if (t.arrived < t.sent) return;
    // The whole train in one flight: the window is at least that.
    this.#trains.delete(conn);
    if (this.#arrivals !== 0 && t.arrived > this.#arrivals) this.#arrivals = t.arrived;
  }

  /** How many answers one connection delivers in its first round trip after an idle moment. */
  queries(): number {
    // A tenth kept free: segments carry 2 or 3 answers by chance, and the last of a too-full window waits a round trip.
    if (this.#arrivals !== 0) return Math.max(MIN_WINDOW_QUERIES, Math.floor(this.#arrivals * ARRIVALS_MARGIN));
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
 * not `available` or that `takes` says can take no more (the server's limits).
 */
export function pick(connections: readonly PoolConnection[], avoid: PoolConnection | undefined, window: number, takes: (c: PoolConnection) => boolean = () => true): Pick {
  let best: PoolConnection | undefined;
  let leastLoaded: PoolConnection | undefined;
  let connecting: PoolConnection | undefined;
  let openInFlight = 0;
  for (const c of connections) {
    if (c.state === 'open') openInFlight += c.inFlight;
    if (!c.available || c === avoid || !takes(c)) continue;
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
