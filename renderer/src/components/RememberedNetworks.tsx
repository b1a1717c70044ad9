import { useEffect, useState } from 'react';
import { api } from '../api/client.js';
import type { NetworksView, RememberedNetworkView } from '../../../proxy/control/api-types.js';
import { formatDateTime } from '../lib/format.js';
import { ownResolverWords } from '../lib/own-resolver-words.js';
import { port53Words } from '../lib/port53-words.js';
import { SettingsTransfer } from './SettingsTransfer.js';
import { Outcome } from './Outcome.js';

/** What a network did to port 853, in words (network/classify.ts's kinds). */
const PORT_853: Record<NonNullable<RememberedNetworkView['port853']>['kind'], string> = {
  dropped: 'no answer there (blocked)',
  refused: 'refused there',
  unreachable: 'could not be reached from there',
  'reset-after-hello': 'connections were cut there (filtering)',
  'handshake-stall': 'encrypted connections stalled there',
  intercepted: 'intercepted there (a certificate from an unknown issuer)',
  'name-mismatch': 'intercepted there (a certificate for another name)',
  resigned: 're-signed there by a security product',
  'not-tls': 'something other than TLS answered there',
  other: 'failed there',
};

const CHOICE_WORDS: Record<RememberedNetworkView['localNames'], string> = {
  ask: 'Not decided',
  allow: 'Allowed (unencrypted)',
  deny: 'Never sent',
};

function worked(n: RememberedNetworkView): string {
  if (n.worked === 'dot') return 'DNS-over-TLS';
  if (n.worked === 'doh') return n.port853 ? 'DNS-over-HTTPS; a rejoin starts there at once' : 'DNS-over-HTTPS';
  return 'nothing verified yet';
}

function when(iso: string | null): string {
  if (!iso) return 'unknown';
  // "26 Nov 03:53" (the page's date format, to the minute).
  return formatDateTime(Date.parse(iso), 'min');
}

/**
 * "Networks dotstub remembers" (issue 21, item 3): per network, what worked
 * there (a rejoin of one where port 853 was blocked starts on DNS-over-HTTPS
 * at once), the round trip, its local domains, and the user's local-names
 * choice, editable; "Forget this network". The one we're on comes first and
 * is marked. The choices go out with a settings export.
 */
