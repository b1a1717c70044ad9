import { useState } from 'react';
import { api } from '../api/client.js';
import { failureWords } from '../../../proxy/control/api-client/errors.js';
import { useDashboard, useStore } from '../state/context.js';
import { Icon } from './Icon.js';

/**
 * A saved resolver whose operator closed the service was moved to the
 * replacement at start (issue 29): says what closed, when, and what answers
 * now, with "change" to the resolver switcher. Dismissed, it is gone for
 * good (the proxy forgets the notice, so a restart does not bring it back).
 */
export function RetiredNotice() {
  const notice = useDashboard((s) => s.status?.retiredNotice ?? null);
  const store = useStore();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!notice) return null;
  const dismiss = async (): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await api.dismissRetiredNotice();
      await store.refresh('status');
      // The button is gone: keyboard focus goes to the page, not to nowhere.
      document.querySelector<HTMLElement>('main h1')?.focus({ preventScroll: true });
    } catch (err) {
      setError(`Couldn’t dismiss this: ${failureWords(err)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="retired-notice" aria-label="Resolver retired" data-testid="retired-notice">
      <p>
        <Icon name="switch" />
        {notice.message} — <a href="#/resolvers">change</a>
      </p>
      <button type="button" className="btn btn-small" disabled={busy} onClick={() => void dismiss()}>
        Dismiss
      </button>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
