/**
 * What the engine reports about client queries: a QueryRecord for each
 * query it answers (the engine's 'query' event, which the proxy passes on;
 * nothing is recorded for a message refused at parsing, which is counted
 * and reported as a 'malformed' event instead), and Counters, one object of
 * running totals shared by the engine, the answer cache and the pools.
 *
 * Invariants: each counter field has one writer (engine: EngineCounters
 * below; cache: CacheCounters; pools: upstream/counters.ts); everyone else
 * reads, and the control API copies the object when it reports. A record's
 * `name` is null when the user chose not to record names.
 */
import { newCacheCounters, type CacheCounters } from '../cache/caching-upstream.js';
import { newUpstreamCounters, type UpstreamCounters } from '../upstream/counters.js';
import type { BlockSign, ExtendedError } from '../dns/extended-error.js';

export type { BlockSign, ExtendedError };

export type Transport = 'udp' | 'tcp';

/** Where a client's answer came from. */
export type AnswerSource =
  /** The resolver's answer, over DoT or DoH. */
  | 'upstream'
  /** From the answer cache, TTLs lowered by their age. */
  | 'cache'
  /** An expired cached answer, served because the resolver failed or was slow (RFC 8767). */
  | 'stale'
  /** Synthesised SERVFAIL: the resolver couldn't be reached in time, or backpressure. */
  | 'servfail'
  /**
   * FORMERR/NOTIMP/REFUSED for a malformed or refused query. Kept for the
   * API's readers, but not emitted today: those are 'malformed' events.
   */
  | 'error-reply'
  /** A name dotstub answers itself (resolver.arpa, Firefox's canary): never forwarded. */
  | 'local'
  /** Unencrypted, from the network's own resolver: a captive portal's sign-in names (or degraded mode). Never cached. */
  | 'cleartext';

/**
 * Where the name router (engine/router.ts) sent a query, when it did not go
 * to the chosen encrypted resolver: to the resolver of the link that owns
 * the name ('link': answered by your network's own resolver, unencrypted),
 * answered here ('answered': .local, an unowned private reverse zone, a
 * search-suffixed name), or refused ('refused': strict mode, local names not
 * allowed on this network).
 */
export type RouteMark =
  | { readonly kind: 'link'; readonly link: string; readonly suffix: string; readonly servers: string; readonly source: string }
  | { readonly kind: 'answered'; readonly why: string }
  | { readonly kind: 'refused'; readonly why: string };

export interface QueryRecord {
  /** Monotonic per proxy, for ordering and de-duplication in clients. */
  readonly seq: number;
  /** Wall-clock start, ms since the epoch. */
  readonly startedAt: number;
  /** The queried name, or null when the user chose not to record names. */
  readonly name: string | null;
  readonly type: string;
  readonly transport: Transport;
  readonly rcode: string;
  readonly resolverId: string | null;
  readonly connectionId: number | null;
  /** The query found an open connection (the T-DNS "connection hit"); null if never sent. */
  readonly reused: boolean | null;
  /** For a query that waited on a new connection: that connection's handshake kind. */
  readonly handshake: 'full' | 'resumed' | null;
  /** Client-visible latency: received → answer handed to the socket. */
  readonly latencyUs: number;
  /** Waiting for a connection (handshake) before the query was written. */
  readonly queueUs: number;
  /** Written to the resolver → answer read back. */
  readonly upstreamUs: number;
  /** Queries in flight on the connection when this one was sent, itself included. */
  readonly depth: number;
  readonly source: AnswerSource;
  /** Attempts made upstream (UpstreamTrace.attempts): 1, more after a dead connection or a passed deadline; 0 when never sent. */
  readonly attempts: number;
  /** Answer didn't fit the client's UDP size: TC sent so it retries over TCP. */
  readonly truncated: boolean;
  /** Error code when the answer is a synthesised SERVFAIL. */
  readonly error: string | null;
  /**
   * True for dotstub's own lookups (the liveness watchdog's probe,
   * engine/local-answers.ts): not counted in `queries`, the series or top
   * names; the dashboard's log hides them unless asked. Absent otherwise.
   */
  readonly internal?: true;
  /** Set when the name router sent the query elsewhere than the encrypted resolver (absent: it went there). */
  readonly route?: RouteMark;
  /**
   * Sent again on a second connection after the first went silent
   * (upstream/pool/hedge.ts): the connection it went to and how long the
   * first had been silent, ms; one answer and one record all the same.
   * Absent: sent once (a retry counts in `attempts` instead).
   */
  readonly hedge?: { readonly connectionId: number; readonly afterMs: number };
  /**
   * When the attempt whose answer counted was not the query's first (a
   * retry, a query held while the resolver was unreachable and sent when
   * it came back, or the copy of a hedge that answered first): from the
   * query's arrival to that attempt, µs. `queueUs` and `upstreamUs` are
   * that attempt's, so without this the earlier attempts' time would look
   * like time in the proxy. Absent: the first attempt counted.
   */
  readonly earlierUs?: number;
  /**
   * The answer's Extended DNS Errors (RFC 8914: INFO-CODE and EXTRA-TEXT),
   * in the order the resolver sent them; the client got them unchanged.
   * Absent: the answer carried none.
   */
  readonly extendedErrors?: readonly ExtendedError[];
  /**
   * Why the answer reads as blocked: the resolver said so (its first EDE of
   * 15 Blocked, 16 Censored, 17 Filtered or 18 Prohibited), or it answered
   * 0.0.0.0 or :: without saying anything, the usual way to block. Absent:
   * not blocked, as far as the answer tells.
   */
  readonly blocked?: BlockSign;
}

