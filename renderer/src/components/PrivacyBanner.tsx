import { bannerModel } from '../lib/banner.js';
import { formatAge, formatClockShort } from '../lib/format.js';
import { useDashboard, useNow } from '../state/context.js';
import { Icon } from './Icon.js';

/** Is my DNS private? The state in words, with its reason and what leaves the machine. */
export function PrivacyBanner() {
  const status = useDashboard((s) => s.status);
  const now = useNow(1000);
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
          {m.reason && (
            <div>
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
