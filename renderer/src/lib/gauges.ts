/**
 * The connection-hit gauges as data. The proxy counts only queries sent to
 * the resolver, so while it can't be reached the share would stay at its
 * last value (99.6 % during an outage): the gauges say there is no
 * connection instead. Off or paused, this machine's lookups don't come
 * through dotstub at all: the gauges are neutral, never a green 100 % under
 * "Off" (issue 29), and say why. Pure.
 */
import type { MetricsView, PrivacyState } from '../../../proxy/control/api-types.js';
import type { BannerState } from './banner.js';

export interface GaugeModel {
  readonly label: string;
  /** 0…1, or null when there is nothing to show as a share. */
  readonly value: number | null;
  /** Shown instead of the number when value is null. */
  readonly empty: string;
  readonly caption: string;
  /** The gauge is about an outage: drawn as a warning whatever the number. */
  readonly outage: boolean;
  /** This machine's lookups don't go through dotstub now (off, paused): drawn neutral whatever the number. */
  readonly notCarrying: boolean;
}

/** No TLS connection to the chosen resolver in these states. */
const NO_CONNECTION: ReadonlySet<PrivacyState> = new Set(['blocked', 'degraded', 'captive']);

/** `state`: the banner's state (bannerState: off while paused reads "paused"). */
export function hitGauges(hit: MetricsView['hitFraction'] | undefined, state: BannerState | undefined): [GaugeModel, GaugeModel] {
  if (state === 'off' || state === 'paused') {
    const why = `Private DNS is ${state}`;
    return [
      {
        label: 'Connection hits since start',
        value: hit?.sinceStart ?? null,
        empty: 'no queries yet',
        caption: `${why}: of lookups dotstub carried, not this machine’s now`,
        outage: false,
        notCarrying: true,
      },
      {
        label: 'Connection hits, last 5 min',
        value: hit?.last5m ?? null,
        empty: 'not in use',
        caption: `${why}: this machine’s lookups don’t go through dotstub`,
        outage: false,
        notCarrying: true,
      },
    ];
  }
  const outage = state !== undefined && NO_CONNECTION.has(state);
  return [
    {
      label: 'Connection hits since start',
      value: hit?.sinceStart ?? null,
      empty: 'no queries yet',
      caption: outage ? 'Of queries that reached the resolver, before it became unreachable' : 'Share of queries that found an open connection',
      outage,
      notCarrying: false,
    },
    {
      label: 'Connection hits, last 5 min',
      value: outage ? null : (hit?.last5m ?? null),
      empty: outage ? 'no connection' : 'no queries yet',
      caption: outage ? 'The resolver can’t be reached now: no connection to reuse' : 'Recent reuse, after idle closes',
      outage,
      notCarrying: false,
    },
  ];
}
