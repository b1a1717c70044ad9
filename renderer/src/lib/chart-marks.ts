/**
 * What the time charts mark on their time axis: the stretches when DNS was
 * not private (blocked, signing in to a Wi-Fi, degraded, off) and the
 * moments the resolver was switched, from the events timeline. Pure.
 */
import type { PrivacyState, TimelineEvent } from '../../../proxy/control/api-types.js';

interface OutageBand {
  /** Seconds since the epoch (uPlot's time unit), clipped to the window. */
  readonly from: number;
  readonly to: number;
  readonly state: PrivacyState;
}

export interface ChartMarks {
  readonly outages: readonly OutageBand[];
  /** Resolver switches, seconds since the epoch. */
  readonly switches: readonly number[];
}

const NOT_PRIVATE: ReadonlySet<PrivacyState> = new Set(['blocked', 'captive', 'degraded', 'off']);

/** Marks within [fromMs, toMs]; a stretch still going at `toMs` ends there. */
export function chartMarks(events: readonly TimelineEvent[], fromMs: number, toMs: number): ChartMarks {
  const outages: OutageBand[] = [];
  const switches: number[] = [];
  let open: { at: number; state: PrivacyState } | null = null;
  const close = (at: number): void => {
    if (!open) return;
    const from = Math.max(open.at, fromMs);
    const to = Math.min(at, toMs);
    if (to > from) outages.push({ from: from / 1000, to: to / 1000, state: open.state });
    open = null;
  };
  for (const e of events) {
    if (e.kind === 'state') {
      const s = e.event;
      if (NOT_PRIVATE.has(s.state)) {
        // 'off' before the first connection (start-up) is not an outage a user lived through.
        if (s.state === 'off' && s.previous === 'off') continue;
        if (!open) open = { at: s.at, state: s.state };
      } else close(s.at);
    } else if (e.kind === 'resolver' && e.at >= fromMs && e.at <= toMs) {
      switches.push(e.at / 1000);
    }
  }
  close(toMs);
  return { outages, switches };
}

/** "1 stretch without private DNS and 1 resolver switch marked", or '' with nothing marked. */
export function marksCaption(m: ChartMarks): string {
  const parts: string[] = [];
  if (m.outages.length) parts.push(`${m.outages.length} ${m.outages.length === 1 ? 'stretch' : 'stretches'} without private DNS (shaded)`);
  if (m.switches.length) parts.push(`${m.switches.length} resolver ${m.switches.length === 1 ? 'switch' : 'switches'} (dashed line)`);
  return parts.length ? `Marked: ${parts.join(' and ')}.` : '';
}
