/**
 * One query must not take others down with it (a meta type once closed the
 * shared connection, and every retry with it). When a connection dies
 * abnormally with queries in flight, the first failed query it hands back
 * (the oldest unanswered one) is the prime suspect and uses up its own
 * retry; the others are collateral and are retried without using theirs.
 * A question that is the suspect of two deaths within KILL_WINDOW_MS is
 * quarantined: it gets a typed error at once, without being sent, for
 * QUARANTINE_MS.
 *
 * Connections that die within TOGETHER_MS of each other died of one cause
 * (a reset path, a restarting server), not of a query: no one is blamed.
 * Only a connection that was already open before the previous death
 * qualifies; one that came up after it (a burst extra that was connecting)
 * dies of its own cause.
 *
 * Invariants: at most MAX_SUSPECTS questions are remembered in each of the
 * two maps (the oldest forgotten first); a death blames at most one query;
 * nothing here sends, retries or closes anything: the pool asks and acts.
 */
import type { CloseInfo, PoolConnection } from '../connection/contract.js';
import { QuarantinedError } from '../../errors.js';
import type { UpstreamRequest } from '../upstream.js';

const KILL_WINDOW_MS = 30_000;
/** Connections that die this close together died of the same cause (a reset path, a restarting server). */
const TOGETHER_MS = 1_000;
const QUARANTINE_MS = 60_000;
/** Bound on remembered questions (kills and quarantine). */
const MAX_SUSPECTS = 1024;
/** Closes that say the server (or the path) ended the connection, not us. */
const ABNORMAL = new Set(['reset', 'server-close', 'desync']);
/** Retries one query may get as collateral of deaths blamed on others. */
const MAX_COLLATERAL_RETRIES = 3;

/** What to do with a query a connection handed back with an error. */
export type Verdict =
  /** Blamed for a second death: fail it with this error, don't send it again. */
  | { readonly kind: 'quarantined'; readonly error: QuarantinedError }
  /** Another query was blamed (or nobody, the deaths were together): retry without using up its own retry. */
  | { readonly kind: 'collateral' }
  /** Its own failure (or the suspect's first): the ordinary retry rule applies. */
  | { readonly kind: 'own' };

function questionKey(req: UpstreamRequest): string {
  const k = req.question.key;
  return `${k.name.toLowerCase()}/${k.type}/${k.class}`;
}

export class Quarantine {
  readonly #label: string;
  /** Connections that died abnormally with queries in flight: the first failed query handed back (the oldest) is blamed, the rest are collateral. */
  readonly #deaths = new WeakMap<PoolConnection, 'unblamed' | 'blamed' | 'together'>();
  /** Question → when it was blamed for a connection's death (Date.now()). */
  readonly #kills = new Map<string, number>();
  /** Question → quarantined until (Date.now()). */
  readonly #quarantine = new Map<string, number>();
  /** performance.now() of the last abnormal close of an open connection. */
  #lastDeathAt = -Infinity;
  /** performance.now() when each connection came up (finer than Date.now(): the order of a death and an open within one millisecond matters). */
  readonly #openedAt = new WeakMap<PoolConnection, number>();

  /** `label`: the resolver's, for the error's sentence. */
  constructor(label: string) {
    this.#label = label;
  }

  /** The error for `req` while it is quarantined, else undefined (an expired quarantine is forgotten). */
  check(req: UpstreamRequest): QuarantinedError | undefined {
    if (this.#quarantine.size === 0) return undefined;
    const key = questionKey(req);
    const until = this.#quarantine.get(key);
    if (until !== undefined && until > Date.now()) {
      return new QuarantinedError(`${this.#label} closed the connection over ${req.question.key.name} ${req.question.key.type} twice; not sent again for ${Math.ceil((until - Date.now()) / 1000)} s`);
    }
    if (until !== undefined) this.#quarantine.delete(key);
    return undefined;
  }

  /** `conn` authenticated and opened. */
  opened(conn: PoolConnection): void {
    this.#openedAt.set(conn, performance.now());
  }

  /** `conn` closed; called before the queries it failed are handed back (oldest first). */
  closed(conn: PoolConnection, info: CloseInfo): void {
    if (!info.wasOpen || !ABNORMAL.has(info.reason)) return;
    const now = performance.now();
    const together = (this.#openedAt.get(conn) ?? now) < this.#lastDeathAt && now - this.#lastDeathAt < TOGETHER_MS;
    this.#lastDeathAt = now;
    if (info.failed > 0) this.#deaths.set(conn, together ? 'together' : 'unblamed');
  }

  /** `req` came back from `conn` with an error; `collateral`: its retries so far as collateral. */
  judge(conn: PoolConnection, req: UpstreamRequest, collateral: number): Verdict {
    const death = this.#deaths.get(conn);
    if (death === 'unblamed') {
      this.#deaths.set(conn, 'blamed');
      if (this.#blame(req)) {
        return { kind: 'quarantined', error: new QuarantinedError(`${this.#label} closed the connection over ${req.question.key.name} ${req.question.key.type} twice; not sent again for ${QUARANTINE_MS / 1000} s`) };
      }
      return { kind: 'own' };
    }
    if ((death === 'blamed' && collateral < MAX_COLLATERAL_RETRIES) || death === 'together') return { kind: 'collateral' };
    return { kind: 'own' };
  }

  /** Records that `req` was the prime suspect of a connection's death; true when that makes it quarantined. */
  #blame(req: UpstreamRequest): boolean {
    const key = questionKey(req);
    const now = Date.now();
    const before = this.#kills.get(key);
    this.#kills.delete(key);
    if (before !== undefined && now - before < KILL_WINDOW_MS) {
      if (this.#quarantine.size >= MAX_SUSPECTS) this.#quarantine.delete(this.#quarantine.keys().next().value as string);
      this.#quarantine.set(key, now + QUARANTINE_MS);
      return true;
    }
    if (this.#kills.size >= MAX_SUSPECTS) this.#kills.delete(this.#kills.keys().next().value as string);
    this.#kills.set(key, now);
    return false;
  }
}
