/** Builders for tests: a QueryRecord with sensible defaults. */
import type { QueryRecord, StatusView } from '../../../proxy/control/api-types.js';
import { newCounters } from '../../../proxy/engine/query-record.js';

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

export function status(over: Partial<StatusView> = {}): StatusView {
  return {
    state: 'private',
    reason: 'TLS to dns.quad9.net verified',
    since: 0,
    leaves: 'Only TLS',
    resolver: {
      id: 'quad9',
      label: 'Quad9',
      addresses: ['9.9.9.9'],
      port: 853,
      authName: 'dns.quad9.net',
      pins: [],
      preset: true,
      medianLatencyMs: 12,
    },
    transport: 'dot',
    transportReason: null,
    network: null,
    captive: null,
    race: null,
    ladder: [],
    lastVerifiedAt: 0,
    mode: 'strict',
    listen: ['127.0.0.1:53'],
    uptimeMs: 1000,
    inFlight: 0,
    counters: newCounters(),
    leaks: { measured: false, why: 'not read in this test', paths: [], cleanSince: null, networkChanges: 0, checkedAt: null },
    dnssec: null,
    networksRevision: 0,
    ...over,
  };
}
