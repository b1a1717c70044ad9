import { useEffect, useId, useState } from 'react';
import { api } from '../api/client.js';
import { countOf, formatLatencyMs, formatWhen } from '../lib/format.js';
import { testModel } from '../lib/resolver-test.js';
import { useDashboard } from '../state/context.js';
import { useLastSwitch } from '../state/last-switch.js';
import { setTestResult, useTestResult } from '../state/test-result.js';
import { Icon } from './Icon.js';
import { useSwitchTo } from './Resolvers.js';

/**
 * "Which resolver is fastest from here?": measures every resolver from this
 * network (the proxy does it, apart from the connection in use), ranks them
 * on one scale, and offers to switch to the fastest.
 */
export function ResolverTest() {
  const id = useId();
  const resolvers = useDashboard((s) => s.resolvers);
  const switchTo = useSwitchTo();
  const sw = useLastSwitch();
  const [running, setRunning] = useState(false);
  const result = useTestResult();
  const [error, setError] = useState<string | null>(null);
  const count = resolvers?.resolvers.length ?? 0;
  const activeId = resolvers?.active ?? result?.activeId ?? '';

  // The last test is kept by the proxy (in its config dir): a new page, or one after a restart, shows it with its time.
  useEffect(() => {
    if (result !== null) return;
    let live = true;
    api
      .lastResolverTest()
      .then((last) => {
        if (live && last !== null) setTestResult(last);
      })
      .catch(() => undefined);
    return () => {
      live = false;
    };
    // Once per mount: a result set meanwhile (a test run here) is newer than the kept one.
  }, []);

  const run = async (): Promise<void> => {
    setRunning(true);
    setError(null);
    try {
      setTestResult(await api.testResolvers());
    } catch (err) {
      setError(`The test didn’t run: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setRunning(false);
    }
  };

  const model = result ? testModel(result, activeId) : null;
  const busy = sw.phase === 'switching' || sw.phase === 'probing';
  return (
    <section className="card resolver-test" aria-labelledby={`${id}-title`}>
      <header className="card-head">
        <h2 id={`${id}-title`}>Which is fastest from here?</h2>
        <button type="button" className="btn btn-primary" disabled={running} onClick={() => void run()}>
          <Icon name={running ? 'spinner' : 'resume'} /> {running ? 'Testing…' : result ? 'Test again' : 'Test resolvers'}
        </button>
      </header>
      <p className="muted small explain test-explain">
        Measures each resolver from this network: a new connection (connect, encrypted handshake, one answer) and queries on the open
        connection, over DNS-over-TLS and, where it has one, DNS-over-HTTPS. Your DNS keeps using its own connection meanwhile.
      </p>
      <p role="status" className="test-status" data-testid="test-status">
        {running && `Measuring ${countOf(count, 'resolver')}… this takes a few seconds (at most 20).`}
        {!running && result && `Tested at ${formatWhen(result.startedAt, Date.now())}, in ${formatLatencyMs(result.tookMs)}.`}
      </p>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      {model && (
        <>
          {model.suggestion && (
            <p className="test-suggestion" data-testid="test-suggestion">
              <span>
                <strong>{model.suggestion.label}</strong> is the fastest from here: {model.suggestion.gain}.
              </span>
              <button type="button" className="btn btn-small btn-primary" disabled={busy} onClick={() => void switchTo({ id: model.suggestion!.id, label: model.suggestion!.label }, { probe: true })}>
                <Icon name="switch" /> Use fastest<span className="sr-only">: {model.suggestion.label}</span>
              </button>
            </p>
          )}
          {model.tie && (
            <p className="test-suggestion" data-testid="test-suggestion">
              <Icon name="check" className="good" />
              <span>
                The one in use, {model.tie.active}, and {model.tie.fastest} are tied from here ({model.tie.apart} apart: within the test’s noise); nothing to
                gain by switching.
              </span>
            </p>
          )}
          {!model.suggestion && !model.tie && model.ranked[0]?.active && (
            <p className="test-suggestion" data-testid="test-suggestion">
              <Icon name="check" className="good" />
              <span>The one in use, {model.ranked[0].label}, is the fastest from here.</span>
            </p>
          )}
          <p className="muted small" data-testid="test-merged">
            Each resolver’s card below shows what it measured: a lookup on an open connection (its bar, on one scale for all), and under it each
            transport’s figures and what a new connection costs.
          </p>
          {model.skipped && (
            <p className="muted small test-skipped" data-testid="test-skipped">
              Not measured: {model.skipped.labels.join(', ')} — {model.skipped.why}.
            </p>
          )}
        </>
      )}
    </section>
  );
}
