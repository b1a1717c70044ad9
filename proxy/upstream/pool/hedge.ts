/**
 * Hedging a connection that has gone silent (issue 32). A NAT or firewall
 * that forgets a connection drops its packets from then on, with no RST:
 * the queries on it wait out their deadline (800 ms at least, rtt.ts)
 * before they are retried. Instead, once a query has waited while nothing
 * was read from its connection for about 4 × the smoothed RTT, the pool
 * sends it again on a second connection (an idle one, else a new one)
 * and keeps the first attempt listening: the first answer wins, the other
 * attempt is dropped by ID. Only then is the first connection judged: if
 * the second answered while the first stayed silent, the first is retired.
 *
 *   send ─► hedge check (4 × SRTT, at least SRTT + 4 × RTTVAR; 50 ms – 1 s)
 *     read something since it was written, or not yet written ─► nothing; the deadline decides as before
 *     nothing read for that long ─► sent again on another connection ─► first answer wins
 *         second wins, first still silent ─► first connection closed ('unresponsive'), its other queries retried
 *         first wins ─► the copy is taken back (a late answer to it is dropped by ID)
 *
 * The wait follows the path: 4 × SRTT, and never less than TCP's own
 * estimate without its 200 ms minimum (SRTT + 4 × RTTVAR), so a resolver
 * whose answers vary (names it must look up) is given longer before
 * anything is sent twice. The floor is unbound's smallest timeout
 * (RTT_MIN_TIMEOUT, 50 ms): on a fast path an answer that takes 50 ms
 * with nothing else read is rare, and a dead one is found in that long,
 * as unbound finds it.
 *
 * Invariants: a query is sent again at most once, and only after it was
 * written to its connection; it has at most two attempts in flight at
 * once, the second always the flight's current one (its deadline is the
 * flight's), the first kept in `Flight.first` until it answers, fails or
 * the flight ends, and every attempt given up is taken back from its
 * connection's in-flight map.
 */
import type { PoolConnection, SendInfo } from '../connection/contract.js';
import type { RttEstimator } from '../rtt.js';
import type { Flight } from './flight.js';

/** unbound's RTT_MIN_TIMEOUT: the shortest silence that sends a query again, ms. */
const HEDGE_FLOOR_MS = 50;
/** The longest: beyond it the deadline (800 ms or more) comes first anyway, ms. */
const HEDGE_CAP_MS = 1_000;

/** How long a connection may stay silent with a query waiting before it is sent again, ms; Infinity until an answer has been timed. */
export function hedgeAfterMs(rtt: RttEstimator): number {
  const srtt = rtt.srttMs;
  if (srtt === undefined) return Infinity;
  return Math.min(HEDGE_CAP_MS, Math.max(HEDGE_FLOOR_MS, 4 * srtt, srtt + 4 * rtt.rttvarMs));
}

/** The first attempt of a query sent again, still listening for its answer. */
export interface FirstAttempt {
  readonly conn: PoolConnection;
  readonly upstreamId: number;
  /** Its trace fields, put back if it answers first. */
  readonly reused: boolean | null;
  readonly depth: number;
  readonly sentAt: number;
  /** performance.now() from which nothing was read from its connection. */
  readonly silentSince: number;
}

/**
 * Since when `conn` has been silent with this query waiting on it
 * (performance.now(): its write, or the last answer read after it); 0 when
 * the query isn't waiting on the connection's answers (held for a
 * handshake, or the connection closed).
 */
export function silentSince(conn: PoolConnection, writtenAt: number): number {
  if (writtenAt === 0 || (conn.state !== 'open' && conn.state !== 'draining')) return 0;
  return Math.max(writtenAt, conn.lastAnswerAt);
}

/**
 * Deadlines fire at most one 25 ms slot late (../deadlines.ts). A check that
 * fires later than that found this process not running (a loaded machine, a
 * long pause): the connection's silence may be our own, and the resolver on
 * the same machine may not have run either. Such a check is put off by one
 * more wait instead of sending anything twice.
 */
const OWN_STALL_MS = 40;

/** The check due at `dueAt` ran at `now`, too late to judge a silence. */
export function ownStall(dueAt: number, now: number): boolean {
  return now - dueAt > OWN_STALL_MS;
}

/** The second attempt answered: the first connection is retired when it read nothing since its silence began. */
export function stayedSilent(first: FirstAttempt): boolean {
  return first.conn.state !== 'closed' && first.conn.lastAnswerAt <= first.silentSince;
}

/**
 * The flight was sent again (`sent`) after its connection stayed silent from
 * `since`: the copy becomes its current attempt, the first is kept listening,
 * and the trace names the copy (the record says "sent again on #N").
 */
export function sentAgain(flight: Flight, sent: SendInfo, since: number, now: number): void {
  const trace = flight.req.trace;
  const conn = flight.conn as PoolConnection;
  flight.first = { conn, upstreamId: flight.upstreamId, reused: trace.reused, depth: trace.depth, sentAt: trace.sentAt, silentSince: since };
  flight.conn = sent.connection;
  flight.upstreamId = sent.upstreamId;
  trace.connectionId = sent.connection.id;
  trace.reused = sent.reused;
  trace.depth = sent.depth;
  trace.sentAt = now;
  trace.hedge = { connectionId: sent.connection.id, afterMs: Math.round(now - since) };
}

/** The first attempt becomes the flight's current one again (it answered first, or the copy failed); the caller takes the copy back if it still waits. */
export function resumeFirst(flight: Flight, first: FirstAttempt): void {
  flight.conn = first.conn;
  flight.upstreamId = first.upstreamId;
  const trace = flight.req.trace;
  trace.connectionId = first.conn.id;
  trace.reused = first.reused;
  trace.depth = first.depth;
  trace.sentAt = first.sentAt;
}

/**
 * Takes back a first attempt still listening (the flight ends, or moves on
 * to a retry). While `flight.first` is set, both attempts are in their
 * connections' maps: each leaves through the pool's handler (which clears
 * `first` or resumes it) or is cancelled here or with it, so an ID is never
 * cancelled after it was freed and perhaps given to another query.
 */
export function dropFirst(flight: Flight): void {
  const first = flight.first;
  if (!first) return;
  flight.first = undefined;
  first.conn.cancel(first.upstreamId);
}
