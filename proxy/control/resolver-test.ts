/**
 * "Test resolvers" (issue 14): which resolver is fastest from this network.
 * Each resolver is measured over each transport it has (DoT; DoH when it
 * has a URL) with pools of its own, apart from the active upstream: a few
 * queries over a fresh connection (connect, handshake, answer) and a few
 * over the same connection once it is open (what a query costs on a kept
 * connection, which is what dotstub gives most queries).
 *
 * The probe is `. NS` (the root's name servers): every recursive resolver
 * has it cached, so the figure is the path and the resolver's front end,
 * not its recursion, and it names nothing the user looked up.
 *
 * Invariants:
 * - Nothing is shared with the active upstream: no pool, no session
 *   ticket, no counters; the proxy's own queries never wait on a test.
 * - Bounded: at most `concurrency` measurements at once, each within
 *   the connect and handshake timers plus `queryTimeoutMs` per query, and
 *   the whole run within `deadlineMs` (what is unfinished then is reported
 *   as timed out, and its pools are destroyed).
 * - Resolvers outside `scope` are listed as not measured, and no packet
 *   is sent to them (`local`: only resolvers on this machine, for test labs).
 * - Authentication is the proxy's own policy: a resolver that can't be
 *   verified in strict mode is reported as failed, with the reason.
 */
import type { ResolverSpec } from '../config/resolvers.js';
import { queryFor } from '../dns/request.js';
import { classifyFailure, type FailureKind } from '../network/classify.js';
import type { AuthPolicy } from '../upstream/auth-policy.js';
import type { Transport } from '../upstream/managed.js';
import { poolFor } from '../upstream/for-resolver.js';
import type { Pool } from '../upstream/pool.js';
import { DEFAULT_POOL_OPTIONS, type PoolOptions } from '../upstream/pool/options.js';
import { newTrace, type UpstreamRequest } from '../upstream/upstream.js';
import { dohEndpoint } from '../config/resolvers.js';
import type { DotstubError } from '../errors.js';
import { sideCheck } from '../runtime/side-check.js';

export type MeasureScope = 'all' | 'local';

export interface TransportMeasurement {
  readonly transport: Transport;
  readonly ok: boolean;
  /** Median over the fresh connections: connect + handshake + one answer, ms. */
  readonly freshMs: number | null;
  /** Median over the queries on an open connection, ms. */
  readonly warmMs: number | null;
  readonly samples: { readonly fresh: readonly number[]; readonly warm: readonly number[] };
  /** Failed: what happened (network/classify.ts), in a sentence. */
  readonly kind: FailureKind | 'timeout' | null;
  readonly error: string | null;
}

export interface ResolverMeasurement {
  readonly id: string;
  readonly label: string;
  /** False: outside the scope (nothing was sent); `skipped` says why. */
  readonly measured: boolean;
  readonly skipped: string | null;
  readonly transports: readonly TransportMeasurement[];
  /** The best warm median over its transports, ms; null when none answered. */
  readonly bestMs: number | null;
  /** 1 = fastest; null when not ranked (not measured, or nothing answered). */
  readonly rank: number | null;
}

export interface ResolverTestResult {
  readonly startedAt: number;
  readonly tookMs: number;
  readonly activeId: string;
  /** Fastest first; then the ones that failed; then the ones not measured. */
  readonly resolvers: readonly ResolverMeasurement[];
}

export interface ResolverTestOptions {
  readonly auth: AuthPolicy;
  readonly scope: MeasureScope;
  /** Fresh connections per transport. */
  readonly fresh: number;
  /** Queries on the open connection per transport. */
  readonly warm: number;
  readonly concurrency: number;
  readonly queryTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly handshakeTimeoutMs: number;
  readonly deadlineMs: number;
}

export const DEFAULT_RESOLVER_TEST: Omit<ResolverTestOptions, 'auth' | 'scope'> = {
  fresh: 2,
  warm: 5,
  concurrency: 4,
  queryTimeoutMs: 2_000,
  connectTimeoutMs: 2_500,
  handshakeTimeoutMs: 3_000,
  deadlineMs: 20_000,
};

/** `. NS` with RD, as a client would send it, padded like any query. */
function probe(): UpstreamRequest {
  return { ...queryFor('.', 'NS', { pad: true, keepalive: false }), trace: newTrace() };
}

function isLoopback(address: string): boolean {
  return address.startsWith('127.') || address === '::1';
}

function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

class Cancelled extends Error {}

/** One query through `pool`, timed from hand-over to answer. */
function timedQuery(pool: Pool, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { timeout: true })), timeoutMs);
    pool.resolve(probe(), (_req, err) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(round(performance.now() - t0));
    });
  });
}

