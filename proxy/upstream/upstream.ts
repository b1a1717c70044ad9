/**
 * The upstream contract: what the engine asks of anything that resolves
 * queries. Modelled on routedns's `Resolver` and dnsproxy's `Upstream`.
 * Implemented by the pools (pool.ts: DoT or DoH connections), the fallback
 * of two pools (fallback.ts), the answer cache (cache/caching-upstream.ts),
 * the cleartext path (plain/cleartext.ts) and the captive-portal gate
 * (network/captive.ts); each wraps or composes others through this
 * contract alone. test-support/upstream-contract.ts is the suite they pass.
 *
 * Invariants every implementation keeps:
 * - `resolve()` calls `done` exactly once per request: an answer whose
 *   question matches the request's, or a typed DotstubError, within the
 *   upstream's own deadline (it owns its deadlines, retries and
 *   cancellation; the engine sets no timer of its own).
 * - A request that fails at once (closed upstream, backpressure, resolver
 *   unreachable, quarantined question) gets its callback before `resolve()`
 *   returns.
 * - The caller never touches a connection; what it may want to know about
 *   the query's path is written to `req.trace`.
 * - `close()` lets requests in flight finish; `destroy()` fails each of
 *   them once, typed. After either, nothing is sent (the cache may still
 *   answer a fresh hit).
 */
import type { UpstreamAnswer } from '../dns/upstream-answer.js';
import type { UpstreamQuestion } from '../dns/upstream-query.js';
import type { DotstubError } from '../errors.js';

/** How a query travelled, filled in by the upstream for the query record. */
export interface UpstreamTrace {
  /**
   * Attempts made: 1, more when a connection died or a deadline passed (a
   * pool: one retry of the query's own, plus re-sends that were not its
   * fault; the cleartext path: one per server it tried); 0 when never sent.
   */
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
  /** Sent again on a second connection after its first stayed silent (pool/hedge.ts): where, and after how long a silence (ms). */
  hedge: { readonly connectionId: number; readonly afterMs: number } | null;
  /** Answered in cleartext by the network's own resolver (captive sign-in, or degraded mode): never cached, marked in the log. */
  cleartext: boolean;
}

export function newTrace(): UpstreamTrace {
  return { attempts: 0, resolverId: null, connectionId: null, reused: null, handshake: null, depth: 0, sentAt: 0, writtenAt: 0, hedge: null, cache: null, cleartext: false };
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
  /**
   * The query's DO, CD and AD bits (QUERY_BIT_*), when the sender knows
   * them without reading `wire` (the engine does): the answer cache keys by
   * them and then never makes the engine encode a query it answers itself.
   */
  readonly bits?: number;
  /**
   * Date.now() when the client's query arrived, when the sender read it
   * (the engine does): the answer cache ages its entries by it instead of
   * reading the clock again (a runtime call per hit).
   */
  readonly askedAt?: number;
}

/** Called exactly once per request. One shared callback plus the request as context keeps the hot path free of closures. */
export type UpstreamCallback<R extends UpstreamRequest> = (req: R, err: DotstubError | null, answer: UpstreamAnswer | null) => void;

export interface Upstream {
  /** Readable: `DoT(quad9)`, `Fallback(DoT(quad9); DoH(quad9))`, `Cache(…)`, `Cleartext(192.168.1.1)`. */
  readonly name: string;
  resolve<R extends UpstreamRequest>(req: R, done: UpstreamCallback<R>): void;
  /** Stops taking requests; resolves once every request in flight got its callback and connections are closed. */
  close(): Promise<void>;
  /** Closes now: every request in flight gets its callback with an error. */
  destroy(): void;
}
