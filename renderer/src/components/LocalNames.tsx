import { useEffect, useState } from 'react';
import { api } from '../api/client.js';
import { ControlError } from '../../../proxy/control/api-client/errors.js';
import type { LocalNamesView } from '../../../proxy/control/api-types.js';

const POLICY_WORDS: Record<LocalNamesView['policy'], string> = {
  allow: 'Sent to this network’s own resolver, unencrypted, as your computer did before dotstub.',
  deny: 'Never sent: they get an error here, and nothing about them leaves this machine.',
  ask: 'Not decided for this network yet. In strict mode they get an error until you allow them; in opportunistic mode they go to the network’s resolver.',
};

/**
 * Names this network owns (a printer.lan, a VPN's intranet, private reverse
 * lookups): where each goes, and the user's choice for this network,
 * remembered for it (issue 21). Absent when routing by name owner is off.
 */
export function LocalNames({ rev = '', onChange }: { readonly rev?: string; readonly onChange?: () => void } = {}) {
  const [view, setView] = useState<LocalNamesView | null>(null);
  const [off, setOff] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    let live = true;
    api.localNames().then(
      (v) => live && setView(v),
      (e: unknown) => live && setOff(e instanceof ControlError && e.status === 404 ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, [rev]);
  const choose = (allow: boolean): void => {
    setBusy(true);
    setError(null);
    api.setLocalNames(allow).then(
      (v) => {
        setView(v);
        onChange?.();
      },
      (e: unknown) => setError(e instanceof Error ? e.message : String(e)),
    ).finally(() => setBusy(false));
  };
  if (off !== null) return null;
  if (!view) return null;
  return (
    <section className="card" aria-labelledby="net-local-names" data-testid="local-names">
      <h2 id="net-local-names">This network’s own names</h2>
      {view.owners.length === 0 && !view.lan ? (
        <p className="muted">This network announces no names of its own: every lookup goes to your encrypted resolver.</p>
      ) : (
        <ul className="local-owners">
          {view.owners.map((o) => (
            <li key={o.suffix}>
              <span className="mono">*.{o.suffix}</span> → {o.servers.join(', ') || 'no resolver'} <span className="muted small">({o.link}; from {o.source})</span>
            </li>
          ))}
          {view.lan && (
            <li>
              <span className="mono">home.arpa, .internal, private reverse lookups</span> → {view.lan.servers.join(', ')} <span className="muted small">({view.lan.link})</span>
            </li>
          )}
        </ul>
      )}
      <p data-testid="local-names-policy">
        <strong>Local names here:</strong> {POLICY_WORDS[view.policy]}
        {view.remembered && <span className="muted small"> Remembered for this network.</span>}
      </p>
      {view.knownNetwork ? (
        <div className="captive-actions">
          <button type="button" className={view.policy === 'allow' ? 'btn btn-primary' : 'btn'} aria-pressed={view.policy === 'allow'} disabled={busy} onClick={() => choose(true)}>
            Allow local names on this network
          </button>
          <button type="button" className={view.policy === 'deny' ? 'btn btn-primary' : 'btn'} aria-pressed={view.policy === 'deny'} disabled={busy} onClick={() => choose(false)}>
            Never send them
          </button>
        </div>
      ) : (
        <p className="muted small">This network can’t be told apart (no gateway found), so no choice can be remembered for it.</p>
      )}
      {error && (
        <p role="alert" className="error-text">
          {error}
        </p>
      )}
    </section>
  );
}
