import { useEffect, useRef, useState, type RefObject } from 'react';
import type { ConnectionView, ResolverView, StatusView } from '../../../proxy/control/api-types.js';
import { formatAge, formatCount, formatPercent } from '../lib/format.js';
import { classicalWords, keyGroupWords } from '../../../proxy/control/api-client/key-agreement.js';
import { bannerState, sentence } from '../lib/banner.js';
import { hitGauges } from '../lib/gauges.js';
import { resolverLabel } from '../lib/query-row.js';
import { useAsOf, useDashboard } from '../state/context.js';
import { useSystemDns } from '../state/system-dns.js';
import { Gauge } from './Gauge.js';

/** The connection-hit gauges: the T-DNS paper's measure of how well reuse works. */
export function HitGauges() {
  const hit = useDashboard((s) => s.metrics?.hitFraction);
  const privacy = useDashboard((s) => s.status?.state);
  const pausedUntil = useSystemDns()?.pausedUntil ?? null;
  const state = privacy === undefined ? undefined : bannerState(privacy, pausedUntil);
  return (
    <div className="gauges">
      {hitGauges(hit, state).map((g) => (
        <Gauge key={g.label} model={g} />
      ))}
    </div>
  );
}

function ConnectionRow({ c, resolvers, age }: { c: ConnectionView; resolvers: readonly ResolverView[] | undefined; age: number }) {
  return (
    <tr data-testid="connection-row">
      <th scope="row" className="mono">
        #{c.id}
        {c.burst && (
          <div>
            <span className="pill pill-neutral" title="Opened because a burst of lookups needed more than one connection's first round trip; closes when idle">
              burst
            </span>
          </div>
        )}
      </th>
      <td>
        <div>{resolverLabel(resolvers, c.resolverId)}</div>
        <div className="muted small mono">{c.address}</div>
      </td>
      <td>
        <span className={`pill pill-${c.state === 'open' ? 'good' : 'neutral'}`}>{c.state}</span>
      </td>
      <td className="num">{formatAge(age)}</td>
      <td className="num">{formatCount(c.queriesCarried)}</td>
      <td className="num">{c.inFlight}</td>
      <td>
        {c.resumed === null ? (
          '—'
        ) : (
          <span className={`pill pill-${c.resumed ? 'good' : 'neutral'}`}>{c.resumed ? 'resumed' : 'full'}</span>
        )}
        {c.verified === false && <span className="pill pill-caution">unverified</span>}
      </td>
      <td>
        <div>{c.tlsVersion ?? '—'}</div>
        <div className="muted small mono">{c.cipher ?? ''}</div>
        {keyGroupWords(c.keyGroup) && (
          <div className="muted small" data-testid="key-agreement">
            Key agreement: {keyGroupWords(c.keyGroup)}
          </div>
        )}
        {c.classicalOnly && <div className="muted small">{classicalWords(c.classicalOnly)}</div>}
      </td>
      <td className="num">
        {c.keepaliveMs === null ? <span className="muted">not sent</span> : formatAge(c.keepaliveMs)}
        <div className="muted small">idle close {formatAge(c.idleTimeoutMs)}</div>
      </td>
    </tr>
  );
}

