/**
 * The last "Test resolvers" result, shared by the test's card (which runs
 * it) and the resolver cards (which show each resolver's figures).
 */
import { useSyncExternalStore } from 'react';
import type { ResolverTestResult } from '../../../proxy/control/api-types.js';

let current: ResolverTestResult | null = null;
const listeners = new Set<() => void>();

export function setTestResult(next: ResolverTestResult | null): void {
  current = next;
  for (const l of listeners) l();
}

export function useTestResult(): ResolverTestResult | null {
  return useSyncExternalStore(
    (cb) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    () => current,
  );
}
