import { useId, useState } from 'react';
import type { ResolverTestResult } from '../../../proxy/control/api-types.js';
import { api } from '../api/client.js';
import { formatClockShort, formatLatencyMs } from '../lib/format.js';
import { testModel } from '../lib/resolver-test.js';
import { useDashboard } from '../state/context.js';
import { useLastSwitch } from '../state/last-switch.js';
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
  const [result, setResult] = useState<ResolverTestResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const count = resolvers?.resolvers.length ?? 0;
  const activeId = resolvers?.active ?? result?.activeId ?? '';

  const run = async (): Promise<void> => {
    setRunning(true);
    setError(null);
    try {
      setResult(await api.testResolvers());
    } catch (err) {
      setError(`The test didn’t run: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setRunning(false);
    }
  };

  const model = result ? testModel(result, activeId) : null;
  const busy = sw.phase === 'switching';
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
        {running && `Measuring ${count} resolvers… this takes a few seconds (at most 20).`}
        {!running && result && `Tested at ${formatClockShort(result.startedAt)}, in ${formatLatencyMs(result.tookMs)}.`}
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
              <button type="button" className="btn btn-small" disabled={busy} onClick={() => void switchTo({ id: model.suggestion!.id, label: model.suggestion!.label })}>
                <Icon name="switch" /> Use {model.suggestion.label}
              </button>
            </p>
          )}
          {!model.suggestion && model.ranked[0]?.active && (
            <p className="test-suggestion" data-testid="test-suggestion">
              <Icon name="check" className="good" />
              <span>The one in use, {model.ranked[0].label}, is the fastest from here.</span>
            </p>
          )}
          {model.scale && (
            <p className="muted small latency-scale">
              Bars: median time per query on an open connection, on one scale: a full bar is {model.scale.label}.
            </p>
          )}
          {model.ranked.length > 0 && (
            <ol className="test-ranking" aria-label="Ranking, fastest first">
              {model.ranked.map((r) => (
                <li key={r.id} className={`test-row${r.active ? ' active' : ''}`} data-testid="test-row">
                  <span className="test-rank mono" aria-hidden="true">
                    {r.rank}
                  </span>
                  <div className="test-name">
                    <strong>{r.label}</strong>
                    {r.active && <span className="badge badge-good">in use</span>}
                    <span className="muted small">
                      {' '}
                      {r.best}
                      {r.versus ? ` · ${r.versus}` : ' · fastest'}
                    </span>
                  </div>
                  <div className="test-bars">
                    {r.bars.map((b) => (
                      <div key={b.transport} className={`test-bar${b.ok ? '' : ' failed'}`}>
                        <span className="test-bar-name">{b.name}</span>
                        <span className="meter" aria-hidden="true">
                          <span className={`meter-fill meter-${b.transport}`} style={{ width: `${b.share * 100}%` }} />
                        </span>
                        <span className="small test-bar-text">{b.text}</span>
                      </div>
                    ))}
                  </div>
                  <div className="test-action">
                    {!r.active && (
                      <button type="button" className="btn btn-small" disabled={busy} onClick={() => void switchTo({ id: r.id, label: r.label })}>
                        Use<span className="sr-only"> {r.label}</span>
                      </button>
                    )}
                  </div>
                </li>
              ))}
            </ol>
          )}
          {model.failed.length > 0 && (
            <>
              <h3 className="subhead test-subhead">Couldn’t be measured</h3>
              <ul className="test-failed" aria-label="Couldn’t be measured">
                {model.failed.map((f) => (
                  <li key={f.id} data-testid="test-failed">
                    <Icon name="x" className="error-text" /> <strong>{f.label}</strong>
                    {f.active && <span className="badge badge-good">in use</span>}: {f.why}
                  </li>
                ))}
              </ul>
            </>
          )}
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
