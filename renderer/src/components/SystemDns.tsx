import { useCallback, useEffect, useState } from 'react';
import type { SystemDnsView } from '../../../proxy/control/api-types.js';
import { api } from '../api/client.js';
import { ControlError } from '../../../proxy/control/api-client/errors.js';
import { clockTime, systemDnsModel } from '../lib/system-dns.js';
import { useDashboard, useStore } from '../state/context.js';
import { Icon } from './Icon.js';

type Load = { kind: 'loading' } | { kind: 'ok'; view: SystemDnsView } | { kind: 'unmanaged' | 'error'; text: string };

/** The machine-wide takeover: backend, what changed, the toggle and the leak test (GET/PUT /api/system-dns). */
export function SystemDnsPanel() {
  const store = useStore();
  const [load, setLoad] = useState<Load>({ kind: 'loading' });
  const [busy, setBusy] = useState<'toggle' | 'leak' | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  // A privacy change (ours, the CLI's, a rewrite) may be a takeover change: look again.
  const state = useDashboard((s) => s.status?.state);
  const reason = useDashboard((s) => s.status?.reason);

  const fetchView = useCallback(async () => {
    try {
      setLoad({ kind: 'ok', view: await api.systemDns() });
    } catch (err) {
      if (err instanceof ControlError && err.code === 'system_dns_not_managed') setLoad({ kind: 'unmanaged', text: err.message });
      else setLoad({ kind: 'error', text: err instanceof Error ? err.message : String(err) });
    }
  }, []);
  useEffect(() => void fetchView(), [fetchView, state, reason]);

  const act = async (what: 'toggle' | 'leak', call: () => Promise<SystemDnsView>): Promise<void> => {
    setBusy(what);
    setMessage(null);
    try {
      setLoad({ kind: 'ok', view: await call() });
      await store.refresh('status');
    } catch (err) {
      setMessage(`${err instanceof Error ? err.message : String(err)}. Nothing was changed.`);
    } finally {
      setBusy(null);
    }
  };

  if (load.kind === 'loading') return <p className="card muted">Looking at this machine’s DNS…</p>;
  if (load.kind !== 'ok') {
    return (
      <p className={`card ${load.kind === 'error' ? 'notice notice-error' : 'muted'}`} data-testid="sysdns-unavailable">
        {load.text}
      </p>
    );
  }
  const v = load.view;
  const m = systemDnsModel(v);
  const test = v.lastLeakTest;
  return (
    <>
      {message && (
        <p className="notice notice-error" role="alert">
          <Icon name="error" /> {message}
        </p>
      )}
      <section className="card sysdns-head" aria-labelledby="sysdns-headline">
        <div>
          <h2 id="sysdns-headline" className={`sysdns-headline sysdns-${m.tone}`}>
            <Icon name={m.tone === 'good' ? 'shield-check' : m.tone === 'warn' ? 'error' : 'unlocked'} /> {m.headline}
          </h2>
          <p className="muted" data-testid="sysdns-reason">
            {m.detail}
          </p>
        </div>
        <div className="sysdns-actions">
          <button
            type="button"
            className={`btn ${m.toggleTo ? 'btn-primary' : ''}`}
            role="switch"
            aria-checked={v.enabled}
            aria-describedby={m.toggleBlocked ? 'sysdns-blocked' : undefined}
            disabled={busy !== null || m.toggleBlocked !== null}
            onClick={() => void act('toggle', () => api.setSystemDns(m.toggleTo))}
          >
            {busy === 'toggle' ? 'Working…' : m.toggleLabel}
          </button>
          {m.canPause && (
            <div className="sysdns-pause" role="group" aria-label="Pause private DNS">
              <span className="muted small">Pause:</span>
              <button type="button" className="btn btn-small" disabled={busy !== null} onClick={() => void act('toggle', () => api.pauseSystemDns(300))}>
                5 min
              </button>
              <button type="button" className="btn btn-small" disabled={busy !== null} onClick={() => void act('toggle', () => api.pauseSystemDns(3600))}>
                1 hour
              </button>
            </div>
          )}
          {m.toggleBlocked && (
            <span id="sysdns-blocked" className="muted small">
              {m.toggleBlocked}
            </span>
          )}
        </div>
      </section>


      <div className="sysdns-grid">
        <section className="card" aria-labelledby="sysdns-backend">
          <h2 id="sysdns-backend">How this machine’s DNS is set</h2>
          <p>
            <strong data-testid="sysdns-backend">{m.backend}</strong>
          </p>
          <p className="muted small">{v.backendWhy}</p>
          <h3>What dotstub changed</h3>
          {v.changed.length === 0 ? (
            <p className="muted">Nothing: the system’s DNS settings are as you had them.</p>
          ) : (
            <ul className="sysdns-list" data-testid="sysdns-changed">
              {v.changed.map((c) => (
                <li key={c}>{c}</li>
              ))}
            </ul>
          )}
          {v.original.length > 0 && (
            <>
              <h3>What you had (put back when you disable or quit)</h3>
              <ul className="sysdns-list">
                {v.original.map((o) => (
                  <li key={o}>{o}</li>
                ))}
              </ul>
            </>
          )}
        </section>

        <section className="card" aria-labelledby="sysdns-leak">
          <div className="card-head">
            <h2 id="sysdns-leak">Leak test</h2>
            <button type="button" className="btn" disabled={busy !== null} onClick={() => void act('leak', () => api.runLeakTest())}>
              {busy === 'leak' ? 'Testing…' : 'Run leak test'}
            </button>
          </div>
          <p className="muted small">Looks up a new random name the way every program does and checks that it reached dotstub, that the system knows no other resolver, and that resolver discovery and Firefox’s canary are answered by dotstub itself.</p>
          {test === null ? (
            <p className="muted">Not run yet.</p>
          ) : (
            <div data-testid="leak-result">
              <p className={`notice ${test.passed ? 'notice-good' : 'notice-error'}`} role="status">
                <Icon name={test.passed ? 'check' : 'error'} /> {test.passed ? 'No leak found' : 'Lookups can leak past dotstub'} <span className="muted small">at {clockTime(test.at)}</span>
              </p>
              <ul className="sysdns-list">
                {test.lines.map((l) => (
                  <li key={l}>{l}</li>
                ))}
              </ul>
            </div>
          )}
          {v.leaks.length > 0 && test === null && (
            <>
              <h3>Other resolvers the system still knows</h3>
              <ul className="sysdns-list">
                {v.leaks.map((l) => (
                  <li key={l}>{l}</li>
                ))}
              </ul>
            </>
          )}
        </section>
      </div>
    </>
  );
}
