/**
 * The resolver switch last made from this page, kept outside the Resolvers
 * view so its outcome (and "Switch back") is still there after visiting
 * another section.
 */
import { useSyncExternalStore } from 'react';
import type { ResolverView, SwitchProbeView } from '../../../proxy/control/api-types.js';
import type { SwitchAttempt } from '../lib/resolver-switch.js';

export type SwitchState =
  | { readonly phase: 'idle' }
  /** Asking the resolver before committing (about a second). */
  | { readonly phase: 'probing'; readonly to: ResolverView }
  /** It didn't answer: the question "Switch anyway / Keep …", asked on its card; nothing was committed. */
  | { readonly phase: 'unanswered'; readonly to: ResolverView; readonly from: ResolverView | null; readonly probe: SwitchProbeView }
  | { readonly phase: 'switching'; readonly to: ResolverView }
  | { readonly phase: 'done'; readonly attempt: SwitchAttempt }
  | { readonly phase: 'failed'; readonly to: ResolverView; readonly message: string };

let current: SwitchState = { phase: 'idle' };
const listeners = new Set<() => void>();

export function setLastSwitch(next: SwitchState): void {
  current = next;
  for (const l of listeners) l();
}

export function useLastSwitch(): SwitchState {
  return useSyncExternalStore(
    (cb) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    () => current,
  );
}
