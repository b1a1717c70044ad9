/**
 * What the upstream layer counts. The engine's Counters include these
 * fields; the pool is their only writer (one owner per field), the control
 * API reads them.
 */
export interface UpstreamCounters {
  retries: number;
  timeouts: number;
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
