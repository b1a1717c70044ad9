import { useMemo, useState } from 'react';
import { formatDateTime } from '../lib/format.js';
import { resolverLabel } from '../lib/query-row.js';
import { storyline, type EventKind } from '../lib/storyline.js';
import { useDashboard } from '../state/context.js';
import { Icon } from './Icon.js';

type Kind = EventKind;
const KINDS: { value: Kind; label: string }[] = [
  { value: 'all', label: 'All' },
  { value: 'state', label: 'Privacy' },
  { value: 'connection', label: 'Connections' },
  { value: 'resolver', label: 'Resolver switches' },
  { value: 'settings', label: 'Settings' },
  { value: 'captive', label: 'Wi-Fi sign-in' },
];

/** Connection opens/closes, resumptions, resets and privacy-state changes, newest first. */
export function Timeline({ limit }: { limit?: number }) {
  const events = useDashboard((s) => s.events);
  const resolvers = useDashboard((s) => s.resolvers);
  const [kind, setKind] = useState<Kind>('all');
  const [hideKeepalive, setHideKeepalive] = useState(true);
  const lines = useMemo(
    () => storyline(events, (id) => resolverLabel(resolvers?.resolvers, id), { kind, hideKeepalive, limit }),
    [events, resolvers, kind, hideKeepalive, limit],
  );

  return (
    <div className="timeline">
      {limit === undefined && (
        <div className="toolbar" role="group" aria-label="Show events">
          <div className="segmented" role="group" aria-label="Event kind">
            {KINDS.map((k) => (
              <button
                key={k.value}
                type="button"
                aria-pressed={kind === k.value}
                className={kind === k.value ? 'on' : ''}
                onClick={() => setKind(k.value)}
              >
                {k.label}
              </button>
            ))}
          </div>
          <label className="inline-field check">
            <input type="checkbox" checked={hideKeepalive} onChange={(e) => setHideKeepalive(e.target.checked)} />
            <span>Hide keepalive notices</span>
          </label>
        </div>
      )}
      {lines.length === 0 ? (
        <p className="empty">No events yet.</p>
      ) : (
        <ol className="events" aria-label="Events, newest first">
          {lines.map(({ key, line }) => (
            <li key={key} className={`event tone-${line.tone}`}>
              <span className="event-icon" aria-hidden="true">
                <Icon name={line.icon} />
              </span>
              <div className="event-body">
                <p className="event-title">{line.title}</p>
                {line.detail && <p className="event-detail">{line.detail}</p>}
              </div>
              <time className="event-time mono" dateTime={new Date(line.at).toISOString()}>
                {formatDateTime(line.at)}
              </time>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
