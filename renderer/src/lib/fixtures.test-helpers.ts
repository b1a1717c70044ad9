/** Builders for tests: a QueryRecord (the proxy's tests use the same one) and a StatusView with sensible defaults. */
import type { StatusView } from '../../../proxy/control/api-types.js';
import { newCounters } from '../../../proxy/engine/query-record.js';

export { record } from '../../../proxy/control/api-client/query-record.test-helpers.js';

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
      blocking: null,
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
