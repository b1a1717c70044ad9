import { useId, useMemo, useState } from 'react';
import { breakdown, WINDOWS, type Ranked } from '../lib/log-breakdown.js';
import { formatClockShort, formatCount, formatPercent } from '../lib/format.js';
import { useAsOf, useStore } from '../state/context.js';

function RankedList({ title, items, empty }: { title: string; items: readonly Ranked[]; empty: string }) {
  const id = useId();
  return (
    <div className="ranked">
      <h3 id={id}>{title}</h3>
      {items.length === 0 ? (
        <p className="muted small">{empty}</p>
      ) : (
        <ol aria-labelledby={id}>
          {items.map((r) => (
            <li key={r.key}>
              <span className="ranked-key mono" title={r.key}>
                {r.key}
              </span>
              <span className="ranked-count mono">{formatCount(r.count)}</span>
              <span className="ranked-share muted small">{formatPercent(r.share, 0)}</span>
              <span className="ranked-bar" aria-hidden="true" style={{ width: `${Math.max(2, r.share * 100)}%` }} />
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/** Top names, failed names and response codes over a chosen window, from the log this page holds. */
export function Breakdown() {
  const store = useStore();
  const selectId = useId();
  const [windowIndex, setWindowIndex] = useState(1);
  // Re-counted every 2 s: at 100,000 held records that is a few ms, not per batch.
  const now = useAsOf(2000);
  const w = WINDOWS[windowIndex] ?? WINDOWS[1];
  const b = useMemo(() => breakdown(store.queries, now, w.ms), [store, now, w.ms]);
  return (
    <section className="card" aria-labelledby="ov-breakdown">
      <header className="card-head">
        <h2 id="ov-breakdown">What was looked up</h2>
        <label className="inline-field" htmlFor={selectId}>
          <span>Window</span>
          <select id={selectId} value={windowIndex} onChange={(e) => setWindowIndex(Number(e.target.value))}>
            {WINDOWS.map((x, i) => (
              <option key={x.label} value={i}>
                {x.label}
              </option>
            ))}
          </select>
        </label>
      </header>
      <p className="muted small" data-testid="breakdown-summary">
        {b.total === 0
          ? `No queries in the ${w.label} of the log this page holds.`
          : `${formatCount(b.total)} ${b.total === 1 ? 'query' : 'queries'} since ${formatClockShort(b.from ?? now)}, from the log this page holds.`}
      </p>
      <div className="breakdown-grid">
        <RankedList title="Top names" items={b.names} empty="None." />
        <RankedList title="Top failed names" items={b.failed} empty="No failures (NXDOMAIN is an answer, not a failure)." />
        <RankedList title="Response codes" items={b.rcodes} empty="None." />
      </div>
    </section>
  );
}
