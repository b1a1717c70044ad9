/** Timeline events → plain words. Pure: the timeline component only lays these out. */
import type { TimelineEvent } from '../../../proxy/control/api-types.js';
import { formatAge, formatLatencyMs } from './format.js';
import { sentence, stateText, type Tone } from './banner.js';
import { errorWords } from './error-words.js';

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
  return e.kind === 'connection' || e.kind === 'state' ? e.event.at : e.at;
}

/** resolver id → label, for readable lines; falls back to the id. */
export type ResolverNames = (id: string) => string;

function formatRetry(ms: number): string {
  return ms < 1000 ? `${Math.max(0, Math.round(ms))} ms` : formatAge(ms);
}

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
            title: `Connection #${c.connectionId} opened to ${names(c.resolverId)} (${c.resumed ? 'session resumed' : 'full handshake'})`,
            detail: [
              c.address,
              c.tlsVersion,
              c.cipher,
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
            title: `Connection #${c.connectionId} to ${names(c.resolverId)} closed: ${c.reason}`,
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
            detail: `${sentence(c.message)} Retrying in ${formatRetry(c.retryInMs)}.`,
          };
      }
      break;
    }
    case 'state': {
      const s = e.event;
      const t = stateText(s.state);
      return {
        at,
        kind: e.kind,
        icon: 'state',
        tone: t.tone,
        title: s.previous === s.state ? `Privacy: still ${t.label}` : `Privacy: ${stateText(s.previous).label} → ${t.label}`,
        detail: sentence(s.reason),
      };
    }
    case 'resolver':
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
  }
  // Unknown kinds from a newer proxy: show something rather than nothing.
  return { at, kind: (e as TimelineEvent).kind, icon: 'gear', tone: 'neutral', title: 'Event', detail: JSON.stringify(e) };
}
