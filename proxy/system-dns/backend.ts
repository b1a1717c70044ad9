/**
 * One backend per way a system routes its DNS. A backend only reads and
 * plans; applying and restoring are generic (takeover.ts) over the plan's
 * steps, so every backend gets the same journal, crash safety and restore.
 */
import type { Step } from './steps.js';

export type BackendName = 'systemd-resolved' | 'networkmanager' | 'resolv.conf' | 'macos' | 'windows';

export interface Detection {
  /** Whether this backend can take over DNS here. */
  readonly usable: boolean;
  /** In words, with the evidence: "/etc/resolv.conf → ../run/systemd/resolve/stub-resolv.conf and resolved answers on its socket". */
  readonly why: string;
}

export interface Target {
  /** The UDP/TCP port dotstub answers on at 127.0.0.1. */
  readonly port: number;
}

export interface Backend {
  readonly name: BackendName;
  detect(): Promise<Detection>;
  /** The current settings, in words (recorded in the journal as "what you had"). */
  describeCurrent(): Promise<string[]>;
  /**
   * The steps that point the system at dotstub, computed from the current
   * state (each file step carries the bytes it will restore). Throws
   * SYSDNS_BACKEND_UNAVAILABLE with the reason when the target can't work
   * (e.g. a port other than 53 where glibc reads resolv.conf directly).
   */
  plan(target: Target): Promise<Step[]>;
  /** Whether the system's DNS currently goes to dotstub by this backend's mechanism. */
  inForce(target: Target): Promise<{ inForce: boolean; why: string }>;
  /** Resolvers the OS still knows besides dotstub, in words. Empty: none seen. */
  leaks(target: Target): Promise<string[]>;
}