/** What the engine counts; it is their only writer. */
interface EngineCounters {
  /** Client queries, dotstub's own checks not included. */
  queries: number;
  /** dotstub's own lookups (the liveness watchdog's probe), answered here and counted apart. */
  internalChecks: number;
  answers: number;
  servfails: number;
  /** Client messages refused at parsing: malformed, unsupported or refused (answered FORMERR, NOTIMP, REFUSED or BADVERS, or dropped). */
  malformed: number;
  truncated: number;
  /** Names answered here, never forwarded (engine/local-answers.ts, and the router's NXDOMAINs). */
  localAnswers: number;
  /** Local names sent to the owning link's resolver, unencrypted (engine/router.ts). */
  localNames: number;
  /** Queries that found an open connection. */
  connectionHits: number;
  paddingBytes: number;
}

/** Every counter the proxy keeps: one object, each field with one writer (engine, cache or upstream). */
export interface Counters extends EngineCounters, CacheCounters, UpstreamCounters {}

export function newCounters(): Counters {
  return {
    queries: 0,
    internalChecks: 0,
    answers: 0,
    servfails: 0,
    malformed: 0,
    truncated: 0,
    localAnswers: 0,
    localNames: 0,
    connectionHits: 0,
    paddingBytes: 0,
    ...newCacheCounters(),
    ...newUpstreamCounters(),
  };
}

/**
 * A record's block and EDEs for `--log`: "blocked: EDE 15 (Blocked) 'malware: lab list'",
 * "blocked: answered 0.0.0.0", "EDE 3 (Stale Answer)"; '' when neither.
 */
function blockedText(r: Pick<QueryRecord, 'blocked' | 'extendedErrors'>): string {
  const ede = (e: ExtendedError): string => `EDE ${e.code} (${e.name})${e.text ? ` '${e.text}'` : ''}`;
  const b = r.blocked;
  const others = (r.extendedErrors ?? []).filter((e) => !(b?.kind === 'ede' && e.code === b.code && e.text === b.text)).map(ede);
  const head = b === undefined ? [] : [b.kind === 'ede' ? `blocked: ${ede(b)}` : `blocked: answered ${b.address}`];
  return [...head, ...others].join(' ');
}

/** One line for `--log`. */
export function formatRecord(r: QueryRecord): string {
  const ms = (r.latencyUs / 1000).toFixed(2).padStart(8);
  const conn =
    r.connectionId === null ? 'no connection' : `conn ${r.connectionId} ${r.reused ? 'reused' : `new (${r.handshake ?? 'handshake'})`}`;
  const extra = [
    r.attempts > 1 ? 'retried' : '',
    r.hedge ? `sent again on #${r.hedge.connectionId} after ${r.hedge.afterMs} ms of silence` : '',
    r.truncated ? 'TC' : '',
    r.error ? r.error : '',
    blockedText(r),
    r.route?.kind === 'link' ? `local: answered by ${r.route.link}'s resolver ${r.route.servers}, unencrypted` : r.route ? `${r.route.kind} here: ${r.route.why}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return `${new Date(r.startedAt).toISOString()}${r.internal ? ' (own check)' : ''} ${r.transport} ${r.name ?? '(name not recorded)'} ${r.type} ${r.rcode} ${ms} ms ${conn} depth ${r.depth}${extra ? ` ${extra}` : ''}`;
}
