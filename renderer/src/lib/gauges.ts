/**
 * The connection-hit gauges as data. The proxy counts only queries sent to
 * the resolver, so while it can't be reached the share would stay at its
 * last value (99.6 % during an outage): the gauges say there is no
 * connection instead. Pure.
 */
import type { MetricsView, PrivacyState } from '../../../proxy/control/api-types.js';

export interface GaugeModel {
  readonly label: string;
  /** 0…1, or null when there is nothing to show as a share. */
  readonly value: number | null;
  /** Shown instead of the number when value is null. */
  readonly empty: string;
  readonly caption: string;
  /** The gauge is about an outage: drawn as a warning whatever the number. */
  readonly outage: boolean;
}

/** No TLS connection to the chosen resolver in these states. */
const NO_CONNECTION: ReadonlySet<PrivacyState> = new Set(['blocked', 'degraded', 'captive']);

export function hitGauges(hit: MetricsView['hitFraction'] | undefined, state: PrivacyState | undefined): [GaugeModel, GaugeModel] {
  const outage = state !== undefined && NO_CONNECTION.has(state);
  return [
    {
      label: 'Connection hits since start',
      value: hit?.sinceStart ?? null,
      empty: 'no queries yet',
      caption: outage ? 'Of queries that reached the resolver, before it became unreachable' : 'Share of queries that found an open connection',
      outage,
    },
    {
      label: 'Connection hits, last 5 min',
      value: outage ? null : (hit?.last5m ?? null),
      empty: outage ? 'no connection' : 'no queries yet',
      caption: outage ? 'The resolver can’t be reached now: no connection to reuse' : 'Recent reuse, after idle closes',
      outage,
    },
  ];
}
