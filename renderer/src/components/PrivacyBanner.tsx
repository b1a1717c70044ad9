import { useState } from 'react';
import { bannerModel, carriedByWhenOff } from '../lib/banner.js';
import { formatAge, formatClockShort } from '../lib/format.js';
import { commandParts, lastKnown, unknownModel } from '../lib/link-status.js';
import { recovery, retryText } from '../lib/retry.js';
import { useAsOf, useDashboard, useReach } from '../state/context.js';
import { Icon } from './Icon.js';
import { RetryNow } from './RetryNow.js';
import { useSwitchTo } from './Resolvers.js';
import { switchBackTo } from '../lib/resolver-switch.js';
import { transportModel } from '../lib/ladder.js';
import { pauseCountdown, switchState } from '../lib/switch.js';
import { useSystemDns, useSystemDnsChange } from '../state/system-dns.js';
import { leakWords, localNamesText } from '../lib/leak-words.js';
import type { StatusView } from '../../../proxy/control/api-types.js';

/** "retrying by itself in 3 s, or with the next lookup." but "retrying now…", not "now….". */
function withStop(text: string): string {
  return /[.…]$/.test(text) ? text : `${text}.`;
}

/**
 * While the active resolver can't be reached: the way back to the one in use
 * before the last switch, in the banner too (not only on the Resolvers page),
 * in every page: the server says which (not only the page that switched).
 */
function SwitchBack({ activeId }: { activeId: string }) {
  const back = useDashboard((s) => switchBackTo(s.resolvers, activeId));
  const switchTo = useSwitchTo();
  if (!back) return null;
  return (
    <button type="button" className="btn btn-small btn-primary" onClick={() => void switchTo(back)}>
      <Icon name="switch" /> Switch back to {back.label}
    </button>
  );
}

/**
 * The way on, where the Off (or Paused) state is said: "Turn on private
 * DNS", "Resume now" with the pause's countdown, or "Turn back on" when it
 * is enabled but not in force. Nothing when this dotstub can't change it.
 */
