import { bannerModel } from '../lib/banner.js';
import { formatAge, formatClockShort } from '../lib/format.js';
import { unknownModel } from '../lib/link-status.js';
import { recovery, retryText } from '../lib/retry.js';
import { useAsOf, useDashboard, useReach } from '../state/context.js';
import { Icon } from './Icon.js';
import { RetryNow } from './RetryNow.js';
import { transportModel } from '../lib/ladder.js';

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
  const unknown = unknownModel(r, lostAt, authProblem, status !== null);
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
          <p className="banner-action" data-testid="banner-action">{unknown.action}</p>
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
  const m = bannerModel(status);
  // While the resolver can't be reached: what failed, in words, and a live countdown to the next try.
  const rec = recovery(status, events);
  const carrier = transportModel(status);
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
          {carrier.transport !== null && (
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
                <span aria-hidden="true" data-testid="retry-countdown">{retryText(rec.retryAt, now)}.</span>
                <span className="sr-only">next try at {formatClockShort(rec.retryAt)}.</span> <RetryNow />
              </dd>
            </div>
          ) : status.captive ? (
            // The Wi-Fi sign-in card right below says where and why, with its buttons: not twice.
            <div className="banner-why">
              <dt>Why</dt>
              <dd data-testid="banner-reason">This network has a sign-in page: see below.</dd>
            </div>
          ) : m.reason && (
            <div className="banner-why">
              <dt>Why</dt>
              <dd data-testid="banner-reason">{m.reason}</dd>
            </div>
          )}
        </dl>
      </div>
      <p className="banner-since" title={new Date(status.since).toLocaleString()}>
        since {formatClockShort(status.since)}
        <br />
        <span className="muted">{formatAge(now - status.since)}</span>
      </p>
    </section>
  );
}
