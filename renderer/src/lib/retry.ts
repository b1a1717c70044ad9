/**
 * Recovery as a live countdown: the proxy reports each failed connection
 * attempt with when it happened and how long it waits before the next
 * (connect-failed's at and retryInMs); the page counts down from those
 * instead of repeating a wait that was true once. Pure.
 */
import type { PrivacyState, TimelineEvent } from '../../../proxy/control/api-types.js';
import { errorWords } from './error-words.js';
import { formatAge } from './format.js';
import { nameWithPort } from './resolver-switch.js';

/** Attempts this close together, the last this recent: lookups are starting them (at most one a second). */
const BUSY_GAP_MS = 2_500;

/**
 * When the proxy tries again, as it really happens (upstream/pool/backoff.ts):
 * while lookups come, each may start an attempt at most once a second, so
 * "retrying with each lookup, about once a second" (a countdown would jump
 * as each attempt restarts the back-off); idle, "retrying by itself in 7 s,
 * or with the next lookup"; "retrying now…" once the wait is over.
 * `attempts`: the resolver's latest failed attempts, newest first (ms since the epoch).
 */
export function retryText(retryAt: number, now: number, attempts: readonly number[] = []): string {
  const [last, previous] = attempts;
  if (last !== undefined && previous !== undefined && now - last < BUSY_GAP_MS && last - previous < BUSY_GAP_MS) {
    return 'retrying with each lookup, about once a second';
  }
  const left = retryAt - now;
  if (left < 1000) return 'retrying now…';
  return `retrying by itself in ${formatAge(Math.ceil(left / 1000) * 1000)}, or with the next lookup`;
}

/** The resolver's latest failed connection attempts, newest first, at most `n`. */
export function recentAttempts(events: readonly TimelineEvent[], resolverId: string, n = 2): number[] {
  const at: number[] = [];
  for (const e of events) if (e.kind === 'connection' && e.event.type === 'connect-failed' && e.event.resolverId === resolverId) at.push(e.event.at);
  return at.sort((a, b) => b - a).slice(0, n);
}

export interface LastFailure {
  readonly at: number;
  readonly code: string;
  readonly address: string;
  readonly retryAt: number;
}

/** The newest connect failure of a resolver, if it is no older than `since` (ms since the epoch). */
export function lastFailure(events: readonly TimelineEvent[], resolverId: string, since: number): LastFailure | null {
  let last: LastFailure | null = null;
  for (const e of events) {
    if (e.kind !== 'connection' || e.event.type !== 'connect-failed' || e.event.resolverId !== resolverId || e.event.at < since) continue;
    if (last === null || e.event.at > last.at) last = { at: e.event.at, code: e.event.code, address: e.event.address, retryAt: e.event.at + e.event.retryInMs };
  }
  return last;
}

/** States in which the proxy is waiting to reach the resolver again. */
const WAITING: ReadonlySet<PrivacyState> = new Set(['blocked', 'degraded']);

export interface Recovery {
  /** What failed and what that means, in words (no wait: that is `retryAt`'s, counted down live). */
  readonly reason: string;
  readonly retryAt: number;
  /** The latest failed attempts, newest first (for retryText). */
  readonly attempts: readonly number[];
}

/**
 * The banner's reason while the resolver can't be reached: what failed, in
 * words, and when the proxy tries again; null when the proxy's own reason
 * stands (not waiting, or no failure reported since the state began).
 */
export function recovery(
  status: { readonly state: PrivacyState; readonly since: number; readonly resolver: { readonly id: string; readonly label: string; readonly port: number } },
  events: readonly TimelineEvent[],
): Recovery | null {
  if (!WAITING.has(status.state)) return null;
  // A failure a little before the state change is the one that caused it.
  const f = lastFailure(events, status.resolver.id, status.since - 5000);
  if (!f) return null;
  const what = errorWords(f.code);
  const consequence = status.state === 'blocked' ? 'queries get SERVFAIL' : 'queries go to the network’s resolver';
  return { reason: `${what[0]!.toUpperCase()}${what.slice(1)}: ${nameWithPort(status.resolver.label, f.address, status.resolver.port)}; ${consequence},`, retryAt: f.retryAt, attempts: recentAttempts(events, status.resolver.id) };
}