/** Measures one transport of one resolver; every pool it makes is destroyed before it returns. */
async function measureTransport(spec: ResolverSpec, transport: Transport, o: ResolverTestOptions, live: Set<Pool>, cancelled: () => boolean): Promise<TransportMeasurement> {
  const options: PoolOptions = {
    ...DEFAULT_POOL_OPTIONS,
    size: 1,
    connectTimeoutMs: o.connectTimeoutMs,
    handshakeTimeoutMs: o.handshakeTimeoutMs,
    queryTimeoutMinMs: Math.min(DEFAULT_POOL_OPTIONS.queryTimeoutMinMs, o.queryTimeoutMs),
    queryTimeoutMaxMs: o.queryTimeoutMs,
  };
  const fresh: number[] = [];
  const warm: number[] = [];
  const port = transport === 'doh' && spec.dohUrl ? dohEndpoint(spec.dohUrl).port : spec.port;
  try {
    for (let i = 0; i < o.fresh; i++) {
      if (cancelled()) throw new Cancelled();
      // Strict needs an auth name or pin; opportunistic measures whatever answers, as the proxy would use it.
      const pool = poolFor(spec, transport, { auth: o.auth, options }, false);
      live.add(pool);
      try {
        fresh.push(await timedQuery(pool, o.connectTimeoutMs + o.handshakeTimeoutMs + o.queryTimeoutMs));
        // The last fresh pool's connection is the warm one.
        if (i === o.fresh - 1) {
          for (let j = 0; j < o.warm; j++) {
            if (cancelled()) throw new Cancelled();
            warm.push(await timedQuery(pool, o.queryTimeoutMs));
          }
        }
      } finally {
        pool.destroy();
        live.delete(pool);
      }
    }
    return { transport, ok: true, freshMs: median(fresh), warmMs: median(warm), samples: { fresh, warm }, kind: null, error: null };
  } catch (err) {
    const base = { transport, ok: false, freshMs: median(fresh), warmMs: median(warm), samples: { fresh, warm } };
    if (err instanceof Cancelled || cancelled()) return { ...base, kind: 'timeout', error: `not finished within the test's ${o.deadlineMs / 1000} s` };
    if ((err as { timeout?: boolean }).timeout) return { ...base, kind: 'timeout', error: `${spec.label} gave no answer within the deadline` };
    const c = classifyFailure(err as DotstubError, port, spec.label);
    return { ...base, kind: c.kind, error: c.sentence };
  }
}

/** One fresh connection and one query over DoT (the switch probe, switch-probe.ts): connect, handshake, answer. */
export function measureOnce(
  spec: ResolverSpec,
  auth: AuthPolicy,
  timers: { readonly connectTimeoutMs: number; readonly handshakeTimeoutMs: number; readonly queryTimeoutMs: number },
): Promise<TransportMeasurement> {
  const o: ResolverTestOptions = { ...DEFAULT_RESOLVER_TEST, ...timers, auth, scope: 'all', fresh: 1, warm: 0, concurrency: 1, deadlineMs: 0 };
  return measureTransport(spec, 'dot', o, new Set(), () => false);
}

/** Runs `tasks` with at most `limit` at once. */
async function bounded<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await (tasks[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return out;
}

/** Measures `resolvers` from this network and ranks them by their best warm median. */
export async function testResolvers(resolvers: readonly ResolverSpec[], activeId: string, o: ResolverTestOptions): Promise<ResolverTestResult> {
  const startedAt = Date.now();
  const t0 = performance.now();
  const live = new Set<Pool>();
  let expired = false;
  const deadline = setTimeout(() => {
    expired = true;
    // Whatever is still connecting or waiting fails now (its callback settles the measurement).
    for (const p of live) p.destroy();
  }, o.deadlineMs);
  deadline.unref();
  const inScope = (r: ResolverSpec): boolean => o.scope === 'all' || r.addresses.every(isLoopback);
  const tasks: { readonly spec: ResolverSpec; readonly transport: Transport }[] = [];
  for (const r of resolvers) {
    if (!inScope(r)) continue;
    tasks.push({ spec: r, transport: 'dot' });
    if (r.dohUrl !== undefined) tasks.push({ spec: r, transport: 'doh' });
  }
  let results: TransportMeasurement[];
  try {
    results = await bounded(
      // Each measurement beside the query path: however it fails, that resolver is "not measured", and the proxy goes on (runtime/side-check.ts).
      tasks.map((t) => async (): Promise<TransportMeasurement> => {
        const m = await sideCheck(`testing ${t.spec.label}`, () => measureTransport(t.spec, t.transport, o, live, () => expired));
        return m.ok ? m.value : { transport: t.transport, ok: false, freshMs: null, warmMs: null, samples: { fresh: [], warm: [] }, kind: 'other', error: `not measured: ${m.why}` };
      }),
      o.concurrency,
    );
  } finally {
    clearTimeout(deadline);
    for (const p of live) p.destroy();
  }
  const byId = new Map<string, TransportMeasurement[]>();
  tasks.forEach((t, i) => byId.set(t.spec.id, [...(byId.get(t.spec.id) ?? []), results[i] as TransportMeasurement]));
  const measured = resolvers.map((r): Omit<ResolverMeasurement, 'rank'> => {
    if (!inScope(r)) {
      return { id: r.id, label: r.label, measured: false, skipped: 'not on this machine: this dotstub measures only local resolvers (--measure-only-local)', transports: [], bestMs: null };
    }
    const transports = byId.get(r.id) ?? [];
    const warm = transports.filter((t) => t.ok && t.warmMs !== null).map((t) => t.warmMs as number);
    return { id: r.id, label: r.label, measured: true, skipped: null, transports, bestMs: warm.length ? Math.min(...warm) : null };
  });
  const ranked = measured.filter((m) => m.bestMs !== null).sort((a, b) => (a.bestMs as number) - (b.bestMs as number));
  const failed = measured.filter((m) => m.measured && m.bestMs === null);
  const skipped = measured.filter((m) => !m.measured);
  return {
    startedAt,
    tookMs: Math.round(performance.now() - t0),
    activeId,
    resolvers: [...ranked.map((m, i) => ({ ...m, rank: i + 1 })), ...failed.map((m) => ({ ...m, rank: null })), ...skipped.map((m) => ({ ...m, rank: null }))],
  };
}
