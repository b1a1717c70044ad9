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
 */
import type { SystemDnsView } from '../../../proxy/control/api-types.js';
import { formatAge } from './format.js';

export type SwitchState = 'on' | 'paused' | 'off' | 'stuck' | 'none';

export interface SwitchModel {
  readonly state: SwitchState;
  /** The switch's aria-checked. */
  readonly checked: boolean;
  /** The word beside "Private DNS" in the header. */
  readonly word: string;
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

export function switchModel(view: SystemDnsView | null | undefined, now: number): SwitchModel {
  const state = switchState(view);
  switch (state) {
    case 'on':
      return { state, checked: true, word: 'On' };
    case 'paused':
      return { state, checked: false, word: `Paused · ${clock((view as SystemDnsView).pausedUntil as number, now)}` };
    case 'stuck':
      return { state, checked: false, word: 'Not in force' };
    default:
      return { state, checked: false, word: 'Off' };
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
