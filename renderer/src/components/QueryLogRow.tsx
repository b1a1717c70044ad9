import { memo } from 'react';
import type { QueryRecord } from '../../../proxy/control/api-types.js';
import { formatClock, formatLatencyUs } from '../lib/format.js';
import { blockedWords, connectionText, hedgeText, resolverCellText, routeWords, rowFlags } from '../lib/query-row.js';
import { Icon } from './Icon.js';

export interface RowProps {
  readonly r: QueryRecord;
  readonly id: string;
  readonly index: number;
  readonly top: number;
  readonly active: boolean;
  readonly selected: boolean;
  readonly slowUs: number;
  readonly resolver: string;
  readonly onPick: (index: number) => void;
}

/** One row of the query log grid (memoised: the grid re-renders on every batch, rows only when their record or state changes). */
export const Row = memo(function Row({ r, id, index, top, active, selected, slowUs, resolver, onPick }: RowProps) {
  const { slow, bad, newConnection } = rowFlags(r, slowUs);
  // Not sent to the chosen encrypted resolver: marked on the name (seen at every width), the link and server on hover.
  const route = routeWords(r.route);
  const routeTitle = route ? `${route.sentence}${route.where ? ` (${route.where})` : ''}` : undefined;
  // Sent again after its connection went silent: the connection that answered and the mark in the cell (new or reused
  // would not fit beside it), the whole story on hover and in the detail.
  const hedge = hedgeText(r);
  // Blocked (the resolver said so, or answered 0.0.0.0): the words on the name, cut to fit, whole on hover.
  const blocked = blockedWords(r, resolver);
  const nameTitle = [r.name ?? (routeTitle || blocked ? '(name not recorded)' : undefined), routeTitle, blocked?.sentence].filter(Boolean).join(': ') || undefined;
  return (
    <div
      id={id}
      role="row"
      aria-rowindex={index + 2}
      aria-selected={selected}
      className={`log-row${active ? ' active' : ''}${selected ? ' selected' : ''}${index % 2 ? ' odd' : ''}`}
      style={{ transform: `translateY(${top}px)` }}
      onClick={() => onPick(index)}
    >
      <span role="gridcell" className="c-time mono">
        {formatClock(r.startedAt)}
      </span>
      <span role="gridcell" className={`c-name mono${r.name === null ? ' muted' : ''}`} title={nameTitle}>
        <span className="c-name-text">{r.name ?? '(name not recorded)'}</span>
        {route && (
          <span className={`route-badge route-${route.kind}`} data-testid="route-badge">
            {route.kind === 'link' && <Icon name="unlocked" />}
            {route.badge}
            <span className="sr-only">{route.rest}</span>
          </span>
        )}
        {blocked && (
          <span className={`block-badge block-${blocked.kind}`} data-testid="block-badge">
            <Icon name="error" />
            <span className="block-words">{blocked.badge}</span>
          </span>
        )}
      </span>
      <span role="gridcell" className="c-type mono">
        {r.type}
      </span>
      <span role="gridcell" className={`c-rcode mono${bad ? ' rcode-bad' : ''}`}>
        {bad && <Icon name="error" />}
        {r.rcode}
      </span>
      <span role="gridcell" className={`c-latency mono${slow ? ' slow' : ''}`}>
        {formatLatencyUs(r.latencyUs)}
        {slow && <span className="sr-only"> (slow)</span>}
      </span>
      <span role="gridcell" className={`c-conn${newConnection && !route ? ' conn-new' : ''}${route?.kind === 'link' ? ' conn-plain' : ''}`} title={hedge ? `Sent again ${hedge}` : undefined}>
        {hedge ? (r.connectionId === null ? 'no answer' : `#${r.connectionId}`) : connectionText(r)}
        {hedge && <span className="conn-hedge"> · sent again</span>}
      </span>
      <span role="gridcell" className="c-resolver" title={route?.where ?? undefined}>
        {resolverCellText(r, resolver)}
      </span>
    </div>
  );
});
