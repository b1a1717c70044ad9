import { useCallback, useState } from 'react';
import type { ConnectionView, ResolverView } from '../../../proxy/control/api-types.js';
import { api } from '../api/client.js';
import { failureWords } from '../../../proxy/control/api-client/errors.js';
import { barShare, type LatencyScale } from '../lib/latency-scale.js';
import { formatLatencyMs, formatWhen } from '../lib/format.js';
import { recentAttempts, retryText } from '../lib/retry.js';
import { nameWithPort, switchOutcome, type SwitchAttempt } from '../lib/resolver-switch.js';
import { lastFailure, recovery } from '../lib/retry.js';
import { cardMeasures, cardOrder, cardScale, testModel, type CardMeasure } from '../lib/resolver-test.js';
import { errorWords } from '../lib/error-words.js';
import { networkOwnInUse } from '../lib/own-resolver-words.js';
import { formatClockShort } from '../lib/format.js';
import { useTestResult } from '../state/test-result.js';
import { useAsOf, useDashboard, useStore } from '../state/context.js';
import { setLastSwitch, useLastSwitch } from '../state/last-switch.js';
import { Icon } from './Icon.js';

function connectionSummary(c: ConnectionView): string {
  const hs = c.resumed === null ? '' : c.resumed ? ', resumed session' : ', full handshake';
  return `connection #${c.id} to ${c.address} is open (${c.tlsVersion ?? 'TLS'}${hs}).`;
}

/** After a switch: what became of it, said where the switch was made, with a way back if it failed. */
function SwitchResult({ attempt, onSwitchBack, busy }: { attempt: SwitchAttempt; onSwitchBack: () => void; busy: boolean }) {
  const connections = useDashboard((s) => s.connections);
  const events = useDashboard((s) => s.events);
  const status = useDashboard((s) => s.status);
  const resolvers = useDashboard((s) => s.resolvers);
  const active = resolvers?.active;
  const now = useAsOf(1000);
  // Switched elsewhere since (the tray, another tab): this outcome no longer applies.
  if (active !== undefined && active !== attempt.to.id) return null;
  const outcome = switchOutcome(attempt, connections, events, status);
  const port = resolvers?.resolvers.find((r) => r.id === attempt.to.id)?.port;
  switch (outcome.kind) {
    case 'pending':
      return (
        <>
          <Icon name="spinner" /> Switched to {attempt.to.label}: connecting… (the first connection opens with the next query).
        </>
      );
    case 'connected':
      return (
        <>
          <Icon name="check" className="good" /> Now using {attempt.to.label}: {connectionSummary(outcome.connection)}
        </>
      );
    case 'failed':
      return (
        <span className="switch-failed" data-testid="switch-failed">
          <span className="error-text">
            <Icon name="error" /> {port === undefined ? attempt.to.label : nameWithPort(attempt.to.label, outcome.address, port)} can’t be reached:{' '}
            {outcome.reason}. Queries get SERVFAIL until it answers
            {outcome.retryAt !== null ? ` (${retryText(outcome.retryAt, now, recentAttempts(events, attempt.to.id))})` : ''}.
          </span>
          {attempt.from && (
            <button type="button" className="btn btn-primary btn-small" disabled={busy} onClick={onSwitchBack}>
              <Icon name="switch" /> Switch back to {attempt.from.label}
            </button>
          )}
        </span>
      );
  }
}

/** The last test's detail under a resolver's card, in words (its figure and bar are the card's one figure): rank, then per transport. */
function Measured({ m }: { m: CardMeasure }) {
  if (m.kind === 'skipped') {
    return (
      <p className="resolver-measured muted small" data-testid="card-test">
        Not tested: {m.why}.
      </p>
    );
  }
  if (m.kind === 'failed') {
    return (
      <p className="resolver-measured error-text small" data-testid="card-test" title={m.why}>
        <Icon name="error" /> Test: {m.text}.
      </p>
    );
  }
  return (
    <p className="resolver-measured small muted" data-testid="card-test">
      Test: #{m.rank}
      {m.versus ? ` · ${m.versus}` : ''}
      {m.bars.map((b) => (
        <span key={b.transport} className={b.ok ? undefined : 'error-text'}>
          {' · '}
          {b.name} {b.text}
        </span>
      ))}
    </p>
  );
}

