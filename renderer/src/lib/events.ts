/** Timeline events → plain words. Pure: the timeline component only lays these out. */
import type { TimelineEvent } from '../../../proxy/control/api-types.js';
import { formatAge, formatClockShort, formatLatencyMs } from './format.js';
import { sentence, stateText, type Tone } from './banner.js';
import { errorWords } from './error-words.js';
import { classicalWords, keyGroupWords } from '../../../proxy/control/api-client/key-agreement.js';

export type EventIcon = 'plug' | 'resume' | 'unplug' | 'heart' | 'error' | 'state' | 'switch' | 'gear';

export interface EventLine {
  readonly at: number;
  readonly kind: TimelineEvent['kind'];
  readonly icon: EventIcon;
  readonly tone: Tone;
  readonly title: string;
  readonly detail: string;
}

function eventTime(e: TimelineEvent): number {
  return e.kind === 'connection' || e.kind === 'state' || e.kind === 'captive' ? e.event.at : e.at;
}

/** resolver id → label, for readable lines; falls back to the id. */
export type ResolverNames = (id: string) => string;

type CloseReason = Extract<Extract<TimelineEvent, { kind: 'connection' }>['event'], { type: 'close' }>['reason'];

/** Why a connection closed, in words (the proxy sends a stable code). */
const CLOSED_BECAUSE: Record<CloseReason, string> = {
  idle: 'idle for the idle timeout',
  'server-close': 'the resolver closed it',
  reset: 'reset (by the resolver or the network)',
  error: 'it failed',
  local: 'closed by dotstub',
  unresponsive: 'it stopped answering',
  'keepalive-zero': 'the resolver asked to close idle connections at once',
  desync: "the resolver's answers stopped matching the questions",
  'network-change': 'the network changed',
};

export function describeEvent(e: TimelineEvent, names: ResolverNames = (id) => id): EventLine {
  const at = eventTime(e);
  switch (e.kind) {
    case 'connection': {
      const c = e.event;
      switch (c.type) {
        case 'open':
          return {
            at,
            kind: e.kind,
            icon: c.resumed ? 'resume' : 'plug',
            tone: c.verified ? 'good' : 'caution',
            title: `Connection #${c.connectionId} opened to ${names(c.resolverId)}${c.burst ? ' for a burst of lookups' : ''} (${c.resumed ? 'session resumed' : 'full handshake'})`,
            detail: [
              c.address,
              c.tlsVersion,
              c.cipher,
              c.keyGroup === null ? '' : `key agreement ${keyGroupWords(c.keyGroup)}`,
              classicalWords(c.classicalOnly) ?? '',
              `handshake ${formatLatencyMs(c.handshakeMs)}`,
              c.verified ? 'certificate verified' : `not verified${c.authError ? `: ${c.authError}` : ''}`,
            ]
              .filter(Boolean)
              .join(' · '),
          };
        case 'close': {
          const reset = c.error !== null || c.failed > 0;
          return {
            at,
            kind: e.kind,
            icon: reset ? 'error' : 'unplug',
            tone: reset ? 'warning' : 'neutral',
            title: `Connection #${c.connectionId} to ${names(c.resolverId)} closed: ${CLOSED_BECAUSE[c.reason]}`,
            detail: [
              `carried ${c.queriesCarried} ${c.queriesCarried === 1 ? 'query' : 'queries'}`,
              c.failed > 0 ? `${c.failed} in flight retried or failed` : '',
              c.error ?? '',
            ]
              .filter(Boolean)
              .join(' · '),
          };
        }
        case 'keepalive':
          return {
            at,
            kind: e.kind,
            icon: 'heart',
            tone: 'neutral',
            title: `Connection #${c.connectionId}: ${names(c.resolverId)} asks to keep it open for ${formatAge(c.timeoutMs)}`,
            detail: 'edns-tcp-keepalive (RFC 7828)',
          };
        case 'connect-failed':
          return {
            at,
            kind: e.kind,
            icon: 'error',
            tone: 'danger',
            title: `Could not connect to ${names(c.resolverId)} at ${c.address}: ${errorWords(c.code)}`,
            // In the banner's words (lib/retry.ts): any lookup starts the next attempt (at most once a second), so the wait is an upper bound.
            detail: `${sentence(c.message)} Retrying with the next lookup, or by itself by ${formatClockShort(c.at + c.retryInMs)}.`,
          };
      }
      break;
    }
    case 'state': {
      const s = e.event;
      const t = stateText(s.state);
      const change = s.previous === s.state ? `Privacy: still ${t.label}` : `Privacy: ${stateText(s.previous).label} → ${t.label}`;
      // The user's choice, when it made the change, is the title (a pause and a turn-off read alike otherwise); the state change follows.
      const choice = e.takeover ? takeoverTitle(e.takeover) : null;
      return {
        at,
        kind: e.kind,
        icon: 'state',
        tone: t.tone,
        title: choice ?? change,
        detail: choice ? `${change}. ${sentence(s.reason)}` : sentence(s.reason),
      };
    }
    case 'resolver':
      // The user's choice for this network (its own encrypted resolver), applied on joining it or on the click.
      if (e.networkChoice) {
        return {
          at,
          kind: e.kind,
          icon: 'switch',
          tone: 'neutral',
          title: e.reason ?? `Resolver switched to ${e.toLabel ?? names(e.to)}`,
          detail: `From ${e.fromLabel ?? names(e.from)} to ${e.toLabel ?? names(e.to)}: your choice for this network, in the Network view (“Stop using it here” goes back).`,
        };
      }
      // dotstub made this switch itself (a retired preset): the reason is the title, and the user is told where to choose.
      if (e.reason !== undefined) {
        return {
          at,
          kind: e.kind,
          icon: 'switch',
          tone: 'caution',
          title: e.reason,
          detail: `Your saved resolver, ${e.fromLabel ?? names(e.from)}, was moved to ${names(e.to)} once; pick another on the Resolvers page.`,
        };
      }
      return {
        at,
        kind: e.kind,
        icon: 'switch',
        tone: 'neutral',
        title: `Resolver switched from ${names(e.from)} to ${names(e.to)}`,
        detail: 'Queries in flight finished on the old connections; new ones use the new resolver.',
      };
    case 'settings':
      return {
        at,
        kind: e.kind,
        icon: 'gear',
        tone: 'neutral',
        title: 'Settings changed',
        detail: e.changed.join(', '),
      };
    case 'captive':
      return { at, kind: e.kind, ...captiveLine(e.event) };
  }
  // Unknown kinds from a newer proxy: show something rather than nothing.
  return { at, kind: (e as TimelineEvent).kind, icon: 'gear', tone: 'neutral', title: 'Event', detail: JSON.stringify(e) };
}

