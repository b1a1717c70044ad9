/**
 * A query's timing breakdown for the detail panel: where its latency went.
 *
 *   received ─ queue wait ─┬─ handshake (new connection only) ─┬─ upstream ─ proxy ─ answered
 *
 * A query sent again after its connection went silent, whose copy's answer
 * counted (hedge.beforeUs), starts with that wait: queue, handshake and
 * upstream are then the copy's.
 *
 *   received ─ first connection silent, sent again ─ queue wait ─ … ─ answered
 *
 * The record gives queueUs (waiting before the query was written, which
 * includes a handshake when the query opened the connection), upstreamUs
 * (written → answer read) and latencyUs (the total the client saw). The
 * handshake's own duration comes from the connection's open event when the
 * dashboard saw it.
 */
import type { QueryRecord } from '../../../proxy/control/api-types.js';

export interface TimingSegment {
  readonly key: 'silent' | 'queue' | 'handshake' | 'upstream' | 'proxy';
  readonly label: string;
  readonly us: number;
  /** Share of the total latency, 0…1. */
  readonly share: number;
}

export function timingBreakdown(
  r: Pick<QueryRecord, 'latencyUs' | 'queueUs' | 'upstreamUs' | 'handshake' | 'hedge'>,
  handshakeMs: number | null = null,
): TimingSegment[] {
  const total = Math.max(0, r.latencyUs);
  const silent = Math.max(0, Math.min(r.hedge?.beforeUs ?? 0, total));
  const queueTotal = Math.max(0, Math.min(r.queueUs, total - silent));
  let handshake = 0;
  if (r.handshake !== null) {
    handshake = handshakeMs === null ? queueTotal : Math.min(queueTotal, Math.max(0, handshakeMs * 1000));
  }
  const queue = queueTotal - handshake;
  const upstream = Math.max(0, Math.min(r.upstreamUs, total - silent - queueTotal));
  const proxy = Math.max(0, total - silent - queueTotal - upstream);
  const share = (us: number): number => (total > 0 ? us / total : 0);
  const segments: TimingSegment[] = [];
  if (r.hedge?.beforeUs !== undefined) {
    segments.push({ key: 'silent', label: `First connection silent, sent again on #${r.hedge.connectionId}`, us: silent, share: share(silent) });
  }
  segments.push({ key: 'queue', label: 'Queue wait', us: queue, share: share(queue) });
  if (r.handshake !== null) {
    segments.push({
      key: 'handshake',
      label: r.handshake === 'resumed' ? 'TLS handshake (resumed session)' : 'TLS handshake (full)',
      us: handshake,
      share: share(handshake),
    });
  }
  segments.push({ key: 'upstream', label: 'Upstream (resolver round trip)', us: upstream, share: share(upstream) });
  segments.push({ key: 'proxy', label: 'In the proxy (parse, reply)', us: proxy, share: share(proxy) });
  return segments;
}