export function RememberedNetworks({ rev, onChange }: { readonly rev: string; readonly onChange: () => void }) {
  const [view, setView] = useState<NetworksView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    const load = (): void => {
      api.networks().then(
        (v) => live && setView(v),
        (e: unknown) => live && setError(e instanceof Error ? e.message : String(e)),
      );
    };
    // Read again whenever the proxy says what it remembers moved (`rev` follows the pushed status's networksRevision): a Wi-Fi switch, a verdict, a fact.
    load();
    return () => {
      live = false;
    };
  }, [rev]);

  const act = (key: string, what: Promise<unknown>): void => {
    setBusy(key);
    setError(null);
    setNote(null);
    what.then(
      () => onChange(),
      (e: unknown) => setError(e instanceof Error ? e.message : String(e)),
    ).finally(() => {
      setBusy(null);
      setConfirming(null);
    });
  };
  if (!view) return error ? <p role="alert" className="error-text">{error}</p> : null;
  if (!view.remembering) return null;
  const networks = [...view.networks].sort((a, b) => Number(b.current) - Number(a.current));
  return (
    <section className="card" aria-labelledby="net-memory" data-testid="network-memory">
      <header className="card-head">
        <h2 id="net-memory">Networks dotstub remembers</h2>
        <span className="muted small">
          {networks.length} of at most {view.max}
        </span>
      </header>
      <p className="muted small">
        What worked on each network, so coming back starts there (on DNS-over-HTTPS at once where port 853 was blocked, still re-trying 853 in the
        background), and your choice for its local names. Kept on this computer only, under a hash of the gateway’s hardware address.
      </p>
      {networks.length === 0 ? (
        <p className="empty">No network remembered yet.</p>
      ) : (
        <ul className="memory-list">
          {networks.map((n) => {
            const port53 = port53Words(n, view.dnsCheck);
            const own = ownResolverWords(n.ownResolver, view.ddrCheck);
            return (
              <li key={n.key} className={n.current ? 'memory-item current' : 'memory-item'} aria-current={n.current ? 'true' : undefined} data-testid="remembered-network">
                <div className="memory-head">
                  <strong className="memory-label">{n.label}</strong>
                  {n.current && <span className="pill pill-good">This network</span>}
                  {port53.kind === 'rewrites' && <span className="pill pill-caution">Rewrites DNS</span>}
                  {own.kind === 'offer' && <span className="pill pill-good">Offers encrypted DNS</span>}
                  {/* The network in use is seen now: its stored "last seen" is when dotstub last wrote it down. */}
                  <span className="muted small">{n.current ? 'in use now' : `last seen ${when(n.seenAt)}`}</span>
                </div>
                <dl className="memory-facts">
                  <div>
                    <dt>What worked</dt>
                    <dd>{worked(n)}</dd>
                  </div>
                  {n.port853 && (
                    <div>
                      <dt>Port 853</dt>
                      <dd>{PORT_853[n.port853.kind]}</dd>
                    </div>
                  )}
                  {n.nat64 && (
                    <div className="memory-fact-wide" data-testid="nat64">
                      <dt>IPv4</dt>
                      <dd>
                        {n.nat64.how === 'ipv4only.arpa'
                          ? `None of its own: IPv4 resolvers are reached through this network’s NAT64, ${n.nat64.prefix}`
                          : `None of its own: IPv4 resolvers are tried through the well-known NAT64 prefix, ${n.nat64.prefix}`}
                        <span className="muted small memory-fact-detail">{n.nat64.detail}</span>
                      </dd>
                    </div>
                  )}
                  <div>
                    <dt>Round trip</dt>
                    <dd>{n.rttMs === null ? 'not measured yet' : `${n.rttMs} ms (median)`}</dd>
                  </div>
                  <div>
                    <dt>Local domains</dt>
                    <dd className={n.localDomains.length ? 'mono' : undefined}>{n.localDomains.length ? n.localDomains.join(', ') : 'none'}</dd>
                  </div>
                  {n.portal && (
                    <div>
                      <dt>Sign-in page</dt>
                      <dd>{n.portal.signedIn ? 'seen, signed in' : 'seen'}</dd>
                    </div>
                  )}
                  <div className={port53.detail ? 'memory-fact-wide' : undefined} data-testid="port53" data-kind={port53.kind}>
                    <dt>Plain DNS (port 53)</dt>
                    <dd>
                      {port53.kind === 'rewrites' ? <strong>{port53.text}</strong> : port53.text}
                      {port53.detail && <span className="muted small memory-fact-detail">{port53.detail}</span>}
                    </dd>
                  </div>
                  <div className="memory-fact-wide" data-testid="own-resolver" data-kind={own.kind}>
                    <dt>Its own encrypted resolver</dt>
                    <dd>
                      {own.kind === 'offer' || own.kind === 'in-use' ? <strong>{own.text}</strong> : own.text}
                      {own.detail && <span className="muted small memory-fact-detail">{own.detail}</span>}
                    </dd>
                  </div>
                </dl>
                <div className="memory-actions">
                  {(own.kind === 'offer' || own.kind === 'in-use' || own.kind === 'chosen') && (
                    <button
                      type="button"
                      className={own.kind === 'offer' ? 'btn btn-small' : 'btn btn-small btn-ghost'}
                      disabled={busy === n.key}
                      onClick={() => act(n.key, api.setNetworkOwnResolver(n.key, own.kind === 'offer' ? 'use' : 'ask'))}
                    >
                      {own.kind === 'offer' ? 'Use it on this network' : 'Stop using it here'}
                    </button>
                  )}
                  <label className="memory-choice">
                    <span title="Names this network owns (printer.lan, a VPN's intranet): sent to its own resolver, unencrypted, or never">Local names</span>
                    <select
                      value={n.localNames}
                      disabled={busy === n.key}
                      aria-label={`Local names on ${n.label}`}
                      onChange={(e) => act(n.key, api.setNetworkLocalNames(n.key, e.target.value as RememberedNetworkView['localNames']))}
                    >
                      {(['ask', 'allow', 'deny'] as const).map((c) => (
                        <option key={c} value={c}>
                          {CHOICE_WORDS[c]}
                        </option>
                      ))}
                    </select>
                  </label>
                  {confirming === n.key ? (
                    <span className="memory-confirm" role="group" aria-label={`Forget ${n.label}?`}>
                      <span>{n.current ? 'Forget it? dotstub starts learning it again, as you are on it.' : 'Forget everything about it?'}</span>
                      <button type="button" className="btn btn-small" disabled={busy === n.key} onClick={() => act(n.key, api.forgetNetwork(n.key))}>
                        Forget
                      </button>
                      <button type="button" className="btn btn-small btn-ghost" onClick={() => setConfirming(null)}>
                        Keep
                      </button>
                    </span>
                  ) : (
                    <button type="button" className="btn btn-small btn-ghost" aria-label={`Forget this network: ${n.label}`} onClick={() => setConfirming(n.key)}>
                      Forget this network
                    </button>
                  )}
                </div>
              </li>
              );
          })}
        </ul>
      )}
      {view.waiting > 0 && (
        <p className="muted small" data-testid="memory-waiting">
          {view.waiting} imported {view.waiting === 1 ? 'choice waits for a network' : 'choices wait for networks'} this computer hasn’t been on yet (not listed until it
          joins {view.waiting === 1 ? 'it' : 'one'}).
        </p>
      )}
      <SettingsTransfer lead="Your choices for these networks go with a settings export (in Settings too)." onImported={onChange} />
      <Outcome note={note} error={error} />
    </section>
  );
}
