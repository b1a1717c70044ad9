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

/** "retrying in 12 s", then "retrying now…" once the wait is over (the proxy is trying). */
export function retryText(retryAt: number, now: number): string {
  const left = retryAt - now;
  if (left < 1000) return 'retrying now…';
  return `retrying in ${formatAge(Math.ceil(left / 1000) * 1000)}`;
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
  return { reason: `${what[0]!.toUpperCase()}${what.slice(1)}: ${nameWithPort(status.resolver.label, f.address, status.resolver.port)}; ${consequence},`, retryAt: f.retryAt };
}
