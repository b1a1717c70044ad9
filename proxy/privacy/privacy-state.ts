/**
 * The privacy state (docs/architecture.md#privacy-states) as a pure reducer: an
 * event and the policy in, the next state and a reason a user can read out.
 * The proxy feeds it events from the active upstream, and the system-DNS
 * takeover's changes where this run manages one; the UI only renders what
 * comes out (shownPrivacy). No I/O, no clock.
 */
import { OFFLINE_RETRY_SENTENCE, RETRY_SENTENCE, type PrivacyState } from './privacy-words.js';

export type { PrivacyState };

export interface PrivacyStatus {
  readonly state: PrivacyState;
  readonly reason: string;
}

/** Whether the machine's DNS goes to dotstub (the system-DNS takeover), when this run manages it. */
interface TakeoverStatus {
  readonly inForce: boolean;
  readonly reason: string;
}

/**
 * What the reducer keeps: what the connections to the resolver say, and
 * what the takeover says (null: this run manages none, a loopback proxy
 * only). What a user is shown is worked out from both (shownPrivacy).
 */
export interface PrivacyReduction {
  readonly connection: PrivacyStatus;
  readonly takeover: TakeoverStatus | null;
}

export interface PrivacyPolicy {
  readonly mode: 'strict' | 'opportunistic';
}

export type PrivacyEvent =
  /** Listening; the first connection is on its way. */
  | { readonly type: 'started'; readonly resolver: string }
  /** The user chose another resolver (or settings rebuilt the upstream). */
  | { readonly type: 'switching'; readonly resolver: string }
  /** A connection to the active resolver authenticated (or, opportunistic, didn't). */
  | {
      readonly type: 'connected';
      /** e.g. `Quad9 (dns.quad9.net)`. */
      readonly resolver: string;
      readonly verified: boolean;
      readonly tlsVersion: string;
      readonly authError: string | undefined;
    }
  /** A connection attempt to the active resolver failed; the upstream retries after `retryInMs`. */
  | {
      readonly type: 'connect-failed';
      readonly message: string;
      readonly retryInMs: number;
      /** No route from this machine: the next attempt comes with the network (upstream/pool/offline.ts), not on a timer. */
      readonly offline?: boolean;
      /** The resolver's IPv4 addresses were tried through this NAT64 prefix: the network has no IPv4 of its own. */
      readonly nat64Prefix?: string | null;
    }
  /**
   * The active resolver's last connection closed and no query needs one: the
   * resolver was verified until `since` (a clock time, HH:MM:SS), not now.
   */
  | { readonly type: 'idle'; readonly resolver: string; readonly since: string }
  /** A captive portal: the sentence says where to sign in and what dotstub does meanwhile (network/captive.ts). */
  | { readonly type: 'captive'; readonly sentence: string }
  /** Opportunistic mode with cleartext allowed: encrypted DNS is blocked, so the network's resolver answers, unencrypted. */
  | { readonly type: 'degraded'; readonly sentence: string }
  /** Degraded mode ended without an encrypted connection (network change, or strict mode chosen). */
  | { readonly type: 'degraded-ended'; readonly sentence: string }
  /** The captive session ended without an authenticated connection (the network changed, or the portal went away). */
  | { readonly type: 'captive-ended'; readonly sentence: string }
  | { readonly type: 'stopped' }
  /** The system-DNS takeover this run manages changed (turned on or off, paused, resumed, rewritten); null: it manages none (any more). */
  | { readonly type: 'takeover'; readonly takeover: TakeoverStatus | null };

export const INITIAL_PRIVACY: PrivacyReduction = { connection: { state: 'off', reason: 'not started' }, takeover: null };

export function nextPrivacyState(current: PrivacyReduction, event: PrivacyEvent, policy: PrivacyPolicy): PrivacyReduction {
  if (event.type === 'takeover') {
    const t = event.takeover;
    return { connection: current.connection, takeover: t === null ? null : { inForce: t.inForce, reason: t.reason } };
  }
  const connection = nextConnectionState(current.connection, event, policy);
  return connection === current.connection ? current : { connection, takeover: current.takeover };
}

