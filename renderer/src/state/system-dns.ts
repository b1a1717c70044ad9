/**
 * The system-DNS view shared by the header switch and the banner: fetched
 * once per privacy change (not per component), replaced by what each PUT
 * returns. undefined: not known yet; null: this dotstub does not manage
 * system DNS (404), or answered the read with another error. A read that got
 * no answer keeps the last view.
 */
import { useEffect, useSyncExternalStore } from 'react';
import type { SystemDnsView } from '../../../proxy/control/api-types.js';
import { ControlError } from '../../../proxy/control/api-client/errors.js';
import { api } from '../api/client.js';
import { useDashboard, useStore } from './context.js';

let current: SystemDnsView | null | undefined = undefined;
const listeners = new Set<() => void>();

function set(v: SystemDnsView | null): void {
  current = v;
  for (const l of listeners) l();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

async function refresh(): Promise<void> {
  try {
    set(await api.systemDns());
  } catch (err) {
    // An answer (404: this dotstub doesn't manage system DNS) is news; no answer (dotstub went, the link dropped
    // mid-read) is not: the page keeps what it knew, so "Not connected" can still say private DNS was on.
    if (!(err instanceof ControlError && err.status === 0)) set(null);
  }
}

export function useSystemDns(): SystemDnsView | null | undefined {
  return useSyncExternalStore(subscribe, () => current);
}

/**
 * Mounted once (App): looks again whenever the privacy state changes, or
 * its reason while off (a pause, a takeover that failed: the takeover's own
 * words), or the link comes back. Not on a reason change while on: that is
 * the resolver's news (a switch, a reconnect), not the takeover's.
 */
export function useSystemDnsSync(): void {
  const key = useDashboard((s) => (s.status ? (s.status.state === 'off' ? `off: ${s.status.reason}` : s.status.state) : undefined));
  const live = useDashboard((s) => s.link === 'live');
  useEffect(() => {
    if (live && key !== undefined) void refresh();
  }, [key, live]);
}

/** Changes system DNS; the view is the answer, the status follows on the stream (its state change). Throws the API's error (its message says what is left). */
export function useSystemDnsChange(): (change: { enabled: true } | { enabled: false; pauseSeconds: number | null }) => Promise<void> {
  const store = useStore();
  return async (change) => {
    const v = change.enabled ? await api.setSystemDns(true) : change.pauseSeconds === null ? await api.setSystemDns(false) : await api.pauseSystemDns(change.pauseSeconds);
    set(v);
    // Without the stream, nothing else brings the new state.
    if (!store.streaming) await store.refresh('status');
  };
}
