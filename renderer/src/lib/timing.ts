/**
 * A query's timing breakdown for the detail panel: where its latency went.
 *
 *   received ─ queue wait ─┬─ handshake (new connection only) ─┬─ upstream ─ proxy ─ answered
 *
 * A query whose answer came from a later attempt (earlierUs: a retry, a
 * query held while the resolver was unreachable, a hedge's copy) starts
 * with the time before that attempt; queue, handshake and upstream are then
 * that attempt's.
 *
 *   received ─ earlier attempts (or a silent connection) ─ queue wait ─ … ─ answered
 *
 * The record gives queueUs (waiting before the query was written, which
 * includes a handshake when the query opened the connection), upstreamUs
 * (written → answer read) and latencyUs (the total the client saw). The
 * handshake's own duration comes from the connection's open event when the
 * dashboard saw it.
 */
import type { QueryRecord } from '../../../proxy/control/api-types.js';

export interface TimingSegment {
  readonly key: 'earlier' | 'queue' | 'handshake' | 'upstream' | 'proxy';
  readonly label: string;
  readonly us: number;
  /** Share of the total latency, 0…1. */
  readonly share: number;
}

export function timingBreakdown(
  r: Pick<QueryRecord, 'latencyUs' | 'queueUs' | 'upstreamUs' | 'handshake' | 'hedge' | 'earlierUs' | 'attempts' | 'connectionId'>,
  handshakeMs: number | null = null,
): TimingSegment[] {
  const total = Math.max(0, r.latencyUs);
  const earlier = Math.max(0, Math.min(r.earlierUs ?? 0, total));
  const queueTotal = Math.max(0, Math.min(r.queueUs, total - earlier));
  let handshake = 0;
  if (r.handshake !== null) {
    handshake = handshakeMs === null ? queueTotal : Math.min(queueTotal, Math.max(0, handshakeMs * 1000));
  }
  const queue = queueTotal - handshake;
  const upstream = Math.max(0, Math.min(r.upstreamUs, total - earlier - queueTotal));
  const proxy = Math.max(0, total - earlier - queueTotal - upstream);
  const share = (us: number): number => (total > 0 ? us / total : 0);
  const segments: TimingSegment[] = [];
  if (r.earlierUs !== undefined) {
    const copy = r.hedge !== undefined && r.hedge.connectionId === r.connectionId;
    const label = copy ? `First connection silent, sent again on #${r.hedge?.connectionId ?? ''}` : `Before the attempt that answered (${r.attempts} attempts)`;
    segments.push({ key: 'earlier', label, us: earlier, share: share(earlier) });
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