type TakeoverCause = NonNullable<Extract<TimelineEvent, { kind: 'state' }>['takeover']>;

/** "Turned off", "Paused for 5 min (until 19:20)", …: the system-DNS choice behind a state change. */
function takeoverTitle(c: TakeoverCause): string {
  switch (c.action) {
    case 'turned-on':
      return 'Turned on';
    case 'turned-off':
      return 'Turned off';
    case 'turned-back-on':
      return 'Turned back on';
    case 'paused':
      return `Paused for ${formatAge(c.forMs)} (until ${formatClockShort(c.until).slice(0, 5)})`;
    case 'resumed':
      return c.early ? 'Resumed before the pause ended' : 'Resumed: the pause ended';
  }
}

type CaptiveEventOf = Extract<TimelineEvent, { kind: 'captive' }>['event'];

/** A captive portal's story in the timeline: detected (by which probe), asked, allowed, names let through, signed in, back to private. */
function captiveLine(c: CaptiveEventOf): { icon: EventIcon; tone: Tone; title: string; detail: string } {
  switch (c.type) {
    case 'detected':
      return { icon: 'state', tone: 'caution', title: `Wi-Fi sign-in page found at ${c.portalHost}`, detail: sentence(c.sentence) };
    case 'checked':
      return { icon: 'state', tone: 'neutral', title: c.result === 'open' ? 'Checked for a Wi-Fi sign-in page: none' : 'Checked for a Wi-Fi sign-in page: nothing conclusive', detail: sentence(c.sentence) };
    case 'asking':
      return { icon: 'state', tone: 'caution', title: 'Asking before looking up the sign-in page unencrypted', detail: sentence(c.sentence) };
    case 'allowed':
      return { icon: 'switch', tone: 'caution', title: 'Sign-in lookups allowed', detail: sentence(c.sentence) };
    case 'declined':
      return { icon: 'state', tone: 'neutral', title: 'Sign-in lookups not allowed', detail: sentence(c.sentence) };
    case 'let-through':
      return { icon: 'switch', tone: 'caution', title: `Looked up unencrypted for the sign-in: ${c.name}`, detail: 'At the network’s own resolver; never cached.' };
    case 'signed-in':
      return { icon: 'plug', tone: 'good', title: 'Signed in to the Wi-Fi', detail: sentence(c.sentence) };
    case 'expired':
      return { icon: 'state', tone: 'warning', title: 'Sign-in window ended', detail: sentence(c.sentence) };
    case 'left':
      return {
        icon: c.how === 'private' ? 'plug' : 'unplug',
        tone: c.how === 'private' ? 'good' : 'neutral',
        title: c.how === 'private' ? `Private again, ${formatAge(c.afterMs)} after the sign-in page appeared` : 'Sign-in page left behind',
        detail: sentence(c.sentence),
      };
  }
}