/** A card's one figure after a test: a lookup on an open connection (its best transport) with its bar on the test's scale, or why there is none. */
function CardFigure({ measure, scale }: { measure: CardMeasure | null; scale: LatencyScale | null }) {
  const words = measure === null ? 'not tested yet' : measure.kind === 'skipped' ? 'not tested' : measure.kind === 'failed' ? measure.text : null;
  return (
    <div className="resolver-latency" aria-label={`The last test, a lookup on an open connection: ${words ?? (measure?.kind === 'ranked' ? measure.best : '')}`}>
      {words !== null || measure?.kind !== 'ranked' ? (
        <span className={`resolver-idle small${measure?.kind === 'failed' ? ' error-text' : ' muted'}`} data-testid="resolver-figure">
          {words}
        </span>
      ) : (
        <>
          <span className="mono" data-testid="resolver-figure">
            {measure.best}
          </span>
          <span className="meter" aria-hidden="true">
            <span className="meter-fill" style={{ width: `${barShare(measure.bestMs, scale) * 100}%` }} />
          </span>
        </>
      )}
      <span className="muted small">lookup, open connection</span>
    </div>
  );
}

/**
 * Switches the active resolver from this page, keeping the outcome (and the
 * way back) in the last-switch state that the Resolvers view shows.
 */
export function useSwitchTo(): (r: Pick<ResolverView, 'id' | 'label'>, how?: { readonly probe: boolean }) => Promise<void> {
  const store = useStore();
  const setSw = setLastSwitch;
  return useCallback(
    async (r: Pick<ResolverView, 'id' | 'label'>, how: { readonly probe: boolean } = { probe: false }) => {
      const snap = store.getSnapshot().resolvers;
      const fromView = snap?.resolvers.find((x) => x.id === snap.active);
      const to = snap?.resolvers.find((x) => x.id === r.id) ?? null;
      if (!to) return;
      if (how.probe) {
        // Ask it first (connect, handshake, one query, about a second): a dead one is a question, not a half switch.
        setSw({ phase: 'probing', to });
        try {
          const probe = await api.probeResolver(to.id);
          if (!probe.ok) {
            setSw({ phase: 'unanswered', to, from: fromView ?? null, probe });
            return;
          }
        } catch (err) {
          setSw({ phase: 'failed', to, message: failureWords(err) });
          return;
        }
      }
      setSw({ phase: 'switching', to });
      try {
        // The answer is the status after the switch; the new connection follows on the stream.
        store.applyStatus(await api.switchResolver(to.id));
        const at = Date.now();
        setSw({ phase: 'done', attempt: { to: { id: to.id, label: to.label }, from: fromView ? { id: fromView.id, label: fromView.label } : null, at } });
      } catch (err) {
        setSw({ phase: 'failed', to, message: failureWords(err) });
      }
    },
    [store],
  );
}

