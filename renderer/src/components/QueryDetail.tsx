import { useEffect, useId, useRef } from 'react';
import type { QueryRecord } from '../../../proxy/control/api-types.js';
import { formatLatencyUs } from '../lib/format.js';
import { blockedWords, detailFacts, routeWords } from '../lib/query-row.js';
import { timingBreakdown } from '../lib/timing.js';
import { Icon } from './Icon.js';

/** One query's detail panel: where its time went, and its facts. */
export function QueryDetail({ r, resolver, handshakeMs, onClose }: { r: QueryRecord; resolver: string; handshakeMs: number | null; onClose: () => void }) {
  const segments = timingBreakdown(r, handshakeMs);
  const headingId = useId();
  const facts = detailFacts(r, resolver);
  const route = routeWords(r.route);
  const blocked = blockedWords(r, resolver);
  const back = useRef<HTMLButtonElement>(null);
  // Narrow (the tray popover): the detail is a full-height sheet over the log; the keyboard goes to its Back.
  useEffect(() => {
    if (window.matchMedia('(max-width: 560px)').matches) back.current?.focus();
  }, []);
  return (
    <aside className="detail" aria-labelledby={headingId}>
      <button ref={back} type="button" className="btn btn-small detail-back" onClick={onClose}>
        ← Back to the log
      </button>
      <header className="detail-head">
        <h2 id={headingId} className="mono">
          {r.name ?? '(name not recorded)'} <span className="muted">{r.type}</span>
        </h2>
        <button type="button" className="btn btn-ghost" onClick={onClose} aria-label="Close query details">
          <Icon name="x" />
        </button>
      </header>
      {route && (
        <p className={`notice route-notice route-${route.kind}`} data-testid="route-notice">
          <Icon name={route.kind === 'link' ? 'unlocked' : 'check'} />
          <span>
            {route.sentence}
            {route.where && <span className="route-where"> ({route.where})</span>}
          </span>
        </p>
      )}
      {blocked && (
        <p className="notice block-notice" data-testid="block-notice">
          <Icon name="error" />
          <span>{blocked.sentence}</span>
        </p>
      )}
      <p className="detail-total">
        <span className="big mono">{formatLatencyUs(r.latencyUs)}</span> <span className="muted">total, as the client saw it</span>
      </p>
      <h3 className="subhead">Where the time went</h3>
      <div className="timing-bar" aria-hidden="true">
        {segments
          .filter((s) => s.share > 0)
          .map((s) => (
            <span key={s.key} className={`seg seg-${s.key}`} style={{ flexGrow: Math.max(s.share, 0.01) }} />
          ))}
      </div>
      <table className="timing-table" aria-label="Timing breakdown">
        <tbody>
          {segments.map((s) => (
            <tr key={s.key}>
              <th scope="row">
                <span className={`swatch seg-${s.key}`} aria-hidden="true" />
                {s.label}
              </th>
              <td className="num mono">{formatLatencyUs(s.us)}</td>
              <td className="num muted">{Math.round(s.share * 100)}%</td>
            </tr>
          ))}
        </tbody>
      </table>
      <dl className="facts">
        {facts.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
    </aside>
  );
}
