import { useState } from 'react';
import { api } from '../api/client.js';
import { ControlError } from '../../../proxy/control/api-client/errors.js';
import { captiveModel, type CaptiveButton } from '../lib/captive.js';
import { useAsOf, useDashboard, useStore } from '../state/context.js';
import { Icon } from './Icon.js';

const LABELS: Readonly<Record<Exclude<CaptiveButton, 'open'>, string>> = {
  allow: 'Allow sign-in',
  decline: 'Not now',
  extend: '5 more minutes',
  'allow-again': 'Allow sign-in again',
};

/**
 * A Wi-Fi that wants a sign-in (state `captive`): where to sign in, what
 * dotstub lets through meanwhile and until when, and the one click strict
 * mode needs. Shown under the privacy banner, on every view, only while
 * the proxy says it is signing in.
 */
export function CaptiveCard() {
  const store = useStore();
  const captive = useDashboard((s) => s.status?.captive ?? null);
  const now = useAsOf(1000);
  const [remember, setRemember] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!captive) return null;
  const m = captiveModel(captive, now);

  const act = async (b: Exclude<CaptiveButton, 'open'>): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      const action = b === 'allow-again' ? 'allow' : b;
      store.applyStatus(await api.captive(action, action === 'allow' || action === 'decline' ? remember && m.askRemember : false));
    } catch (err) {
      setError(err instanceof ControlError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="captive-card tone-caution" aria-labelledby="captive-title" data-exception={captive.exception}>
      <div className="banner-icon">
        <Icon name="wifi-sign-in" />
      </div>
      <div className="captive-body">
        <h2 id="captive-title" className="captive-title">{m.title}</h2>
        <p className="captive-detail">{m.detail}</p>
        {m.window && <p className="captive-window" data-testid="captive-window">{m.window}</p>}
        <div className="captive-actions">
          {m.buttons.map((b) =>
            b === 'open' ? (
              <a key={b} className="btn btn-primary" href={captive.portalUrl} target="_blank" rel="noopener noreferrer">
                Open sign-in page
              </a>
            ) : (
              <button key={b} type="button" className={b === 'allow' || b === 'allow-again' ? 'btn btn-primary' : 'btn'} disabled={busy} onClick={() => void act(b)}>
                {LABELS[b]}
              </button>
            ),
          )}
          {m.askRemember && (
            <label className="inline-field check">
              <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.target.checked)} />
              <span>Remember my answer for this network</span>
            </label>
          )}
        </div>
        {error && (
          <p className="field-error" role="alert">
            {error}
          </p>
        )}
        <details className="captive-more">
          <summary>What is let through</summary>
          <p className="muted">{m.foundBy}</p>
          <p>
            Allowed unencrypted: <span className="mono">{captive.allowedNames.join(', ')}</span>
          </p>
          <p>
            Looked up so far: <span className="mono">{captive.letThrough.length ? captive.letThrough.join(', ') : 'nothing yet'}</span>
          </p>
        </details>
      </div>
    </section>
  );
}
