import { createContext, useContext, useEffect, useState, useSyncExternalStore } from 'react';
import { asOf, LOST_AFTER_MS, reach, type Reach } from '../lib/link-status.js';
import type { DashboardSnapshot, DashboardStore } from './store.js';

export const StoreContext = createContext<DashboardStore | null>(null);

export function useStore(): DashboardStore {
  const store = useContext(StoreContext);
  if (!store) throw new Error('useStore outside <StoreContext.Provider>');
  return store;
}

/**
 * One slice of the dashboard's state. Components re-render only when their
 * slice changes (by reference), not on every batch: select fields, not
 * objects built in the selector.
 */
export function useDashboard<T>(select: (s: DashboardSnapshot) => T): T {
  const store = useStore();
  return useSyncExternalStore(store.subscribe, () => select(store.getSnapshot()));
}

/** Date.now(), refreshed every `intervalMs` (for ages and uptimes). */
function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), intervalMs);
    return () => window.clearInterval(t);
  }, [intervalMs]);
  return now;
}

/** Follows prefers-color-scheme, for canvases that can't read CSS. */
export function useColorScheme(): 'light' | 'dark' {
  const query = '(prefers-color-scheme: dark)';
  return useSyncExternalStore(
    (cb) => {
      const m = window.matchMedia(query);
      m.addEventListener('change', cb);
      return () => m.removeEventListener('change', cb);
    },
    () => (window.matchMedia(query).matches ? 'dark' : 'light'),
  );
}

/** The link's reach (live / waiting / lost / signed out), re-rendering when a wait turns into "lost". */
export function useReach(): Reach {
  const link = useDashboard((s) => s.link);
  const lostAt = useDashboard((s) => s.lostAt);
  const [, bump] = useState(0);
  const r = reach(link, lostAt, Date.now());
  useEffect(() => {
    if (r !== 'waiting' || lostAt === null) return;
    const t = window.setTimeout(() => bump((n) => n + 1), Math.max(0, lostAt + LOST_AFTER_MS - Date.now()) + 20);
    return () => window.clearTimeout(t);
  }, [r, lostAt]);
  return r;
}

/** Date.now() while live; the moment the link was lost otherwise (figures stop ticking). */
export function useAsOf(intervalMs = 1000): number {
  const link = useDashboard((s) => s.link);
  const lostAt = useDashboard((s) => s.lostAt);
  return asOf(link, lostAt, useNow(intervalMs));
}
