/** A query record with sensible defaults, for the tests of whatever shows or exports one (the dashboard's and the proxy's). */
import type { QueryRecord } from '../api-types.js';

export function record(over: Partial<QueryRecord> = {}): QueryRecord {
  return {
    seq: 1,
    startedAt: Date.UTC(2025, 0, 1, 12, 0, 0),
    name: 'example.test',
    type: 'A',
    transport: 'udp',
    rcode: 'NOERROR',
    resolverId: 'quad9',
    connectionId: 1,
    reused: true,
    handshake: null,
    latencyUs: 1500,
    queueUs: 0,
    upstreamUs: 1200,
    depth: 1,
    source: 'upstream',
    attempts: 1,
    truncated: false,
    error: null,
    ...over,
  };
}
