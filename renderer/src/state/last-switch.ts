/**
 * The resolver switch last made from this page, kept outside the Resolvers
 * view so its outcome (and "Switch back") is still there after visiting
 * another section.
 */
import { useSyncExternalStore } from 'react';
import type { ResolverView } from '../../../proxy/control/api-types.js';
import type { SwitchAttempt } from '../lib/resolver-switch.js';

export type SwitchState =
  | { readonly phase: 'idle' }
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