function SwitchAction({ now }: { now: number }) {
  const view = useSystemDns();
  const change = useSystemDnsChange();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const st = switchState(view);
  if (st === 'none' || st === 'on' || !view) return null;
  const on = async (): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await change({ enabled: true });
    } catch (err) {
      setError(`${err instanceof Error ? err.message : String(err)}. Nothing was changed.`);
    } finally {
      setBusy(false);
    }
  };
  const label = st === 'paused' ? 'Resume now' : st === 'stuck' ? 'Turn back on' : 'Turn on private DNS';
  return (
    <div className="banner-switch">
      {st === 'paused' && view.pausedUntil !== null && (
        <p className="banner-countdown">
          <span aria-hidden="true" data-testid="pause-countdown">{pauseCountdown(view.pausedUntil, now)}</span>
          <span className="sr-only">Private DNS comes back by itself at {formatClockShort(view.pausedUntil)}.</span>
        </p>
      )}
      <button type="button" className="btn btn-primary" disabled={busy} onClick={() => void on()}>
        {busy ? 'Working…' : label}
      </button>
      {error && (
        <p className="banner-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * Beside what leaves: the local names the networks' own resolvers answered
 * (linking to those rows of the query log), and whether lookups can go
 * around dotstub, as measured from the OS (a figure only when measured).
 */
function OutsideFacts({ status }: { status: StatusView }) {
  const liveLocal = useDashboard((s) => s.counters?.localNames);
  const local = localNamesText(liveLocal ?? status.counters.localNames);
  const leaks = leakWords(status.leaks);
  return (
    <>
      {local && (
        <div className="banner-local">
          <dt>Local names</dt>
          <dd data-testid="banner-local">
            {local}{' '}
            <a href="#/queries?route=link" className="small">
              Show them →
            </a>
          </dd>
        </div>
      )}
      <div className={`banner-leaks leaks-${leaks.kind}`}>
        <dt>Around dotstub</dt>
        <dd data-testid="banner-leaks">
          {leaks.lines.length === 1 ? (
            leaks.lines[0]
          ) : (
            <ul className="plain-list">
              {leaks.lines.map((l) => (
                <li key={l}>{l}</li>
              ))}
            </ul>
          )}
        </dd>
      </div>
    </>
  );
}

/**
 * Is my DNS private? The state in words, with its reason and what leaves the
 * machine; or, when the dashboard can't know (no live link, not signed in),
 * that it doesn't know, since when, and what to do.
 */
export function PrivacyBanner() {
  const status = useDashboard((s) => s.status);
  const lostAt = useDashboard((s) => s.lostAt);
  const authProblem = useDashboard((s) => s.authProblem);
  const events = useDashboard((s) => s.events);
  const r = useReach();
  const now = useAsOf(1000);
  const systemDns = useSystemDns();
  const pausedUntil = systemDns?.pausedUntil ?? null;
  // What the machine's DNS was when the page last knew.
  const last = status ? lastKnown(status, pausedUntil, switchState(systemDns) !== 'none', events) : null;
  const unknown = unknownModel(r, lostAt, authProblem, status !== null, last);
  if (unknown) {
    return (
      <section className="banner tone-unknown" aria-label="Privacy status" data-state={r}>
        <div className="banner-icon">
          <Icon name={r === 'lost' ? 'unplug' : 'error'} />
        </div>
        <div className="banner-body" role="alert">
          <p className="banner-title">
            <span className="banner-chip">{unknown.label}</span>
            <span>{unknown.title}</span>
          </p>
          <p className="banner-detail" data-testid="banner-detail">{unknown.detail}</p>
          <p className="banner-action" data-testid="banner-action">
            {commandParts(unknown.action).map((p, i) => (p.code ? <code key={i}>{p.text}</code> : p.text))}
          </p>
        </div>
      </section>
    );
  }
  if (!status) {
    return (
      <section className="banner tone-neutral" aria-label="Privacy status" aria-busy="true">
        <div className="banner-icon">
          <Icon name="spinner" />
        </div>
        <div className="banner-body">
          <p className="banner-title">Checking whether your DNS is private…</p>
        </div>
      </section>
    );
  }
  const m = bannerModel(status, pausedUntil);
  // While the resolver can't be reached: what failed, in words, and a live countdown to the next try.
  const rec = recovery(status, events);
  const carrier = transportModel(status);
  // Off or paused, the proxy's encrypted transport carries only lookups sent to it directly: the line says what carries this machine's.
  const offCarrier = carriedByWhenOff(m.state);
  const managed = switchState(systemDns) !== 'none';
  return (
    <section className={`banner tone-${m.tone}`} aria-label="Privacy status" data-state={m.state}>
      <div className="banner-icon">
        <Icon name={m.icon} />
      </div>
      <div className="banner-body" role="status" aria-live="polite" aria-atomic="true">
        <p className="banner-title">
          <span className="banner-chip">{m.label}</span>
          <span>{m.title}</span>
        </p>
        <dl className="banner-facts">
          <div>
            <dt>What leaves this machine</dt>
            <dd data-testid="banner-leaves">{m.leaves}</dd>
          </div>
          {offCarrier !== null && (carrier.transport !== null || managed) ? (
            <div className="banner-transport">
              <dt>Carried by</dt>
              <dd data-testid="banner-transport">{offCarrier}</dd>
            </div>
          ) : carrier.transport !== null && (
            <div className="banner-transport">
              <dt>Carried by</dt>
              <dd data-testid="banner-transport">
                {carrier.carrier}
                {carrier.transport === 'doh' && <> — {carrier.why}</>}{' '}
                <a href="#/network" className="small">
                  Network →
                </a>
              </dd>
            </div>
          )}
          {rec ? (
            <div className="banner-why">
              <dt>Why</dt>
              <dd data-testid="banner-reason">
                {rec.reason}{' '}
                {/* Counted down each second for the eye; a screen reader gets the time once, not a tick a second. */}
                <span aria-hidden="true" data-testid="retry-countdown">{withStop(retryText(rec.retryAt, now, rec.attempts))}</span>
                <span className="sr-only">Tried again with each lookup, at most once a second, and by itself by {formatClockShort(rec.retryAt)}.</span> <SwitchBack activeId={status.resolver.id} /> <RetryNow />
              </dd>
            </div>
          ) : status.captive ? (
            // The Wi-Fi sign-in card right below says where and why, with its buttons: not twice.
            <div className="banner-why">
              <dt>Why</dt>
              <dd data-testid="banner-reason">This network has a sign-in page: see below.</dd>
            </div>
          ) : m.state === 'paused' ? null : m.reason && (
            <div className="banner-why">
              <dt>Why</dt>
              <dd data-testid="banner-reason">{m.reason}</dd>
            </div>
          )}
          <OutsideFacts status={status} />
        </dl>
        {(m.state === 'off' || m.state === 'paused') && <SwitchAction now={now} />}
      </div>
      <p className="banner-since" title={new Date(status.since).toLocaleString()}>
        since {formatClockShort(status.since)}
        <br />
        <span className="muted">{formatAge(now - status.since)}</span>
      </p>
    </section>
  );
}
