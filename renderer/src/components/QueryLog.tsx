import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useDeferredValue, useEffect, useId, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { QueryRecord, ResolverView } from '../../../proxy/control/api-types.js';
import { exportFilename } from '../../../proxy/control/api-client/query-export.js';
import { shownRecords, toCsv, toJson } from '../lib/export.js';
import { blockedFromHash, compileFilter, EMPTY_FILTER, FilteredIndex, isFilterActive, routeFromHash, type QueryFilter } from '../lib/filters.js';
import { formatCount } from '../lib/format.js';
import { gridKey, rowsPerPage } from '../lib/grid-keys.js';
import { resolverLabel } from '../lib/query-row.js';
import { useDashboard, useReach, useStore } from '../state/context.js';
import { Icon } from './Icon.js';
import { QueryDetail } from './QueryDetail.js';
import { Row } from './QueryLogRow.js';
import { QueryLogToolbar } from './QueryLogToolbar.js';
import { download } from '../lib/download.js';

const ROW_HEIGHT = 32;
const rowHeight = (): number => ROW_HEIGHT;
const COMMON_TYPES = ['A', 'AAAA', 'CNAME', 'HTTPS', 'MX', 'NS', 'PTR', 'SOA', 'SRV', 'TXT'];
const COMMON_RCODES = ['NOERROR', 'NXDOMAIN', 'SERVFAIL', 'REFUSED', 'FORMERR'];

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort();
}

