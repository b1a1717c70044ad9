/**
 * The one switch (issue 24, item 1): what the header switch and the banner
 * offer, from the system-DNS view. Pure, so the words and the choices are
 * tested without React.
 *
 * - on: private DNS is in force; switching off asks for how long.
 * - paused: the old DNS is back until a time; the way back is "Resume now".
 * - off: not enabled (a first start, or "until I resume"); "Turn on private DNS".
 * - stuck: enabled but not in force (e.g. after a crash restart): "Turn back on".
 * - none: this dotstub does not manage system DNS, or may not change it: no switch.
 *
 * Switched on is not working: while the takeover holds, the switch's words
 * and colour follow the privacy verdict (issue 29, newcomer item 2), so
 * "On" in green never sits above lookups that all fail.
 */
import type { PrivacyState, StatusView, SystemDnsView, TimelineEvent } from '../../../proxy/control/api-types.js';
import { formatAge } from './format.js';
import { lastFailure } from './retry.js';

export type SwitchState = 'on' | 'paused' | 'off' | 'stuck' | 'none';

/** How the switch looks: green only while private DNS is on and private. */
type SwitchTone = 'good' | 'caution' | 'warning' | 'danger' | 'neutral';

export interface SwitchModel {
  readonly state: SwitchState;
  /** The switch's aria-checked. */
  readonly checked: boolean;
  /** The word beside "Private DNS" in the header. */
  readonly word: string;
  readonly tone: SwitchTone;
}

/** The privacy verdict the switch follows while on: the shown state and, when lookups fail, a short why. */
export interface SwitchVerdict {
  readonly state: PrivacyState;
  /** "can’t connect": the latest failure, in a few words for the header; null when none is known. */
  readonly why: string | null;
}

/**
 * The header's few words for a connect failure (the banner right below says
 * it in full, error-words.ts): the switch shares a row with eight sections.
 */
const SHORT_WHY: Readonly<Record<string, string>> = {
  DOTSTUB_CONNECT_TIMEOUT: 'no answer',
  DOTSTUB_CONNECT_FAILED: 'can’t connect',
  DOTSTUB_CERTIFICATE: 'wrong certificate',
  DOTSTUB_PIN_MISMATCH: 'wrong key',
  DOTSTUB_CONNECTION_CLOSED: 'connection cut',
  DOTSTUB_QUARANTINED: 'resolver paused',
};

/** The verdict from the status and the events: the short why is the newest connect failure since the state began (a little before: it caused it). */
export function switchVerdict(status: Pick<StatusView, 'state' | 'since' | 'resolver'> | null, events: readonly TimelineEvent[]): SwitchVerdict | null {
  if (!status) return null;
  const f = status.state === 'blocked' || status.state === 'degraded' ? lastFailure(events, status.resolver.id, status.since - 5000) : null;
  return { state: status.state, why: f ? (SHORT_WHY[f.code] ?? 'resolver failing') : null };
}

/** Switched on, in each verdict: what the header says, and in which colour. */
function onWords(v: SwitchVerdict | null): { readonly word: string; readonly tone: SwitchTone } {
  switch (v?.state) {
    case undefined:
    case 'private':
      return { word: 'On', tone: 'good' };
    case 'private-unverified':
      return { word: 'On — not verified', tone: 'caution' };
    case 'captive':
      return { word: 'On — Wi-Fi sign-in needed', tone: 'warning' };
    case 'degraded':
      return { word: `On — not private: ${v.why ?? 'encryption blocked'}`, tone: 'danger' };
    case 'blocked':
      return { word: `On — not working: ${v.why ?? 'no answer'}`, tone: 'danger' };
    case 'off':
      // Taken over, but the proxy isn't forwarding yet (its first connection).
      return { word: 'On — starting', tone: 'caution' };
  }
}

/** Durations offered when switching off: seconds, or null for "until I resume" (a plain disable). */
export const PAUSE_CHOICES: readonly { readonly label: string; readonly seconds: number | null }[] = [
  { label: '5 min', seconds: 300 },
  { label: '1 hour', seconds: 3600 },
  { label: 'Until I resume', seconds: null },
];

/** `view`: undefined while unknown, null when this dotstub does not manage system DNS. */
export function switchState(view: SystemDnsView | null | undefined): SwitchState {
  if (!view || !view.privileged) return 'none';
  if (view.inForce) return 'on';
  if (view.pausedUntil !== null) return 'paused';
  return view.enabled ? 'stuck' : 'off';
}

/** `verdict`: the privacy verdict while on (switchVerdict); null when unknown, read as private. */
export function switchModel(view: SystemDnsView | null | undefined, now: number, verdict: SwitchVerdict | null = null): SwitchModel {
  const state = switchState(view);
  switch (state) {
    case 'on':
      return { state, checked: true, ...onWords(verdict) };
    case 'paused':
      return { state, checked: false, word: `Paused · ${clock((view as SystemDnsView).pausedUntil as number, now)}`, tone: 'caution' };
    case 'stuck':
      return { state, checked: false, word: 'Not in force', tone: 'warning' };
    default:
      return { state, checked: false, word: 'Off', tone: 'neutral' };
  }
}

/** "4:59" left, for the header (minutes:seconds, or hours:minutes:seconds). */
function clock(until: number, now: number): string {
  const s = Math.max(0, Math.floor((until - now) / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** The banner's countdown: "back on at 14:05 · 4 min 59 s left". */
export function pauseCountdown(until: number, now: number): string {
  const d = new Date(until);
  const left = until - now;
  return `back on at ${pad(d.getHours())}:${pad(d.getMinutes())} · ${left < 1000 ? 'any moment now' : `${formatAge(left)} left`}`;
}
