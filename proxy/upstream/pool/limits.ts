/**
 * Politeness to one resolver (issue 42): how many connections the pool
 * keeps to it and opens in a burst, and how many queries it puts on each,
 * from RFC 7766 §6.2.2 and RFC 7858 §3.4 (few connections, reused) and
 * from what the server itself does:
 *
 *   a connection refused or closed as it was made while another one to it is up ─► it takes only the ones up: `connections`
 *   a connection closed by the server right after its Nth answer, queries still unanswered ─► `queriesPerConnection` = N
 *   a connection whose answers stopped with queries in flight, until the server closed it ─► `inFlight`: fewer than it had
 *
 * What is learnt is kept per resolver (its address and port) in this
 * process's memory only: for the run, shared by every pool that reaches it
 * (a switch back, the warm-up's), forgotten at exit. Each figure only goes
 * down; the polite defaults are the ceiling (options.ts: STEADY_CONNECTIONS,
 * BURST_CONNECTIONS, maxInFlight).
 */
import type { ResolverSpec } from '../../config/resolvers.js';
/** A server's close this long after its last answer, queries unanswered: it stalled, rather than closing at its count. */
export const STALL_MS = 250;

/** What a server showed it takes; undefined: not learnt (the polite defaults hold). */
export interface LearntLimits {
  connections: number | undefined;
  queriesPerConnection: number | undefined;
  inFlight: number | undefined;
}

const learnt = new Map<string, LearntLimits>();

function keyOf(resolver: ResolverSpec): string {
  return `${resolver.addresses.join(',')}#${resolver.port}`;
}

/** The limits learnt for `resolver` in this run (one object per resolver, shared by its pools). */
export function limitsFor(resolver: ResolverSpec): LearntLimits {
  const key = keyOf(resolver);
  let l = learnt.get(key);
  if (!l) {
    l = { connections: undefined, queriesPerConnection: undefined, inFlight: undefined };
    learnt.set(key, l);
  }
  return l;
}

/** Lowers `field` to `value` (at least 1); true when that changed it. */
export function lower(limits: LearntLimits, field: keyof LearntLimits, value: number): boolean {
  const v = Math.max(1, Math.floor(value));
  const before = limits[field];
  if (before !== undefined && before <= v) return false;
  limits[field] = v;
  return true;
}
