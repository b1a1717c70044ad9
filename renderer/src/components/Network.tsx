import type { ConnectionView } from '../../../proxy/control/api-types.js';
import { formatAge, formatDateTime } from '../lib/format.js';
import { ladderLines, raceModel, transportModel } from '../lib/ladder.js';
import { useAsOf, useDashboard } from '../state/context.js';
import { Icon } from './Icon.js';
import { useState } from 'react';
import { LocalNames } from './LocalNames.js';
import { RememberedNetworks } from './RememberedNetworks.js';
import { RetryNow } from './RetryNow.js';

/**
 * What this network does to encrypted DNS: which transport carries queries
 * and why, the fallback ladder as it ran (each transport and address, what
 * happened and how long it took), and the last problem in the proxy's words.
 */
/**
 * The connection carrying lookups now, in words (issue 29: the ladder said "No connection attempts yet" while
 * connected; it starts over when the network changes or a resolver is chosen, and a connection can outlive that).
 */
function LiveConnection({ resolverId }: { resolverId: string }) {
  const connections = useDashboard((s) => s.connections);
  const connectionsAt = useDashboard((s) => s.connectionsAt);
  const now = useAsOf(1000);
  const c: ConnectionView | undefined = connections?.find((x) => x.resolverId === resolverId && x.state === 'open');
  if (!c) return null;
  const age = c.ageMs + (connectionsAt ? Math.max(0, now - connectionsAt) : 0);
  const how = [c.tlsVersion, c.resumed === null ? null : c.resumed ? 'resumed session' : 'full handshake'].filter(Boolean).join(', ');
  return (
    <p className="ladder-live" data-testid="ladder-live">
      <Icon name="check" className="good" /> Connected: connection #{c.id} to {c.address}
      {how ? ` (${how})` : ''}, open for {formatAge(Math.max(1000, age))}, carried {c.queriesCarried} {c.queriesCarried === 1 ? 'query' : 'queries'}.
    </p>
  );
}

export function NetworkView() {
  const status = useDashboard((s) => s.status);
  const hasOpen = useDashboard((s) => s.connections?.some((c) => c.resolverId === s.status?.resolver.id && c.state === 'open') ?? false);
  // Both cards show the local-names choice for this network: a change in one reloads the other.
  const [memoryRev, setMemoryRev] = useState(0);
  if (!status) return null;
  const remembered = (): void => setMemoryRev((r) => r + 1);
  // What the proxy remembers moves by itself too (a Wi-Fi switch, the plain-DNS verdict, a fact seen): its revision comes pushed with the status.
  const rev = `${memoryRev}.${status.networksRevision}`;
  const t = transportModel(status);
  const lines = ladderLines(status);
  const race = raceModel(status.race);
  const waiting = status.state === 'blocked' || status.state === 'degraded';
  const strict = status.mode === 'strict';
  return (
    <>
      <section className={`card transport-now transport-${t.transport ?? 'none'}`} aria-labelledby="net-transport">
        <h2 id="net-transport">Carrying your queries now</h2>
        <p className="transport-carrier" data-testid="transport-carrier">
          <Icon name={t.transport === null ? 'blocked' : 'shield-check'} /> {t.carrier}
          <span className="muted"> · {status.resolver.label}</span>
        </p>
        <p className="transport-why" data-testid="transport-why">
          {t.why}
        </p>
        {waiting && (
          <p className="transport-retry">
            <RetryNow />
          </p>
        )}
      </section>
      <section className="card" aria-labelledby="net-ladder">
        <header className="card-head">
          <h2 id="net-ladder">The fallback ladder, as it ran</h2>
        </header>
        <p className="muted small explain ladder-explain">
          dotstub tries DNS-over-TLS on port {status.resolver.port} first.{' '}
          {status.resolver.dohUrl
            ? `If this network blocks it, it uses DNS-over-HTTPS to the same resolver (${status.resolver.dohUrl}) and keeps checking port ${status.resolver.port} to return to it. `
            : `${status.resolver.label} has no DNS-over-HTTPS address, so there is no fallback if port ${status.resolver.port} is blocked. `}
          {strict
            ? 'Strict mode: never plain DNS, and never around a certificate that doesn’t verify.'
            : 'Opportunistic mode: plain DNS to the network’s resolver only if you allowed it in Settings.'}{' '}
          Shown since {status.resolver.label} was chosen or the network last changed.
        </p>
        <LiveConnection resolverId={status.resolver.id} />
        {lines.length === 0 ? (
          !hasOpen && <p className="empty">No connection attempts yet: the first opens with the next query.</p>
        ) : (
          <ol className="events ladder" aria-label="Fallback ladder, in the order tried">
            {lines.map((l) => (
              <li key={l.key} className={`event tone-${l.tone}`} data-testid="ladder-step">
                <span className="event-icon" aria-hidden="true">
                  <Icon name={l.tone === 'good' ? 'check' : 'x'} />
                </span>
                <div className="event-body">
                  <p className="event-title">
                    <span className="ladder-target">{l.target}</span>: <strong>{l.outcome}</strong>
                  </p>
                  {(l.detail || l.attempts) && (
                    <p className="event-detail">
                      {l.detail}
                      {l.detail && l.attempts ? ' ' : ''}
                      {l.attempts && `(${l.attempts})`}
                    </p>
                  )}
                </div>
                <time className="event-time mono" dateTime={new Date(l.at).toISOString()}>
                  {formatDateTime(l.at)}
                </time>
              </li>
            ))}
          </ol>
        )}
      </section>
      {race && (
        <section className="card" aria-labelledby="net-race" data-testid="address-race">
          <header className="card-head">
            <h2 id="net-race">Last race between the resolver’s addresses</h2>
          </header>
          <p className="muted small explain">
            When {status.resolver.label} has IPv6 and IPv4 addresses, dotstub tries IPv6 first and IPv4 a moment later (or at once if IPv6 fails), and
            keeps whichever authenticates first (Happy Eyeballs, RFC 8305). {race.summary}.
          </p>
          <ol className="events ladder" aria-label="Addresses tried in the last race">
            {race.lines.map((l) => (
              <li key={l.key} className={`event tone-${l.tone}`}>
                <span className="event-icon" aria-hidden="true">
                  <Icon name={l.tone === 'good' ? 'check' : l.tone === 'danger' ? 'x' : 'clock'} />
                </span>
                <div className="event-body">
                  <p className="event-title">
                    <span className="ladder-target">{l.family}</span>: <strong>{l.outcome}</strong>
                  </p>
                </div>
              </li>
            ))}
          </ol>
          <p className="muted small">at {formatDateTime(race.at)}</p>
        </section>
      )}
      <LocalNames rev={rev} onChange={remembered} />
      <RememberedNetworks rev={rev} onChange={remembered} />
      {status.network && (
        <section className="card" aria-labelledby="net-problem">
          <h2 id="net-problem">Last problem</h2>
          <p className="net-problem" data-testid="network-problem">
            {status.network.sentence}
          </p>
          <p className="muted small">
            {status.network.transport === 'doh' ? 'DNS-over-HTTPS' : 'DNS-over-TLS'} to {status.network.address}, at {formatDateTime(status.network.at)}:{' '}
            <span className="mono">{status.network.detail}</span> ({status.network.classification})
          </p>
        </section>
      )}
    </>
  );
}
