/**
 * Before a switch is committed (issue 24 item 3): one connection to the
 * resolver the user picked, the way "Test resolvers" measures a fresh
 * connection (connect, handshake, one `. NS` query; resolver-test.ts), with
 * short timers so the answer comes within about a second. A switch to a
 * resolver that doesn't answer is then a question ("Switch anyway?"), not a
 * half success.
 *
 * Invariants: nothing is shared with the active upstream (its own pool,
 * destroyed before the answer); a resolver outside the measuring scope gets
 * no packet (`probed: false`, and the page switches without asking).
 */
import type { ResolverSpec } from '../config/resolvers.js';
import type { AuthPolicy } from '../upstream/auth-policy.js';
import { failureShort } from './failure-words.js';
import { measureOnce, type MeasureScope } from './resolver-test.js';

export interface SwitchProbeView {
  readonly id: string;
  readonly label: string;
  readonly port: number;
  /** False: not probed (outside the scope); nothing was sent. */
  readonly probed: boolean;
  readonly ok: boolean;
  /** Connect + handshake + answer, ms, when it answered. */
  readonly ms: number | null;
  /** Why it didn't answer, short: "connection refused", "no answer within 1 s". */
  readonly why: string | null;
  /** The classified sentence (network/classify.ts). */
  readonly detail: string | null;
}

/** Timers of the probe: the whole of it stays near a second on a dead path. */
const SWITCH_PROBE_TIMERS = { connectTimeoutMs: 1_000, handshakeTimeoutMs: 1_000, queryTimeoutMs: 1_000 } as const;

export async function probeForSwitch(spec: ResolverSpec, auth: AuthPolicy, scope: MeasureScope): Promise<SwitchProbeView> {
  const base = { id: spec.id, label: spec.label, port: spec.port };
  if (scope === 'local' && !spec.addresses.every((a) => a.startsWith('127.') || a === '::1')) {
    return { ...base, probed: false, ok: true, ms: null, why: null, detail: null };
  }
  const m = await measureOnce(spec, auth, SWITCH_PROBE_TIMERS);
  if (m.ok) return { ...base, probed: true, ok: true, ms: m.freshMs, why: null, detail: null };
  return { ...base, probed: true, ok: false, ms: null, why: m.kind === 'timeout' ? 'no answer within a second' : failureShort(m.kind), detail: m.error };
}
