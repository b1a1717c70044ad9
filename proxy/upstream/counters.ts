/**
 * What the upstream layer counts, as named failures and totals (routedns's
 * habit: each failure increments a counter). The engine's Counters include
 * these fields (engine/query-record.ts).
 *
 * Invariants: pools are the only writers (upstream/pool/pool.ts, counting
 * their connections' events); the pools of one proxy (DoT and DoH of a
 * fallback) share one object, so each field totals across them. The
 * cleartext path, the cache and the fallback write none of these.
 */
import type { PoolConnection } from './connection/contract.js';

export interface UpstreamCounters {
  retries: number;
  timeouts: number;
  /** Queries sent again on a second connection after silence (pool/hedge.ts), and those of them the first connection answered first after all (sent twice for nothing). */
  hedges: number;
  hedgesUnneeded: number;
  /** Answers whose question didn't match the query (dropped, RFC 7858 §3.3). */
  mismatches: number;
  /** Answers that arrived before the answer to an earlier query on the same connection. */
  outOfOrder: number;
  inFlightCapHits: number;
  handshakesFull: number;
  handshakesResumed: number;
  connectFailures: number;
  /** Extra connections opened for bursts, and those that failed to come up (issue 12). */
  burstConnections: number;
  burstConnectFailures: number;
  bytesToResolver: number;
  bytesFromResolver: number;
}

export function newUpstreamCounters(): UpstreamCounters {
  return {
    retries: 0,
    timeouts: 0,
    hedges: 0,
    hedgesUnneeded: 0,
    mismatches: 0,
    outOfOrder: 0,
    inFlightCapHits: 0,
    handshakesFull: 0,
    handshakesResumed: 0,
    connectFailures: 0,
    burstConnections: 0,
    burstConnectFailures: 0,
    bytesToResolver: 0,
    bytesFromResolver: 0,
  };
}

/** Counts what a pool's connection reports by itself: dropped mismatches, out-of-order answers, bytes each way. */
export function countConnection(conn: Pick<PoolConnection, 'on'>, counters: UpstreamCounters): void {
  conn.on('mismatch', () => counters.mismatches++);
  conn.on('out-of-order', () => counters.outOfOrder++);
  conn.on('bytes', (out, inn) => {
    counters.bytesToResolver += out;
    counters.bytesFromResolver += inn;
  });
}