/** What the connections to the resolver make of an event. */
function nextConnectionState(current: PrivacyStatus, event: Exclude<PrivacyEvent, { type: 'takeover' }>, policy: PrivacyPolicy): PrivacyStatus {
  switch (event.type) {
    case 'started':
      return { state: 'off', reason: `connecting to ${event.resolver}` };
    case 'switching':
      // Queries keep flowing on the old resolver until the new one answers: the state holds.
      return { state: current.state, reason: `switching to ${event.resolver}` };
    case 'connected':
      // Signing in ends only with an authenticated connection: an unverified one may be the portal's own interceptor.
      if (current.state === 'captive' && !event.verified) return current;
      if (event.verified) return { state: 'private', reason: `encrypted DNS to ${event.resolver}, verified, ${event.tlsVersion}` };
      // A connection that did not verify only opens in opportunistic mode; strict refuses it before this.
      if (policy.mode === 'strict') return current;
      return {
        state: 'private-unverified',
        reason: `encrypted DNS to ${event.resolver}, but not verified: ${event.authError ?? 'unknown reason'}`,
      };
    case 'connect-failed':
      // While signing in, failures are expected: the banner keeps saying where to sign in.
      // While degraded, encrypted DNS keeps failing by definition: the state says what carries queries.
      if (current.state === 'captive' || current.state === 'degraded') return current;
      // Strict and opportunistic alike never fall back to cleartext here: nothing leaves.
      // No wait in the reason: it changes with every attempt (one state event each) and is wrong while lookups come (issue 24).
      return {
        state: 'blocked',
        reason:
          event.nat64Prefix !== undefined && event.nat64Prefix !== null
            ? `this network has no IPv4, and its NAT64 (${event.nat64Prefix}) did not reach the resolver (${event.message}): give your resolver's IPv6 address; ${event.offline === true ? OFFLINE_RETRY_SENTENCE : RETRY_SENTENCE}`
            : `${event.message}; ${event.offline === true ? OFFLINE_RETRY_SENTENCE : RETRY_SENTENCE}`,
      };
    case 'idle':
      // Honest while idle: private is what the next query will get, not a connection that exists now.
      if (current.state !== 'private' && current.state !== 'private-unverified') return current;
      return {
        state: current.state,
        reason: `idle since ${event.since}: no connection is open; ${event.resolver} was last ${current.state === 'private' ? 'verified' : 'reached'} then, and is checked again with the next query`,
      };
    case 'captive':
      return { state: 'captive', reason: event.sentence };
    case 'degraded':
      // Never in strict mode: strict never sends a query in cleartext.
      if (policy.mode === 'strict') return current;
      return { state: 'degraded', reason: event.sentence };
    case 'degraded-ended':
      if (current.state !== 'degraded') return current;
      return { state: 'blocked', reason: `${event.sentence}; queries get SERVFAIL until encrypted DNS connects` };
    case 'captive-ended':
      if (current.state !== 'captive') return current;
      return { state: 'blocked', reason: `${event.sentence}; queries get SERVFAIL until encrypted DNS connects` };
    case 'stopped':
      return { state: 'off', reason: 'dotstub stopped' };
  }
}

/**
 * The state a user sees: while this dotstub manages the machine's DNS and the
 * takeover is not in force, the system asks another resolver, so the state is
 * `off` with the takeover's reason, whatever the upstream connection is doing
 * (docs/architecture.md#privacy-states: off = the system asks someone else). Without a
 * takeover to manage (a loopback proxy only), the connections' state stands.
 */
export function shownPrivacy(r: PrivacyReduction): PrivacyStatus {
  if (r.takeover === null || r.takeover.inForce) return r.connection;
  return { state: 'off', reason: r.takeover.reason };
}
