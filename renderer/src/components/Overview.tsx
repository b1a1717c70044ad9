import type { ReactNode } from 'react';
import { formatAge, formatCount } from '../lib/format.js';
import { blockedLine, cacheTile, latencyTile, rateText } from '../lib/overview.js';
import { useAsOf, useDashboard } from '../state/context.js';
import { Breakdown } from './Breakdown.js';
import { Charts } from './Charts.js';
import { HitGauges } from './Connections.js';
import { Icon } from './Icon.js';
import { Timeline } from './Timeline.js';

function Tile({ label, value, sub }: { label: string; value: ReactNode; sub?: ReactNode }) {
  return (
    <div className="tile" role="group" aria-label={label}>
      <dl>
        <dt>{label}</dt>
        <dd className="tile-value mono">{value}</dd>
        {sub && <dd className="tile-sub muted small">{sub}</dd>}
      </dl>
    </div>
  );
}

/** At a glance: what privacy costs (latency, handshakes) and how well connections are reused. */
export function Overview() {
  const status = useDashboard((s) => s.status);
  const statusAt = useDashboard((s) => s.statusAt);
  const metrics = useDashboard((s) => s.metrics);
  const counters = useDashboard((s) => s.counters);
  const inFlight = useDashboard((s) => s.inFlight);
  const connections = useDashboard((s) => s.connections);
  const now = useAsOf(1000);
  const lat = latencyTile(status ? metrics?.latency[status.resolver.id]?.last1m : undefined);
  const cache = cacheTile(metrics?.cache);
  const blocked = blockedLine(metrics?.blocked, now);
  const uptime = status ? status.uptimeMs + (now - statusAt) : 0;
  return (
    <div className="overview">
      <div className="tiles" role="group" aria-label="Key numbers">
        <Tile
          label="Resolver"
          value={<span className="tile-text">{status?.resolver.label ?? '—'}</span>}
          sub={
            // The certificate's name read like a second resolver under the first (issue 29): said as what it is, and not
            // at all when the resolver's label already holds it.
            <>
              {status?.resolver.authName && !status.resolver.label.includes(status.resolver.authName) ? `certificate for ${status.resolver.authName} · ` : ''}
              <a href="#/resolvers">
                change <Icon name="switch" />
              </a>
            </>
          }
        />
        <Tile
          label="Queries"
          value={formatCount(counters?.queries ?? 0, true)}
          sub={
            <>
              {`${rateText(metrics?.series ?? [])} last second · ${inFlight} in flight`}
              {blocked && (
                // Answers that read as blocked, per day (issue 46): the count links to them in the log.
                <span className="tile-line" data-testid="blocked-today">
                  <a href="#/queries?blocked=any">{blocked.count}</a>
                  {blocked.how ? `: ${blocked.how}` : ''}
                </span>
              )}
            </>
          }
        />
        <Tile label="Latency p50 / p95" value={lat.value} sub={lat.sub} />
        <Tile label="Answer cache" value={cache.value} sub={cache.sub} />
        <Tile
          label="Connections"
          value={connections.length}
          sub={`${formatCount(metrics?.handshakes.full ?? 0)} full / ${formatCount(metrics?.handshakes.resumed ?? 0)} resumed handshakes`}
        />
        <Tile label="SERVFAILs" value={formatCount(counters?.servfails ?? 0)} sub={`${formatCount(counters?.retries ?? 0)} retried · up ${formatAge(uptime)}`} />
      </div>
      <div className="overview-grid">
        <section className="card" aria-labelledby="ov-hits">
          <header className="card-head">
            <h2 id="ov-hits">Connection reuse</h2>
            <a href="#/connections" className="small">
              Connections →
            </a>
          </header>
          <HitGauges />
          <p className="muted small explain">
            A query that finds an open connection costs one round trip, the same as plain DNS. A new connection costs three more (TCP and TLS
            1.3), fewer when the session resumes.
          </p>
        </section>
        <section className="card" aria-labelledby="ov-events">
          <header className="card-head">
            <h2 id="ov-events">Recent events</h2>
            <a href="#/events" className="small">
              All events →
            </a>
          </header>
          <Timeline limit={6} />
        </section>
      </div>
      <Charts />
      <Breakdown />
    </div>
  );
}