/** Every open connection, live: resolver, age, queries carried, in flight, handshake, TLS (key agreement too), keepalive. */
export function ConnectionsTable() {
  const connections = useDashboard((s) => s.connections);
  const connectionsAt = useDashboard((s) => s.connectionsAt);
  const resolvers = useDashboard((s) => s.resolvers);
  const now = useAsOf(1000);
  const elapsed = connectionsAt ? Math.max(0, now - connectionsAt) : 0;
  const wrap = useRef<HTMLDivElement>(null);
  const more = useMoreToTheRight(wrap);
  return (
    <>
      {/* Scrolls sideways in a narrow window: focusable so the keyboard can scroll it too; a cue says there is more (issue 24 item 7). */}
      <div className={`table-wrap${more ? ' more-right' : ''}`} role="region" aria-label="Open connections, scrollable" tabIndex={0} ref={wrap}>
        <table className="table" aria-label="Open connections">
          <thead>
            <tr>
              <th scope="col">Conn.</th>
              <th scope="col">Resolver</th>
              <th scope="col">State</th>
              <th scope="col" className="num">Age</th>
              <th scope="col" className="num">Queries carried</th>
              <th scope="col" className="num">In flight</th>
              <th scope="col">Handshake</th>
              <th scope="col">TLS</th>
              <th scope="col" className="num">Keepalive</th>
            </tr>
          </thead>
          <tbody>
            {connections.length === 0 ? (
              <tr>
                <td colSpan={9} className="empty">
                  No open connections. The next query opens one (resuming the TLS session if it can).
                </td>
              </tr>
            ) : (
              connections.map((c) => <ConnectionRow key={c.id} c={c} resolvers={resolvers?.resolvers} age={c.ageMs + elapsed} />)
            )}
          </tbody>
        </table>
      </div>
      {more && (
        <p className="scroll-cue muted small" data-testid="scroll-cue">
          More columns: scroll sideways →
        </p>
      )}
    </>
  );
}

/** True while `ref`'s content runs past its right edge (a narrow window, not yet scrolled to the end). */
function useMoreToTheRight(ref: RefObject<HTMLElement | null>): boolean {
  const [more, setMore] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const check = (): void => setMore(el.scrollLeft + el.clientWidth < el.scrollWidth - 2);
    check();
    el.addEventListener('scroll', check, { passive: true });
    const ro = new ResizeObserver(check);
    ro.observe(el);
    if (el.firstElementChild) ro.observe(el.firstElementChild);
    return () => {
      el.removeEventListener('scroll', check);
      ro.disconnect();
    };
  }, [ref]);
  return more;
}

function dnssecWord(d: StatusView['dnssec']): string {
  if (d === null) return 'not measured';
  return d.state === 'validated' ? 'validated' : d.state === 'not-validated' ? 'not validated' : 'not measured yet';
}

/** Counters that explain the cost of privacy: handshakes, reordering, retries, padding. */
export function ConnectionStats() {
  const metrics = useDashboard((s) => s.metrics);
  const counters = useDashboard((s) => s.counters);
  const dnssec = useDashboard((s) => s.status?.dnssec ?? null);
  const items: [string, string, string][] = [
    ['Full handshakes', formatCount(metrics?.handshakes.full ?? counters?.handshakesFull ?? 0), 'New TLS sessions (3 round trips with TLS 1.3)'],
    ['Resumed handshakes', formatCount(metrics?.handshakes.resumed ?? counters?.handshakesResumed ?? 0), 'Reconnects that skipped the key exchange'],
    ['Connections for bursts', formatCount(counters?.burstConnections ?? 0), 'Extra connections opened so a page’s many lookups arrive in one round trip'],
    ['Out-of-order answers', formatCount(metrics?.outOfOrder ?? counters?.outOfOrder ?? 0), 'Answers matched by ID, not order: no head-of-line blocking'],
    ['Retries', formatCount(metrics?.retries ?? counters?.retries ?? 0), 'Queries resent after a connection dropped'],
    ['SERVFAILs', formatCount(metrics?.servfails ?? counters?.servfails ?? 0), 'Answers the proxy had to fail'],
    ['Padding overhead', formatPercent(metrics?.padding.overhead ?? null), 'Extra bytes so query sizes don’t reveal names'],
    // What every encrypted query carries (proxy/dns/upstream-query.ts), not a count.
    ['Your subnet', 'never sent', 'Each lookup carries EDNS Client Subnet with prefix 0: the resolver is asked not to pass your network’s address on to websites’ DNS servers'],
    // Measured once per resolver (proxy/privacy/dnssec-check.ts); programs get "validated" (AD) only from a verified connection.
    ['DNSSEC', dnssecWord(dnssec), dnssec ? sentence(dnssec.sentence) : 'Not measured in this run'],
  ];
  return (
    <dl className="stat-list">
      {items.map(([k, v, help]) => (
        <div key={k} title={help}>
          <dt>{k}</dt>
          <dd className="mono">{v}</dd>
          <dd className="muted small">{help}</dd>
        </div>
      ))}
    </dl>
  );
}