/** The live query log: virtualised (100,000 rows), filterable, pausable; a row opens its timing breakdown. */
export function QueryLog() {
  const store = useStore();
  const logVersion = useDashboard((s) => s.logVersion);
  const resolverViews = useDashboard((s) => s.resolvers);
  const seenTypes = useDashboard((s) => s.types);
  const seenRcodes = useDashboard((s) => s.rcodes);
  const skipped = useDashboard((s) => s.skipped);
  const recordNames = useDashboard((s) => s.settings?.recordNames ?? true);
  const reachNow = useReach();
  const uid = useId();
  // The banner links here with `#/queries?route=link` (the Overview with `?blocked=resolver`): the log opens filtered to those rows, and follows the link when already open.
  const [filter, setFilter] = useState<QueryFilter>(() => ({ ...EMPTY_FILTER, route: routeFromHash(window.location.hash), blocked: blockedFromHash(window.location.hash) }));
  useEffect(() => {
    const onHash = (): void => {
      const route = routeFromHash(window.location.hash);
      if (route) setFilter((f) => ({ ...f, route }));
      const blocked = blockedFromHash(window.location.hash);
      if (blocked) setFilter((f) => ({ ...f, blocked }));
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  // Typing in the name box re-filters 100k rows; let keystrokes win.
  const deferredFilter = useDeferredValue(filter);
  const [pausedAt, setPausedAt] = useState<number | null>(null);
  const [activeIndex, setActiveIndex] = useState(0);
  const [selected, setSelected] = useState<QueryRecord | null>(null);
  // The grid is its own scroll container (so the keyboard reaches it) with a sticky header row above the rows.
  const gridRef = useRef<HTMLDivElement>(null);
  const scrollRef = gridRef;
  const index = useRef<FilteredIndex | null>(null);

  const predicate = useMemo(() => compileFilter(deferredFilter), [deferredFilter]);
  index.current ??= new FilteredIndex(predicate);
  const idx = index.current;
  const lastPredicate = useRef(predicate);
  if (lastPredicate.current !== predicate) {
    idx.setPredicate(predicate);
    lastPredicate.current = predicate;
  }
  // Cheap: only records pushed since the last render are tested.
  idx.sync(store.queries);
  void logVersion;

  const end = pausedAt === null ? idx.end : idx.endBefore(pausedAt);
  const count = Math.max(0, end - idx.start);
  const newWhilePaused = pausedAt === null ? 0 : store.queries.total - pausedAt;
  const abs = (i: number): number | undefined => idx.absoluteAt(end - 1 - i);

  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: rowHeight,
    overscan: 6,
    scrollMargin: ROW_HEIGHT,
    // The sticky header row covers the grid's first 32 px: a row scrolled to must land below it, not under it.
    scrollPaddingStart: ROW_HEIGHT,
    // Index keys: a custom getItemKey would make the virtualizer re-key all
    // 100,000 rows on every render (every scroll frame).
  });

  // Newest rows arrive at the top: if the reader has scrolled down, selected
  // a row or put the keyboard in the grid, keep the rows they are reading
  // still instead of letting them slide away, and count what arrived above
  // ("N new", which takes them back to the top).
  const prevEnd = useRef(end);
  const selectedRef = useRef(selected);
  selectedRef.current = selected;
  const focused = useRef(false);
  // Home or "show newest": the newest row stays on top as rows arrive, keyboard in the grid or not.
  const following = useRef(true);
  const [above, setAbove] = useState(0);
  useLayoutEffect(() => {
    const added = end - prevEnd.current;
    prevEnd.current = end;
    if (added <= 0) return;
    const el = scrollRef.current;
    const hold = el !== null && !following.current && (el.scrollTop > ROW_HEIGHT || selectedRef.current !== null || focused.current);
    if (hold) {
      el.scrollTop += added * ROW_HEIGHT;
      setAbove((n) => n + added);
    }
    setActiveIndex((a) => (a > 0 || hold ? a + added : a));
  }, [end]);
  const showNewest = (): void => {
    following.current = true;
    setAbove(0);
    setSelected(null);
    setActiveIndex(0);
    const el = scrollRef.current;
    if (el) el.scrollTop = 0;
  };
  const onScroll = (): void => {
    const el = scrollRef.current;
    // Scrolled down to read: stop following (rows then hold still and "N new" counts above).
    if (el && el.scrollTop > ROW_HEIGHT) following.current = false;
    // Cheap on every scroll frame: only when there is a cue to clear.
    if (above > 0 && el && el.scrollTop <= ROW_HEIGHT / 2 && selectedRef.current === null && !focused.current) setAbove(0);
  };
  const [clearing, setClearing] = useState<'ask' | 'busy' | null>(null);
  const [cleared, setCleared] = useState<string | null>(null);
  const clearLog = async (): Promise<void> => {
    setClearing('busy');
    try {
      const n = store.queries.size;
      await store.clearLog();
      setSelected(null);
      setAbove(0);
      setActiveIndex(0);
      if (pausedAt !== null) setPausedAt(store.queries.total);
      setCleared(`Cleared ${formatCount(n)} ${n === 1 ? 'query' : 'queries'}.`);
    } catch (err) {
      setCleared(`Couldn’t clear the log: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setClearing(null);
    }
  };

  useEffect(() => {
    if (activeIndex >= count && count > 0) setActiveIndex(count - 1);
  }, [count, activeIndex]);

  const resolvers: readonly ResolverView[] | undefined = resolverViews?.resolvers;
  const slowUs = filter.slowMs * 1000;
  const types = useMemo(() => union(COMMON_TYPES, seenTypes), [seenTypes]);
  const rcodes = useMemo(() => union(COMMON_RCODES, seenRcodes), [seenRcodes]);

  const pick = (i: number): void => {
    following.current = false;
    setActiveIndex(i);
    const a = abs(i);
    const r = a === undefined ? undefined : store.queries.atAbsolute(a);
    if (r) setSelected(r);
    gridRef.current?.focus({ preventScroll: true });
  };

  const pickRef = useRef(pick);
  pickRef.current = pick;
  const stablePick = useCallback((i: number) => pickRef.current(i), []);

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>): void => {
    const action = gridKey(e.key, activeIndex, count, rowsPerPage(scrollRef.current?.clientHeight ?? 300, ROW_HEIGHT, ROW_HEIGHT));
    if (action === null) return;
    e.preventDefault();
    if (action.kind === 'close') setSelected(null);
    else if (action.kind === 'open') pick(action.index);
    else if (action.kind === 'newest') {
      // The detail stays open if one is (Escape closes it); the log follows live again.
      following.current = true;
      setAbove(0);
      setActiveIndex(0);
      const el = scrollRef.current;
      if (el) el.scrollTop = 0;
    } else {
      following.current = action.index === 0 && selectedRef.current === null;
      setActiveIndex(action.index);
      virtualizer.scrollToIndex(action.index, { align: 'auto' });
    }
  };

  // The rows counted above, as the file: same filter, same pause point, resolver names.
  const exportShown = (format: 'csv' | 'json'): void => {
    const rows = shownRecords(idx, end, store.queries);
    if (format === 'csv') download(toCsv(rows, resolvers), 'text/csv;charset=utf-8', exportFilename('csv', Date.now()));
    else download(toJson(rows, resolvers), 'application/json', exportFilename('json', Date.now()));
  };

  const activeAbs = abs(activeIndex);
  const emptyText =
    reachNow === 'signed-out'
      ? 'Not signed in: the query log can’t be read (see above).'
      : store.queries.size > 0
        ? 'No queries match these filters.'
        : reachNow === 'lost'
          ? 'Can’t reach dotstub: no queries to show.'
          : 'No queries yet. Look something up on this machine and it appears here.';
  const items = virtualizer.getVirtualItems();
  // Only a row that is in the page can be the active descendant (the list is virtualised).
  const activeRendered = count > 0 && activeAbs !== undefined && items.some((v) => v.index === activeIndex);

  return (
    <div className={`querylog${selected ? ' with-detail' : ''}`}>
      <div className="log-main">
        <QueryLogToolbar
          filter={filter}
          onFilter={setFilter}
          types={types}
          rcodes={rcodes}
          paused={pausedAt !== null}
          onPause={() => setPausedAt(pausedAt === null ? store.queries.total : null)}
        />
        <div className="log-summary">
          {/* The count changes several times a second: visible, not announced. */}
          <span data-testid="log-count">
            {formatCount(count)} {count === 1 ? 'query' : 'queries'}
            {isFilterActive(deferredFilter) ? ` match (of ${formatCount(store.queries.size)} held)` : ' held'}
          </span>
          <span role="status">
            {pausedAt !== null && (
              <span className="pill pill-caution">
                <Icon name="pause" /> Paused · {formatCount(newWhilePaused)} new
              </span>
            )}
          </span>
          {pausedAt === null && above > 0 && (
            <button type="button" className="btn btn-small new-cue" onClick={showNewest} data-testid="new-cue">
              ↑ {formatCount(above)} new — show newest
            </button>
          )}
          {cleared && <span className="muted" role="status">{cleared}</span>}
          {skipped > 0 && (
            <span className="muted">· {formatCount(skipped)} not streamed under load (not shown or exported here; in the proxy’s log)</span>
          )}
          {!recordNames && <span className="muted">· Names are not being recorded (Settings)</span>}
          <span className="toolbar-spacer" />
          {clearing === 'ask' ? (
            <span className="clear-confirm" role="group" aria-label="Clear the log?">
              <span>Clear all {formatCount(store.queries.size)} held, here and in dotstub?</span>
              <button type="button" className="btn btn-small btn-danger" onClick={() => void clearLog()}>
                <Icon name="trash" /> Clear
              </button>
              <button type="button" className="btn btn-small" onClick={() => setClearing(null)}>
                Cancel
              </button>
            </span>
          ) : (
            <button
              type="button"
              className="btn btn-small"
              disabled={clearing === 'busy' || store.queries.size === 0}
              onClick={() => {
                setCleared(null);
                setClearing('ask');
              }}
            >
              <Icon name="trash" /> Clear log
            </button>
          )}
          <span className="export" role="group" aria-label={`Export the ${formatCount(count)} ${count === 1 ? 'query' : 'queries'} shown`}>
            <span aria-hidden="true">Export</span>
            <button type="button" className="btn btn-small" disabled={count === 0} onClick={() => exportShown('csv')}>
              <Icon name="download" /> CSV
            </button>
            <button type="button" className="btn btn-small" disabled={count === 0} onClick={() => exportShown('json')}>
              <Icon name="download" /> JSON
            </button>
          </span>
        </div>
        <div className="log-table">
          <div
            ref={gridRef}
            role="grid"
            aria-label="Query log, newest first"
            aria-rowcount={count + 1}
            aria-activedescendant={activeRendered ? `${uid}-q${activeAbs}` : undefined}
            tabIndex={0}
            className="log-grid"
            onKeyDown={onKeyDown}
            onScroll={onScroll}
            onFocus={() => (focused.current = true)}
            onBlur={() => (focused.current = false)}
          >
            <div role="rowgroup" className="log-head">
              <div role="row" aria-rowindex={1} className="log-row head">
                <span role="columnheader" className="c-time">Time</span>
                <span role="columnheader" className="c-name">Name</span>
                <span role="columnheader" className="c-type">Type</span>
                <span role="columnheader" className="c-rcode">Response</span>
                <span role="columnheader" className="c-latency">Latency</span>
                <span role="columnheader" className="c-conn">Connection</span>
                <span role="columnheader" className="c-resolver">Resolver</span>
              </div>
            </div>
            <div role="rowgroup" className="log-body" style={{ height: virtualizer.getTotalSize() }}>
                {count === 0 && (
                  <div className="empty log-empty">
                    {emptyText}
                  </div>
                )}
                {items.map((v) => {
                  const a = abs(v.index);
                  const r = a === undefined ? undefined : store.queries.atAbsolute(a);
                  if (!r || a === undefined) return null;
                  return (
                    <Row
                      key={v.key}
                      r={r}
                      id={`${uid}-q${a}`}
                      index={v.index}
                      top={v.start - ROW_HEIGHT}
                      active={v.index === activeIndex}
                      selected={selected === r}
                      slowUs={slowUs}
                      resolver={resolverLabel(resolvers, r.resolverId)}
                      onPick={stablePick}
                    />
                  );
                })}
            </div>
          </div>
        </div>
      </div>
      {selected && (
        <QueryDetail
          r={selected}
          resolver={resolverLabel(resolvers, selected.resolverId)}
          handshakeMs={store.handshakeMs(selected.connectionId)}
          onClose={() => {
            setSelected(null);
            gridRef.current?.focus();
          }}
        />
      )}
    </div>
  );
}
