import { useEffect, useState } from 'react';
import { api } from '../api/client.js';
import { useStore } from '../state/context.js';
import { Icon } from './Icon.js';

/**
 * "Retry now": asks the proxy to try the resolver at once instead of after
 * its back-off (POST /api/retry). What happened is said beside the button;
 * the attempt's outcome arrives as usual (the banner changes, or the
 * countdown starts again).
 */
export function RetryNow() {
  const store = useStore();
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<string | null>(null);
  useEffect(() => {
    if (said === null) return;
    const t = window.setTimeout(() => setSaid(null), 6000);
    return () => window.clearTimeout(t);
  }, [said]);
  const retry = async (): Promise<void> => {
    setBusy(true);
    try {
      const r = await api.retryNow();
      setSaid(r.started ? 'Trying now…' : `${r.message[0]!.toUpperCase()}${r.message.slice(1)}.`);
      await store.refresh('status', 'connections');
    } catch (err) {
      setSaid(`Couldn’t ask dotstub to retry: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="retry-now">
      <button type="button" className="btn btn-small" disabled={busy} onClick={() => void retry()}>
        <Icon name="resume" /> Retry now
      </button>
      <span role="status" className="retry-said" data-testid="retry-said">
        {said}
      </span>
    </span>
  );
}
