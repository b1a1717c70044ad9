/**
 * What became of a resolver switch, from what the proxy reports after it:
 * the API accepts a switch to any configured resolver, so "switched" is not
 * "working". The outcome is decided by the first connection to the new
 * resolver (open, or failed) and by the privacy state. Pure.
 */
import type { ConnectionView, ResolversView, ResolverView, StatusView, TimelineEvent } from '../../../proxy/control/api-types.js';
import { errorWords } from './error-words.js';

export interface SwitchAttempt {
  readonly to: { readonly id: string; readonly label: string };
  /** The resolver in use before, offered as "Switch back"; null when unknown. */
  readonly from: { readonly id: string; readonly label: string } | null;
  /** When the switch was accepted, ms since the epoch. */
  readonly at: number;
}

export type SwitchOutcome =
  /** No connection yet (the pool connects on the next query). */
  | { readonly kind: 'pending' }
  | { readonly kind: 'connected'; readonly connection: ConnectionView }
  /** In words: why; retryAt when the proxy retries by itself (ms since the epoch). */
  | { readonly kind: 'failed'; readonly reason: string; readonly address: string | null; readonly retryAt: number | null };

/**
 * The resolver as the user named it, with where it is: "Dead end
 * (127.0.0.1:40123)"; a label that already ends with the address gets the
 * port added ("dns.test (127.0.0.1:853)"). Never a bare address.
 */
export function nameWithPort(label: string, address: string | null | undefined, port: number): string {
  if (!address) return `${label} (port ${port})`;
  // An address may come with its port ("127.0.0.1:853", "[::1]:853"): the resolver's port is said once.
  const bare = address.startsWith('[') ? address.slice(1, address.indexOf(']')) : address.split(':').length === 2 ? address.split(':')[0]! : address;
  if (bare !== address) return nameWithPort(label, bare, port);
  const host = address.includes(':') ? `[${address}]` : address;
  const base = label.endsWith(`(${address})`) ? label.slice(0, -(address.length + 2)).trimEnd() : label;
  return `${base} (${host}:${port})`;
}

/** Events are stamped by the proxy, the attempt by the page (same machine): allow a little skew. */
const SKEW_MS = 500;

export function switchOutcome(
  a: SwitchAttempt,
  connections: readonly ConnectionView[],
  events: readonly TimelineEvent[],
  status: Pick<StatusView, 'state' | 'reason' | 'resolver' | 'since'> | null,
): SwitchOutcome {
  const open = connections.find((c) => c.resolverId === a.to.id && c.state === 'open');
  let failure: { at: number; code: string; address: string; retryInMs: number } | null = null;
  let opened = 0;
  for (const e of events) {
    if (e.kind !== 'connection' || e.event.resolverId !== a.to.id || e.event.at < a.at - SKEW_MS) continue;
    const c = e.event;
    if (c.type === 'connect-failed' && (failure === null || c.at > failure.at)) failure = { at: c.at, code: c.code, address: c.address, retryInMs: c.retryInMs };
    if (c.type === 'open') opened = Math.max(opened, c.at);
  }
  // A connection that opened after the last failure wins: the resolver recovered.
  if (open && (failure === null || opened >= failure.at)) return { kind: 'connected', connection: open };
  if (failure) return { kind: 'failed', reason: errorWords(failure.code), address: failure.address, retryAt: failure.at + failure.retryInMs };
  // Blocked since the switch (not left over from before it: switching back from a dead resolver starts out blocked).
  if (status && status.resolver.id === a.to.id && status.state === 'blocked' && status.since >= a.at - SKEW_MS) {
    return { kind: 'failed', reason: status.reason, address: null, retryAt: null };
  }
  return { kind: 'pending' };
}

/**
 * The way back offered while the active resolver fails: the one in use
 * before the last switch, as the server knows it (ResolversView.previous),
 * so every page offers it, whichever page or `dotstub ctl use` made the
 * switch; null when there is none, or it is no longer listed.
 */
export function switchBackTo(view: Pick<ResolversView, 'previous' | 'resolvers'> | null, activeId: string): ResolverView | null {
  // A proxy from before the field answers without it: nothing to offer.
  const previous = view?.previous ?? null;
  if (previous === null || previous === activeId) return null;
  return view?.resolvers.find((r) => r.id === previous) ?? null;
}
