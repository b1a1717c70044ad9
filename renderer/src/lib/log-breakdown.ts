/**
 * What was looked up over a chosen window, from the records the page holds
 * (the live log): the top names, the top failed names, and the response-code
 * breakdown. Pure; counts are exact over what the page holds, which the
 * card says (the log keeps the newest 100,000).
 */
import type { QueryRecord } from '../../../proxy/control/api-types.js';

export interface Ranked {
  readonly key: string;
  readonly count: number;
  /** count / total of the window, 0…1. */
  readonly share: number;
}

export interface LogBreakdown {
  /** Queries in the window. */
  readonly total: number;
  /** Oldest record in the window (ms since the epoch), null when empty: the window the page actually holds. */
  readonly from: number | null;
  readonly names: readonly Ranked[];
  /** Names whose answer was a failure (SERVFAIL, REFUSED, …; NXDOMAIN is an answer, not a failure). */
  readonly failed: readonly Ranked[];
  readonly rcodes: readonly Ranked[];
}

export const WINDOWS = [
  { label: 'last minute', ms: 60_000 },
  { label: 'last 5 minutes', ms: 5 * 60_000 },
  { label: 'last hour', ms: 60 * 60_000 },
  { label: 'everything held', ms: Infinity },
] as const;

const NOT_FAILURES: ReadonlySet<string> = new Set(['NOERROR', 'NXDOMAIN']);
const UNRECORDED = '(name not recorded)';

function rank(counts: Map<string, number>, total: number, top: number): Ranked[] {
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, top)
    .map(([key, count]) => ({ key, count, share: total > 0 ? count / total : 0 }));
}

function bump(m: Map<string, number>, k: string): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}

export function breakdown(records: Iterable<QueryRecord>, now: number, windowMs: number, top = 8): LogBreakdown {
  const since = now - windowMs;
  const names = new Map<string, number>();
  const failed = new Map<string, number>();
  const rcodes = new Map<string, number>();
  let total = 0;
  let from: number | null = null;
  for (const r of records) {
    // dotstub's own checks (the liveness probe, about once a second) are not what this machine looked up.
    if (r.startedAt < since || r.internal === true) continue;
    total++;
    if (from === null || r.startedAt < from) from = r.startedAt;
    const name = r.name ?? UNRECORDED;
    bump(names, name);
    bump(rcodes, r.rcode);
    if (!NOT_FAILURES.has(r.rcode)) bump(failed, name);
  }
  return { total, from, names: rank(names, total, top), failed: rank(failed, total, top), rcodes: rank(rcodes, total, Infinity) };
}
