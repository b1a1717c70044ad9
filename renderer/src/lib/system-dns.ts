/**
 * The system-DNS panel as plain data: what the API says → headline, the
 * toggle's words and whether it can be used, and the backend in words. Pure,
 * so the words are tested without React.
 */
import type { SystemDnsView } from '../../../proxy/control/api-types.js';

export interface SystemDnsModel {
  readonly headline: string;
  readonly tone: 'good' | 'warn' | 'neutral';
  readonly detail: string;
  readonly toggleLabel: string;
  /** What the toggle asks the API for. */
  readonly toggleTo: boolean;
  /** Null: the toggle works; else why it can't be used, in words. */
  readonly toggleBlocked: string | null;
  readonly backend: string;
  /** Offer "Pause for 5 min / 1 h" (private DNS in force, and this dotstub may change it). */
  readonly canPause: boolean;
}

const BACKEND_WORDS: Readonly<Record<string, string>> = {
  'systemd-resolved': 'systemd-resolved (a drop-in file points it at dotstub)',
  networkmanager: 'NetworkManager told to leave DNS alone, then /etc/resolv.conf',
  'resolv.conf': '/etc/resolv.conf, written directly',
  macos: 'macOS network services',
  windows: 'Windows adapters and an NRPT rule',
};

export function backendWords(name: string): string {
  return BACKEND_WORDS[name] ?? name;
}

export function systemDnsModel(v: SystemDnsView): SystemDnsModel {
  const on = v.inForce;
  const enabledButNot = v.enabled && !v.inForce;
  return {
    headline: on
      ? 'Private DNS is on for this machine'
      : v.pausedUntil !== null
        ? `Private DNS is paused until ${clockTime(v.pausedUntil).slice(0, 5)}`
        : enabledButNot
          ? 'Private DNS is enabled but not in force'
          : 'Private DNS is off for this machine',
    tone: on ? 'good' : enabledButNot ? 'warn' : 'neutral',
    detail: v.problem ?? (v.pausedUntil !== null ? `Until ${clockTime(v.pausedUntil).slice(0, 5)} every program on this machine asks its usual resolver, unencrypted, as before dotstub; then private DNS comes back by itself.` : v.reason),
    // Enabled (even when not in force): the way out is to give the old DNS back.
    toggleLabel: v.enabled ? 'Disable private DNS' : v.pausedUntil !== null ? 'Resume private DNS now' : 'Enable private DNS',
    toggleTo: !v.enabled,
    toggleBlocked: v.privileged ? null : (v.privilegeNote ?? 'this dotstub may not change the system’s DNS'),
    backend: backendWords(v.backend),
    canPause: on && v.privileged,
  };
}

/** "12:04:31" for the leak test's time. */
export function clockTime(ms: number): string {
  return new Date(ms).toLocaleTimeString('en-GB', { hour12: false });
}
