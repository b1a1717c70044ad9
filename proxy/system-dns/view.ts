/**
 * What the system-DNS manager (manager.ts) shows and tells: its view for
 * the control API, and the change it emits, with the user's choice that
 * made it.
 */
import type { LeakTestResult } from './leak-test.js';

export interface SystemDnsView {
  /** Whether this process may change the system's DNS (root, or a test root). */
  readonly privileged: boolean;
  /** Why not, when not: what the user can do. */
  readonly privilegeNote: string | null;
  /** A journal exists: dotstub has changed the system's DNS. */
  readonly enabled: boolean;
  /** The system points at dotstub now. */
  readonly inForce: boolean;
  /** In words: why the takeover is (not) in force. */
  readonly reason: string;
  /** The backend in use (from the journal) or the one that would be used. */
  readonly backend: string;
  /** Why that backend was chosen. */
  readonly backendWhy: string;
  /** Every backend's verdict, most specific first. */
  readonly backends: readonly { readonly name: string; readonly usable: boolean; readonly why: string }[];
  /** What was changed, one line per applied step (empty when not enabled). */
  readonly changed: readonly string[];
  /** What the user had before, in words (from the journal). */
  readonly original: readonly string[];
  /** The process holding the takeover, when enabled. */
  readonly owner: { readonly pid: number; readonly alive: boolean; readonly self: boolean } | null;
  /** Other resolvers the system still knows. */
  readonly leaks: readonly string[];
  readonly lastLeakTest: (LeakTestResult & { readonly at: number }) | null;
  /** The last problem in the background (another program keeps rewriting DNS, the stub stopped answering). */
  readonly problem: string | null;
  /** Paused by the user: the old DNS is back until then (ms since the epoch), when private DNS comes back by itself; null otherwise. */
  readonly pausedUntil: number | null;
}

/**
 * The user's choice that made a change (issue 29: a pause and a turn-off
 * read the same afterwards): turned on, turned off, paused (until when),
 * resumed (before the pause's end, or by itself at its end). Absent when
 * the change was found rather than made here (the CLI, the watchdog, a
 * rewrite, a start); turned back on: the user's "on" restored at a start
 * after a crash had ended it.
 */
export type TakeoverCause =
  | { readonly action: 'turned-on' | 'turned-off' }
  /** Taken over again at a start because a crash (or a reboot) had ended the user's "on" (manager.ts #resume). */
  | { readonly action: 'turned-back-on' }
  | { readonly action: 'paused'; readonly forMs: number; readonly until: number }
  | { readonly action: 'resumed'; readonly early: boolean };

export interface TakeoverChange {
  readonly inForce: boolean;
  readonly reason: string;
  readonly cause?: TakeoverCause;
}
