import { useId, useState } from 'react';
import { EMPTY_FILTER, isFilterActive, type BlockedChoice, type QueryFilter, type RouteChoice } from '../lib/filters.js';
import { Icon } from './Icon.js';

export interface QueryLogToolbarProps {
  readonly filter: QueryFilter;
  readonly onFilter: (f: QueryFilter) => void;
  /** Record types and response codes offered in the selects. */
  readonly types: readonly string[];
  readonly rcodes: readonly string[];
  readonly paused: boolean;
  readonly onPause: () => void;
}

/** The query log's filters and its Pause/Resume button. */
export function QueryLogToolbar({ filter, onFilter, types, rcodes, paused, onPause }: QueryLogToolbarProps) {
  // Below 560 px the filters other than the name wait behind this button (CSS decides when it shows), so the log's rows fit the first screen.
  const [open, setOpen] = useState(false);
  const moreId = useId();
  const folded = [filter.type !== '', filter.rcode !== '', (filter.route ?? '') !== '', (filter.blocked ?? '') !== '', filter.slowOnly, filter.showOwn].filter(Boolean).length;
  return (
    <form className="toolbar" role="search" aria-label="Filter the query log" onSubmit={(e) => e.preventDefault()}>
      <div className="search-box">
        <Icon name="search" />
        <input
          type="search"
          aria-label="Filter by name"
          placeholder="Filter by name…"
          value={filter.name}
          onChange={(e) => onFilter({ ...filter, name: e.target.value })}
        />
      </div>
      <button type="button" className="btn filters-toggle" aria-expanded={open} aria-controls={moreId} onClick={() => setOpen(!open)}>
        <Icon name="search" /> Filters{folded > 0 ? ` (${folded})` : ''}
      </button>
      <div className="filters-more" id={moreId} data-open={open ? '' : undefined}>
        <label className="inline-field">
          <span>Type</span>
          <select aria-label="Filter by type" value={filter.type} onChange={(e) => onFilter({ ...filter, type: e.target.value })}>
            <option value="">Any</option>
            {types.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label className="inline-field">
          <span>Response</span>
          <select aria-label="Filter by response code" value={filter.rcode} onChange={(e) => onFilter({ ...filter, rcode: e.target.value })}>
            <option value="">Any</option>
            {rcodes.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label className="inline-field">
          <span>Sent to</span>
          <select aria-label="Filter by where it was sent" value={filter.route ?? ''} onChange={(e) => onFilter({ ...filter, route: e.target.value as RouteChoice })}>
            <option value="">Anywhere</option>
            <option value="link">Local names</option>
            <option value="answered">Answered here</option>
            <option value="refused">Refused here</option>
          </select>
        </label>
        <label className="inline-field">
          <span>Blocked</span>
          <select aria-label="Filter by whether it was blocked" value={filter.blocked ?? ''} onChange={(e) => onFilter({ ...filter, blocked: e.target.value as BlockedChoice })}>
            <option value="">Any answer</option>
            <option value="any">Blocked, either way</option>
            <option value="resolver">Blocked by your resolver</option>
            <option value="null-address">Answered 0.0.0.0 or ::</option>
          </select>
        </label>
        <label className="inline-field check">
          <input type="checkbox" checked={filter.slowOnly} onChange={(e) => onFilter({ ...filter, slowOnly: e.target.checked })} />
          <span>Slow only</span>
        </label>
        <label className="inline-field">
          <span className="sr-only">Slow means at least (ms)</span>
          <span aria-hidden="true">≥</span>
          <input
            className="num-input"
            type="number"
            min={0}
            step={10}
            aria-label="Slow threshold in milliseconds"
            value={filter.slowMs}
            onChange={(e) => onFilter({ ...filter, slowMs: Math.max(0, Number(e.target.value) || 0) })}
          />
          <span aria-hidden="true">ms</span>
        </label>
        <label className="inline-field check">
          <input type="checkbox" checked={filter.showOwn} onChange={(e) => onFilter({ ...filter, showOwn: e.target.checked })} />
          <span>Show dotstub’s own checks</span>
        </label>
      </div>
      {isFilterActive(filter) && (
        <button type="button" className="btn btn-ghost" onClick={() => onFilter({ ...EMPTY_FILTER, slowMs: filter.slowMs, showOwn: filter.showOwn })}>
          <Icon name="x" /> Clear filters
        </button>
      )}
      <span className="toolbar-spacer" />
      <button
        type="button"
        className={`btn${paused ? ' btn-primary' : ''}`}
        aria-pressed={paused}
        onClick={onPause}
      >
        {paused ? <Icon name="play" /> : <Icon name="pause" />}
        {paused ? 'Resume' : 'Pause'}
      </button>
    </form>
  );
}
