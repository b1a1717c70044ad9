/**
 * Hedging a connection whose path died (issues 32, 42). A NAT or firewall
 * that forgets a connection drops its packets from then on, with no RST:
 * the queries on it wait out their deadline (800 ms at least, rtt.ts)
 * before they are retried. Instead, once a query has waited with nothing
 * read from its connection for longer than an ACK takes, the pool asks TCP
 * whether the peer acknowledged it (../connection/peer-acks.ts); only if
 * nothing from it on was acknowledged is it sent again on a second
 * connection (an idle one, else a new one), the first attempt kept
 * listening: the first answer wins, the other attempt is dropped by ID.
 * A resolver that is slow to answer (a name it must look up: 250 ms, 2 s)
 * still acknowledges the query: it is waited for, never sent twice, and
 * its connection is kept. The first connection is retired only if the
 * second answered while the peer still acknowledged nothing.
 *
 *   send ─► hedge check (ACK wait: 2 × SRTT, 100 ms – 1 s)
 *     read something since it was written, or not yet written ─► nothing; the deadline decides as before
 *     nothing read for that long ─► TCP: acknowledged? ─yes─► nothing; the deadline decides (and asks TCP again)
 *         no ─► sent again on another connection ─► first answer wins
 *             second wins, first still unacknowledged ─► first connection closed ('unresponsive'), its other queries retried
 *             first wins ─► the copy is taken back (a late answer to it is dropped by ID)
 *
 * The ACK wait: the peer's TCP acknowledges a query within a round trip
 * and its delayed-ACK timer (Linux: 40 ms, and no more than its RTT when
 * that is longer; other systems up to 200 ms), so 2 × SRTT with a floor of
 * 100 ms; a dead path is then noticed within the 250 ms the first second
 * allows (docs/promises.md), handshake of the second connection included.
 * Where TCP's acknowledgements can't be read (not Linux, no /proc) the only
 * evidence is that nothing was read, which a thinking resolver gives too:
 * the wait is then max(1 s, 4 × SRTT), which the deadline (800 ms at least)
 * usually passes first, and a connection that delivered any bytes since
 * the query was written is never closed.
 *
 * Invariants: a query is sent again at most once, and only after it was
 * written to its connection; it has at most two attempts in flight at
 * once, the second always the flight's current one (its deadline is the
 * flight's), the first kept in `Flight.first` until it answers, fails or
 * the flight ends, and every attempt given up is taken back from its
 * connection's in-flight map.
 */
import type { AckEvidence, PoolConnection, SendInfo } from '../connection/contract.js';
import type { RttEstimator } from '../rtt.js';
import type { Flight } from './flight.js';

/** The shortest wait for an ACK before a missing one counts: a round trip and the longest usual delayed ACK (Linux's 40 ms) twice over, ms. */
const ACK_WAIT_FLOOR_MS = 100;
/** The longest: beyond it the deadline (800 ms or more) comes first anyway, ms. */
const ACK_WAIT_CAP_MS = 1_000;
/** Without TCP's view, the shortest silence that sends a query again, ms. */
const READS_ONLY_FLOOR_MS = 1_000;

/**
 * How long a query may wait with nothing read from its connection before
 * the connection is asked whether its peer acknowledged it (`evidence`
 * 'tcp'), or (without that view) before it is sent again, ms; Infinity
 * until an answer has been timed.
 */
export function hedgeAfterMs(rtt: RttEstimator, evidence: AckEvidence): number {
  const srtt = rtt.srttMs;
  if (srtt === undefined) return Infinity;
  if (evidence === 'reads') return Math.max(READS_ONLY_FLOOR_MS, 4 * srtt);
  return Math.min(ACK_WAIT_CAP_MS, Math.max(ACK_WAIT_FLOOR_MS, 2 * srtt));
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

/** The second attempt answered and the first connection read nothing since its silence began: it is retired if its peer still acknowledges nothing (peerSilence). */
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