/** Presets and custom resolvers, each with its recent median latency; switch without dropping a query. */
export function ResolverSwitcher() {
  const resolvers = useDashboard((s) => s.resolvers);
  const store = useStore();
  const sw = useLastSwitch();
  const status = useDashboard((s) => s.status);
  const events = useDashboard((s) => s.events);
  const tested = useTestResult();
  const [removing, setRemoving] = useState<string | null>(null);
  const [removeError, setRemoveError] = useState<string | null>(null);

  const switchTo = useSwitchTo();

  const remove = useCallback(
    async (r: ResolverView) => {
      setRemoving(r.id);
      setRemoveError(null);
      try {
        await api.removeResolver(r.id);
        await store.refresh('resolvers');
      } catch (err) {
        setRemoveError(`Could not remove ${r.label}: ${failureWords(err)}`);
      } finally {
        setRemoving(null);
      }
    },
    [store],
  );

  if (!resolvers) return <p className="muted">Loading resolvers…</p>;
  // One figure per card, on one scale: the last test's when there is one, else the 5-minute medians.
  const { source, scale } = cardScale(tested, resolvers.resolvers.map((r) => r.medianLatencyMs));
  const busy = sw.phase === 'switching' || sw.phase === 'probing';
  // The one in use is failing: its card says so in red (not a green "in use" over a dead resolver).
  const failingId = status && recovery(status, events) ? status.resolver.id : null;
  // The last test's figures, merged into the cards; the one in use first, then fastest first.
  const measures = tested ? cardMeasures(testModel(tested, resolvers.active), tested, formatClockShort) : null;
  const ordered = cardOrder(resolvers.resolvers, resolvers.active, tested);
  // A network's own encrypted resolver in use (chosen for this network): not a card here, so said above them.
  const networkOwn = networkOwnInUse(resolvers, status?.resolver.label);

  return (
    <div className="resolvers">
      <p className="live-line" role="status" aria-live="polite">
        {sw.phase === 'probing' && (
          <>
            <Icon name="spinner" /> Asking {sw.to.label} before switching…
          </>
        )}
        {sw.phase === 'switching' && (
          <>
            <Icon name="spinner" /> Switching to {sw.to.label}… queries in flight finish on the old connection.
          </>
        )}
        {sw.phase === 'done' && (
          <SwitchResult attempt={sw.attempt} busy={busy} onSwitchBack={() => sw.attempt.from && void switchTo(sw.attempt.from)} />
        )}
        {sw.phase === 'failed' && (
          <span className="error-text">
            <Icon name="error" /> Could not switch to {sw.to.label}: {sw.message}
          </span>
        )}
      </p>
      {removeError && (
        <p className="error-text" role="alert">
          {removeError}
        </p>
      )}
      <p className="muted small latency-scale" data-testid="latency-scale">
        {source === 'test' && tested
          ? `Bars: each resolver’s time for a lookup on an open connection, from the test at ${formatWhen(tested.startedAt, Date.now())}, on one scale${scale ? `: a full bar is ${scale.label}` : ' (none answered)'}.`
          : scale
            ? `Bars: median latency of each resolver’s answers over the last 5 minutes, on one scale: a full bar is ${scale.label}.`
            : 'Bars: median latency of each resolver’s answers over the last 5 minutes (none answered yet).'}
      </p>
      {networkOwn && (
        <p className="notice notice-good" data-testid="network-own-in-use">
          <Icon name="check" className="good" /> {networkOwn.text}
        </p>
      )}
      <ul className="resolver-list" aria-label="Resolvers">
        {ordered.map((r) => {
          const active = r.id === resolvers.active;
          const chosenElsewhere = networkOwn !== null && r.id === resolvers.chosen;
          const target = (sw.phase === 'switching' || sw.phase === 'probing') && sw.to.id === r.id;
          const failing = active && failingId === r.id;
          const asked = sw.phase === 'unanswered' && sw.to.id === r.id ? sw : null;
          const measure = measures?.get(r.id) ?? null;
          // Never tried is not the same as refused: a failure the proxy saw says so, with when.
          const seen = r.medianLatencyMs === null ? lastFailure(events, r.id, 0) : null;
          const idle =
            measure?.kind === 'failed' ? measure.text : seen ? `unreachable: ${errorWords(seen.code)} at ${formatClockShort(seen.at)}` : 'not measured';
          const unreachable = measure?.kind === 'failed' || seen !== null;
          return (
            <li
              key={r.id}
              className={`resolver-card${active ? ' active' : ''}${failing ? ' failing' : ''}${asked ? ' asked' : ''}`}
              aria-current={active ? 'true' : undefined}
              data-health={failing ? 'failing' : undefined}
            >
              <div className="resolver-main">
                <div className="resolver-name">
                  <strong>{r.label}</strong>
                  <span className="badge">{r.preset ? 'preset' : 'custom'}</span>
                  {measure?.kind === 'ranked' && measure.fastest && (
                    <span className="badge badge-good" data-testid="fastest">
                      fastest
                    </span>
                  )}
                  {chosenElsewhere && (
                    <span className="badge" data-testid="chosen-elsewhere">
                      your choice, on other networks
                    </span>
                  )}
                  {active &&
                    (failing ? (
                      <span className="badge badge-bad">
                        <Icon name="error" /> in use — not answering
                      </span>
                    ) : (
                      <span className="badge badge-good">
                        <Icon name="check" /> in use
                      </span>
                    ))}
                </div>
                <div className="resolver-addr mono">
                  {r.authName ?? 'no auth name'} · {r.addresses.slice(0, 2).join(', ')}
                  {r.addresses.length > 2 ? ` +${r.addresses.length - 2}` : ''} · port {r.port}
                  {r.pins.length > 0 ? ` · ${r.pins.length} pin${r.pins.length > 1 ? 's' : ''}` : ''}
                </div>
                {r.blocking && (
                  <p className="resolver-blocking muted small" data-testid="resolver-blocking">
                    {r.blocking}
                  </p>
                )}
              </div>
              {source === 'test' ? (
                <CardFigure measure={measure} scale={scale} />
              ) : (
                <div className="resolver-latency" aria-label={`Median latency over the last 5 minutes: ${r.medianLatencyMs === null ? idle : formatLatencyMs(r.medianLatencyMs)}`}>
                  {r.medianLatencyMs === null ? (
                    // Nothing to draw: the words take the bar's room.
                    <span className={`resolver-idle small${unreachable ? ' error-text' : ' muted'}`} data-testid="resolver-figure">
                      {idle}
                    </span>
                  ) : (
                    <>
                      <span className="mono" data-testid="resolver-figure">
                        {formatLatencyMs(r.medianLatencyMs)}
                      </span>
                      <span className="meter" aria-hidden="true">
                        <span className="meter-fill" style={{ width: `${barShare(r.medianLatencyMs, scale) * 100}%` }} />
                      </span>
                    </>
                  )}
                  <span className="muted small">median, 5 min</span>
                </div>
              )}
              <div className="resolver-actions">
                {active ? (
                  failing ? null : <span className="muted small">Active</span>
                ) : (
                  <button type="button" className="btn" disabled={busy} onClick={() => void switchTo(r, { probe: true })}>
                    {target ? <Icon name="spinner" /> : <Icon name="switch" />} {target ? (sw.phase === 'probing' ? 'Checking…' : 'Switching…') : 'Use'}
                    {/* The accessible name starts with the visible word, so voice control's "click Use" works. */}
                    <span className="sr-only"> {r.label}</span>
                  </button>
                )}
                {!r.preset && !active && (
                  <button
                    type="button"
                    className="btn btn-ghost"
                    disabled={removing === r.id || busy}
                    onClick={() => void remove(r)}
                    aria-label={`Remove ${r.label}`}
                  >
                    <Icon name="trash" />
                  </button>
                )}
              </div>
              {measure && <Measured m={measure} />}
              {asked && (
                <div className="switch-asked" role="alert">
                  <p>
                    <Icon name="error" /> {r.label} didn’t answer ({asked.probe.why}). Nothing was changed: {asked.from?.label ?? 'the resolver in use'} still
                    answers your lookups.
                  </p>
                  <div className="switch-asked-actions">
                    <button type="button" className="btn" onClick={() => void switchTo(r, { probe: false })}>
                      Switch anyway
                    </button>
                    <button type="button" className="btn btn-primary" onClick={() => setLastSwitch({ phase: 'idle' })}>
                      Keep {asked.from?.label ?? 'the one in use'}
                    </button>
                  </div>
                </div>
              )}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
