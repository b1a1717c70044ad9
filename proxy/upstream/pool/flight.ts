/**
 * One request's travel through the pool, and the rules for its deadline
 * and its retries: what a passed deadline means (wait longer on a
 * connection that is still answering others, or give up on a silent one),
 * and which failures may use the query's one own retry.
 *
 * Invariants: a flight is settled once (`settled` guards its callback);
 * a query's own retries are at most one, whatever its collateral re-sends
 * (quarantine.ts, race losers); an attempt waits at most
 * `queryTimeoutMaxMs` from its send, however often its deadline is extended;
 * a query sent again after silence (hedge.ts) is not a retry: it uses
 * neither the retry nor an attempt.
 */
import type { UpstreamAnswer } from '../../dns/upstream-answer.js';
import type { DotstubError } from '../../errors.js';
import type { PoolConnection } from '../connection/contract.js';
import type { UpstreamCallback, UpstreamRequest } from '../upstream.js';
import type { FirstAttempt } from './hedge.js';

/** The context of the pool's shared answer handler. */
export interface Flight {
  readonly req: UpstreamRequest;
  readonly done: UpstreamCallback<UpstreamRequest>;
  /** The connection of the current attempt; undefined before the first. */
  conn: PoolConnection | undefined;
  upstreamId: number;
  deadlineKey: number;
  /** performance.now() when the current deadline period began (the send, or the last extension). */
  armedAt: number;
  /** performance.now() when the current attempt's deadline passes (before any extension). */
  deadlineAt: number;
  /** performance.now() when to check the connection for silence (hedge.ts); 0: no check pending (the deadline is armed). */
  hedgeAt: number;
  /** After the query was sent again (hedge.ts): the first attempt, still listening. */
  first: FirstAttempt | undefined;
  settled: boolean;
  /** Attempts that didn't use up the query's own retry (collateral of a death, or held by a race's loser). */
  collateral: number;
  /** performance.now() when it first waited for the network to come back (offline.ts); 0: never. */
  parkedSince: number;
  /** performance.now() when it first waited for room on a connection (every one full); 0: never. */
  waitingSince: number;
}

export function newFlight(req: UpstreamRequest, done: UpstreamCallback<UpstreamRequest>): Flight {
  return {
    req,
    done,
    conn: undefined,
    upstreamId: -1,
    deadlineKey: -1,
    armedAt: 0,
    deadlineAt: 0,
    hedgeAt: 0,
    first: undefined,
    settled: false,
    collateral: 0,
    parkedSince: 0,
    waitingSince: 0,
  };
}

const RETRIABLE = new Set(['DOTSTUB_CONNECTION_CLOSED', 'DOTSTUB_QUERY_TIMEOUT']);

/** Whether `err` may use the query's own retry: a dead connection or a passed deadline, and not used yet. */
export function ownRetryLeft(flight: Flight, err: DotstubError): boolean {
  return flight.req.trace.attempts - flight.collateral < 2 && RETRIABLE.has(err.code);
}

export type DeadlineAction =
  /** The connection answered others meanwhile: extend the deadline to `until`. */
  | { readonly kind: 'wait'; readonly until: number }
  /** It answered others, but this one passed its upper bound: a timeout, without a retry. */
  | { readonly kind: 'give-up' }
  /** Nothing came back since it was written: a timeout that may retry; `closeConnection` when the connection is dead. */
  | { readonly kind: 'silent'; readonly closeConnection: boolean };

/**
 * What the deadline of `flight` on `conn` means now. `writtenAt`: when the
 * query was written (0: still held for a handshake); `maxMs`: the attempt's
 * upper bound from its send; `rtoMs`: one more wait.
 */
export function deadlinePassed(flight: Flight, conn: PoolConnection, writtenAt: number, now: number, maxMs: number, rtoMs: number): DeadlineAction {
  if (writtenAt !== 0 && conn.lastAnswerAt > Math.max(writtenAt, flight.armedAt) && conn.state !== 'closed') {
    // The connection answered others during this wait: it is alive, and this
    // query is behind TCP's recovery of a lost segment or a slow name at the
    // resolver. A retry would queue behind the same bytes (or cost a new
    // handshake), so wait another RTO, up to the attempt's upper bound.
    const limit = flight.req.trace.sentAt + maxMs;
    return now + 1 < limit ? { kind: 'wait', until: Math.min(limit, now + rtoMs) } : { kind: 'give-up' };
  }
  // No answer at all came back since this query was written: the connection
  // is dead (black-holed path, silent middlebox) or lost its framing (bytes
  // that are never a whole answer), unless its peer acknowledged the query
  // and the resolver is still looking the name up: the pool asks the
  // connection (peerSilence) before it acts on this. Closing a dead one
  // lets the others move on.
  return { kind: 'silent', closeConnection: writtenAt !== 0 && conn.lastAnswerAt < writtenAt && conn.state === 'open' };
}

/** Calls the flight's callback, the first time only (its deadline is the caller's to clear). */
export function settle(flight: Flight, err: DotstubError | null, answer: UpstreamAnswer | null): void {
  if (flight.settled) return;
  flight.settled = true;
  if (err && flight.conn?.handshake === undefined) {
    // Held by a connection that never came up: no resolver was reached, so
    // the query names none (the log says why instead of "connection #3").
    const trace = flight.req.trace;
    trace.connectionId = null;
    trace.reused = null;
    trace.depth = 0;
  }
  flight.done(flight.req, err, answer);
}
