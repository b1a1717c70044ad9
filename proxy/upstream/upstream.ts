/**
 * The upstream contract: what the engine asks of anything that resolves
 * queries — a DoT pool today; DoH, a fallback chain and the answer cache
 * next. Modelled on routedns's `Resolver` and dnsproxy's `Upstream`.
 *
 * Invariants every implementation keeps:
 * - `resolve()` calls `done` exactly once per request: an answer, or a typed
 *   DotstubError, within the upstream's own deadline (it owns deadlines,
 *   cancellation, retries on a dead connection and RTT estimation).
 * - A request that fails at once (closed upstream, backpressure, resolver
 *   unreachable) gets its callback before `resolve()` returns.
 * - The caller never touches a connection; what it may want to know about
 *   the query's path is written to `req.trace`.
 */
import type { UpstreamAnswer } from '../dns/upstream-answer.js';
import type { UpstreamQuestion } from '../dns/upstream-query.js';
import type { DotstubError } from '../errors.js';

/** How a query travelled, filled in by the upstream for the query record. */
export interface UpstreamTrace {
  /** 1, or 2 when the first attempt's connection died or its deadline passed. */
  attempts: number;
  resolverId: string | null;
  connectionId: number | null;
  /** The query found an open connection (the T-DNS "connection hit"); null if never sent. */
  reused: boolean | null;
  /** For a query that waited on a new connection: that connection's handshake kind. */
  handshake: 'full' | 'resumed' | null;
  /** Queries in flight on the connection when this one was sent, itself included. */
  depth: number;
  /** performance.now() when the last attempt was handed to a connection (0: never). */
  sentAt: number;
  /** performance.now() when the last attempt's bytes were written (0: never; later than sentAt while a handshake ran). */
  writtenAt: number;
  /** Answered from the cache: fresh ('hit') or expired but served because the resolver failed or was slow ('stale'). */
  cache: 'hit' | 'stale' | null;
  /** Answered in cleartext by the network's own resolver (captive sign-in, or degraded mode): never cached, marked in the log. */
  cleartext: boolean;
}

export function newTrace(): UpstreamTrace {
  return { attempts: 0, resolverId: null, connectionId: null, reused: null, handshake: null, depth: 0, sentAt: 0, writtenAt: 0, cache: null, cleartext: false };
}

export interface UpstreamRequest {
  /**
   * The query, framed (two-octet length first, RFC 7858 §3.3). The upstream
   * owns the ID octets (offset 2–3) and may overwrite them; nothing else.
   */
  readonly wire: Buffer;
  /** The question the answer must echo. */
  readonly question: UpstreamQuestion;
  readonly trace: UpstreamTrace;
}

/** Called exactly once per request. One shared callback plus the request as context keeps the hot path free of closures. */
export type UpstreamCallback<R extends UpstreamRequest> = (req: R, err: DotstubError | null, answer: UpstreamAnswer | null) => void;

export interface Upstream {
  /** Readable: `DoT(quad9)`; later `Fallback(DoT(quad9); DoH(quad9))`. */
  readonly name: string;
  resolve<R extends UpstreamRequest>(req: R, done: UpstreamCallback<R>): void;
  /** Stops taking requests; resolves once every request in flight got its callback and connections are closed. */
  close(): Promise<void>;
  /** Closes now: every request in flight gets its callback with an error. */
  destroy(): void;
}
