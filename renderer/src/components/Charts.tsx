import { useEffect, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import { binLabel, edgeLabel, latencySummary, recentLatencies, seriesColumns, type LatencySummary } from '../lib/chart-data.js';
import { chartMarks, marksCaption, type ChartMarks } from '../lib/chart-marks.js';
import { lastCompleteSecond } from '../lib/overview.js';
import { countOf, formatClockShort, formatCount, formatLatencyMs } from '../lib/format.js';
import { useColorScheme, useDashboard, useStore } from '../state/context.js';
import { UPlotChart } from './UPlotChart.js';

interface Palette {
  readonly text: string;
  readonly grid: string;
  readonly c1: string;
  readonly c2: string;
  readonly c3: string;
  readonly c4: string;
  readonly danger: string;
}

function usePalette(): Palette {
  const scheme = useColorScheme();
  return useMemo(() => {
    const css = getComputedStyle(document.documentElement);
    const v = (name: string, fallback: string): string => css.getPropertyValue(name).trim() || fallback;
    void scheme;
    return {
      text: v('--text-muted', '#666'),
      grid: v('--chart-grid', 'rgba(128,128,128,.2)'),
      c1: v('--chart-1', '#2563eb'),
      c2: v('--chart-2', '#d97706'),
      c3: v('--chart-3', '#059669'),
      c4: v('--chart-4', '#7c3aed'),
      danger: v('--danger', '#b91c1c'),
    };
  }, [scheme]);
}

function axis(p: Palette, extra: Partial<uPlot.Axis> = {}): uPlot.Axis {
  return {
    stroke: p.text,
    grid: { stroke: p.grid, width: 1 },
    ticks: { stroke: p.grid, width: 1, size: 4 },
    font: '11px system-ui, sans-serif',
    ...extra,
  };
}

/** An axis title (uPlot draws it beside the axis). */
function axisTitle(text: string): Partial<uPlot.Axis> {
  return { label: text, labelSize: 18, labelFont: '600 11px system-ui, sans-serif' };
}

function withAlpha(color: string, alpha: number): string {
  const m = /^#([0-9a-f]{6})$/i.exec(color);
  if (!m) return color;
  const n = parseInt(m[1] ?? '0', 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${alpha})`;
}


/** Latency histogram of the last 5 minutes of answers in the log (log-scale bins). */
function LatencyHistogram({ summary }: { summary: LatencySummary }) {
  const p = usePalette();
  const h = summary.histogram;
  const options = useMemo<Omit<uPlot.Options, 'width' | 'height'>>(
    () => ({
      // Hover a bar: its latency range and count in the legend below.
      legend: { show: true, live: true },
      cursor: { points: { show: false }, drag: { x: false, y: false } },
      scales: { x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
      axes: [
        axis(p, {
          values: (_u, splits) => splits.map((i) => (Number.isInteger(i) && h.edges[i] !== undefined ? edgeLabel(h.edges[i]) : '')),
          space: 50,
          ...axisTitle('Latency (log scale)'),
        }),
        axis(p, { size: 44, ...axisTitle('Answers') }),
      ],
      series: [
        { label: 'Latency', value: (_u, i) => (i == null ? '—' : binLabel(h.edges, i)) },
        {
          label: 'Answers',
          value: (_u, v) => (v == null ? '—' : formatCount(v)),
          fill: withAlpha(p.c1, 0.55),
          stroke: p.c1,
          width: 1,
          paths: uPlot.paths.bars?.({ size: [0.85, 60], align: 0 }),
          points: { show: false },
        },
      ],
    }),
    [p, h.edges],
  );
  const data = useMemo<uPlot.AlignedData>(() => [h.counts.map((_c, i) => i), h.counts], [h.counts]);
  return (
    <UPlotChart
      options={options}
      data={data}
      label={`Latency histogram of ${countOf(summary.count, 'recent answer')}: median ${formatLatencyMs(summary.p50)}, 95th percentile ${formatLatencyMs(summary.p95)}`}
    />
  );
}

function TimeChart({
  label,
  yTitle,
  t,
  lines,
  yFormat,
  yRange,
  marks,
}: {
  label: string;
  /** The y axis's title, with its unit. */
  yTitle: string;
  t: number[];
  lines: { name: string; color: string; values: (number | null)[]; fill?: boolean; bars?: boolean }[];
  yFormat?: (v: number) => string;
  yRange?: [number, number];
  /** Stretches without private DNS (shaded) and resolver switches (dashed lines) on the time axis. */
  marks: ChartMarks;
}) {
  const p = usePalette();
  // Read by the draw hook, so new marks never rebuild the chart.
  const marksRef = useRef(marks);
  marksRef.current = marks;
  const names = lines.map((l) => `${l.name}|${l.color}|${l.fill ? 1 : 0}|${l.bars ? 1 : 0}`).join(',');
  const options = useMemo<Omit<uPlot.Options, 'width' | 'height'>>(
    () => ({
      // Hover: the second and each line's value in the legend below.
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
      hooks: {
        // Behind the series: a band per stretch without private DNS, a dashed line per resolver switch.
        drawClear: [
          (u: uPlot) => {
            const m = marksRef.current;
            const ctx = u.ctx;
            const { left, top, width, height } = u.bbox;
            ctx.save();
            ctx.fillStyle = withAlpha(p.danger, 0.12);
            for (const b of m.outages) {
              const x0 = Math.max(left, u.valToPos(b.from, 'x', true));
              const x1 = Math.min(left + width, u.valToPos(b.to, 'x', true));
              if (x1 > x0) ctx.fillRect(x0, top, x1 - x0, height);
            }
            ctx.strokeStyle = p.text;
            ctx.setLineDash([4, 4]);
            ctx.lineWidth = 1;
            for (const at of m.switches) {
              const x = u.valToPos(at, 'x', true);
              if (x < left || x > left + width) continue;
              ctx.beginPath();
              ctx.moveTo(x, top);
              ctx.lineTo(x, top + height);
              ctx.stroke();
            }
            ctx.restore();
          },
        ],
      },
      scales: {
        x: { time: true },
        y: yRange ? { range: () => yRange } : { range: (_u, _min, max) => [0, max > 0 ? max * 1.15 : 1] },
      },
      axes: [
        axis(p, { space: 70, values: (_u, s) => s.map((v) => (v == null ? '' : formatClockShort(v * 1000))), ...axisTitle('Local time') }),
        axis(p, { size: 56, values: yFormat ? (_u, s) => s.map((v) => (v == null ? '' : yFormat(v))) : undefined, ...axisTitle(yTitle) }),
      ],
      series: [
        { label: 'Time', value: (_u, v) => (v == null ? '—' : formatClockShort(v * 1000)) },
        ...lines.map((l) => ({
          label: l.name,
          value: (_u: uPlot, v: number | null) => (v == null ? '—' : yFormat ? yFormat(v) : String(v)),
          stroke: l.color,
          width: l.bars ? 0 : 1.75,
          fill: l.fill || l.bars ? withAlpha(l.color, l.bars ? 0.6 : 0.15) : undefined,
          spanGaps: false,
          points: { show: false },
          paths: l.bars ? uPlot.paths.bars?.({ size: [0.9, 8] }) : undefined,
        })),
      ],
    }),
    // Rebuild only when the shape or palette changes, never per data point.
    [p, names, yTitle, yFormat, yRange?.[0], yRange?.[1]],
  );
  const data = useMemo<uPlot.AlignedData>(() => [t, ...lines.map((l) => l.values)], [t, lines]);
  const caption = marksCaption(marks);
  return <UPlotChart options={options} data={data} label={caption ? `${label}. ${caption}` : label} />;
}

/** Under a time chart: what its shading and dashed lines mean (nothing when nothing is marked). */
function MarksNote({ marks }: { marks: ChartMarks }) {
  const caption = marksCaption(marks);
  if (!caption) return null;
  return (
    <p className="chart-marks muted small" data-testid="chart-marks">
      <span className="mark-swatch" aria-hidden="true" /> {caption}
    </p>
  );
}

const pct = (v: number): string => `${Math.round(v)}%`;
const qpsFmt = (v: number): string => formatCount(v, true);
const REUSE_RANGE: [number, number] = [0, 100];

/** The four charts: latency histogram, p50/p95 over time, queries per second, reuse over time. */
export function Charts() {
  const store = useStore();
  const metrics = useDashboard((s) => s.metrics);
  const events = useDashboard((s) => s.events);
  const hasLog = useDashboard((s) => s.logVersion > 0);
  const p = usePalette();
  const [summary, setSummary] = useState<LatencySummary>(() => latencySummary(new Float64Array()));

  // The histogram re-bins at most once a second, whatever the query rate.
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const t = window.setInterval(() => setTick((x) => x + 1), 1000);
    return () => window.clearInterval(t);
  }, []);
  useEffect(() => {
    setSummary(latencySummary(recentLatencies(store.queries, Date.now(), 5 * 60_000)));
    // logVersion: the first batch after load shows at once rather than a second later.
  }, [tick, store, hasLog]);

  const cols = useMemo(() => seriesColumns(metrics?.series ?? []), [metrics]);
  const marks = useMemo(() => {
    const from = (cols.t[0] ?? Date.now() / 1000) * 1000;
    const to = ((cols.t.at(-1) ?? Date.now() / 1000) + 1) * 1000;
    return chartMarks(events, from, to);
  }, [events, cols]);
  const latencyLines = useMemo(
    () => [
      { name: 'p50', color: p.c1, values: cols.p50 },
      { name: 'p95', color: p.c2, values: cols.p95 },
    ],
    [cols, p],
  );
  const qpsLines = useMemo(() => [{ name: 'Queries/s', color: p.c4, values: cols.qps, bars: true }], [cols, p]);
  const reuseLines = useMemo(() => [{ name: 'Connection hits', color: p.c3, values: cols.reusePct, fill: true }], [cols, p]);
  const series = metrics?.series ?? [];
  // The current second is still filling: the overview's tile and this header both read the last complete one.
  const last = lastCompleteSecond(series);
  const lastLatency = [...series].reverse().find((s) => s.p50 !== null);

  return (
    <div className="charts">
      <section className="card chart-card" aria-labelledby="ch-hist">
        <header className="card-head">
          <h3 id="ch-hist">Latency distribution</h3>
          <p className="muted small">
            last 5 min · {countOf(summary.count, 'answer')} · p50 <b className="mono">{formatLatencyMs(summary.p50)}</b> · p95{' '}
            <b className="mono">{formatLatencyMs(summary.p95)}</b> · p99 <b className="mono">{formatLatencyMs(summary.p99)}</b>
          </p>
        </header>
        <div className="chart-box">
          {summary.count === 0 ? <p className="empty">No answers in the last 5 minutes.</p> : <LatencyHistogram summary={summary} />}
        </div>
      </section>
      <section className="card chart-card" aria-labelledby="ch-lat">
        <header className="card-head">
          <h3 id="ch-lat">Latency over time</h3>
          <p className="muted small">
            p50 and p95 per second · latest <b className="mono">{formatLatencyMs(lastLatency?.p50 ?? null)}</b> /{' '}
            <b className="mono">{formatLatencyMs(lastLatency?.p95 ?? null)}</b>
          </p>
        </header>
        <div className="chart-box">
          <TimeChart label="Median and 95th percentile latency per second, last 5 minutes" yTitle="Latency" t={cols.t} lines={latencyLines} yFormat={formatLatencyMs} marks={marks} />
        </div>
        <MarksNote marks={marks} />
      </section>
      <section className="card chart-card" aria-labelledby="ch-qps">
        <header className="card-head">
          <h3 id="ch-qps">Queries per second</h3>
          <p className="muted small">
            last second <b className="mono">{formatCount(last?.queries ?? 0)}</b>/s · peak{' '}
            <b className="mono">{formatCount(Math.max(0, ...cols.qps))}</b>/s
          </p>
        </header>
        <div className="chart-box">
          <TimeChart label="Queries per second, last 5 minutes" yTitle="Queries per second" t={cols.t} lines={qpsLines} yFormat={qpsFmt} marks={marks} />
        </div>
        <MarksNote marks={marks} />
      </section>
      <section className="card chart-card" aria-labelledby="ch-reuse">
        <header className="card-head">
          <h3 id="ch-reuse">Connection reuse over time</h3>
          <p className="muted small">share of each second’s queries that found an open connection</p>
        </header>
        <div className="chart-box">
          <TimeChart label="Connection hit percentage per second, last 5 minutes" yTitle="Connection hits (%)" t={cols.t} lines={reuseLines} yFormat={pct} yRange={REUSE_RANGE} marks={marks} />
        </div>
        <MarksNote marks={marks} />
      </section>
    </div>
  );
}
