/** GET /api/metrics: the sliding window's figures with the proxy's counters and cache size. */
import type { Counters } from '../engine/query-record.js';
import type { MetricsView } from './api-types.js';
import type { MetricsWindow } from './metrics-window.js';
import type { BlockedDays } from './blocked-days.js';

export function metricsView(
  metrics: MetricsWindow,
  c: Readonly<Counters>,
  inFlight: number,
  cacheSize: { readonly entries: number; readonly bytes: number; readonly maxBytes: number } | null,
  blocked: BlockedDays,
  now: number = Date.now(),
): MetricsView {
  const asked = c.cacheHits + c.cacheMisses;
  return {
    hitFraction: metrics.hitFraction(),
    handshakes: { full: c.handshakesFull, resumed: c.handshakesResumed },
    latency: metrics.latency(),
    inFlight,
    outOfOrder: c.outOfOrder,
    retries: c.retries,
    servfails: c.servfails,
    mismatches: c.mismatches,
    padding: {
      paddingBytes: c.paddingBytes,
      bytesToResolver: c.bytesToResolver,
      overhead: c.bytesToResolver === 0 ? null : c.paddingBytes / c.bytesToResolver,
    },
    series: metrics.series(),
    blocked: blocked.view(now),
    cache: cacheSize
      ? {
          hits: c.cacheHits,
          misses: c.cacheMisses,
          stale: c.cacheStale,
          prefetches: c.cachePrefetches,
          hitRatio: asked === 0 ? null : c.cacheHits / asked,
          entries: cacheSize.entries,
          bytes: cacheSize.bytes,
          maxBytes: cacheSize.maxBytes,
        }
      : null,
  };
}
