import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, test } from 'vitest';
import type { QueryRecord } from '../engine/query-record.js';
import { csvHeader, csvLine, EXPORT_COLUMNS } from './api-client/query-export.js';
import { record } from './api-client/query-record.test-helpers.js';
import { OWN_CHECKS_KEPT, QueryLog } from './query-log.js';

/** A record's CSV line as the API writes it (resolver ids as their labels here). */
const csvRow = (r: QueryRecord): string => csvLine(r, (id) => id);

function rec(seq: number, over: Partial<QueryRecord> = {}): QueryRecord {
  return record({ seq, startedAt: 1_700_000_000_000 + seq, name: `n${seq}.test`, type: seq % 2 ? 'A' : 'AAAA', latencyUs: seq * 100, upstreamUs: seq * 90, ...over });
}

describe('QueryLog', () => {
  test('keeps the newest `capacity` records, newest first', () => {
    const log = new QueryLog(3);
    for (let i = 1; i <= 5; i++) log.push(rec(i));
    expect(log.size).toBe(3);
    expect([...log.newest()].map((r) => r.seq)).toEqual([5, 4, 3]);
  });

  test('filters combine; paging counts the total', () => {
    const log = new QueryLog(100);
    for (let i = 1; i <= 20; i++) log.push(rec(i, i === 7 ? { rcode: 'SERVFAIL', resolverId: 'google' } : {}));
    expect(log.page({ type: 'a' }, 0, 100).total).toBe(10);
    expect(log.page({ name: 'N1' }, 0, 100).total).toBe(11); // n1, n10..n19
    expect(log.page({ rcode: 'servfail' }, 0, 10).records.map((r) => r.seq)).toEqual([7]);
    expect(log.page({ resolver: 'google' }, 0, 10).total).toBe(1);
    expect(log.page({ minLatencyMs: 1.5 }, 0, 100).total).toBe(6); // 15..20 × 100 µs
    const p = log.page({}, 5, 3);
    expect(p).toMatchObject({ total: 20, offset: 5 });
    expect(p.records.map((r) => r.seq)).toEqual([15, 14, 13]);
  });

  test('resize keeps the newest; forgetNames drops every name; no-name records never match a name filter', () => {
    const log = new QueryLog(10);
    for (let i = 1; i <= 10; i++) log.push(rec(i));
    log.resize(4);
    expect([...log.newest()].map((r) => r.seq)).toEqual([10, 9, 8, 7]);
    log.resize(6);
    log.push(rec(11));
    expect([...log.newest()].map((r) => r.seq)).toEqual([11, 10, 9, 8, 7]);
    log.forgetNames();
    expect([...log.newest()].every((r) => r.name === null)).toBe(true);
    expect(log.page({ name: 'n' }, 0, 10).total).toBe(0);
    expect(log.page({}, 0, 10).records[0]?.latencyUs).toBe(1100);
  });

  test("dotstub's own checks never evict the user's lookups, and are read only when asked for", () => {
    const log = new QueryLog(3);
    for (let i = 1; i <= 3; i++) log.push(rec(i));
    // A day of the liveness watchdog (two a second) would be 172,800; the ring of own checks keeps its newest.
    const own = (seq: number): QueryRecord => rec(seq, { name: 'liveness.dotstub.resolver.arpa', source: 'local', internal: true, connectionId: null, reused: null });
    for (let i = 4; i <= 5003; i++) log.push(own(i));
    log.push(rec(5004));
    expect(log.size).toBe(3);
    expect([...log.newest()].map((r) => r.seq)).toEqual([5004, 3, 2]);
    expect(log.page({}, 0, 10)).toMatchObject({ total: 3 });
    expect(log.page({ name: 'liveness' }, 0, 10).total).toBe(0);
    // Asked for: merged newest first, the own checks bounded.
    const all = log.page({ includeOwn: true }, 0, 4).records;
    expect(all.map((r) => r.seq)).toEqual([5004, 5003, 5002, 5001]);
    expect(all[1]).toStrictEqual(own(5003));
    expect(log.page({ includeOwn: true }, 0, 1).total).toBe(3 + OWN_CHECKS_KEPT);
    expect(log.page({ includeOwn: true, name: 'liveness' }, 0, 1).total).toBe(OWN_CHECKS_KEPT);
    expect(log.ownSize).toBe(OWN_CHECKS_KEPT);
    // The CSV says which rows are dotstub's own.
    expect(csvHeader().trim().split(',').at(-1)).toBe('internal');
    expect(csvRow(all[1] as QueryRecord).trim().split(',').at(-1)).toBe('true');
    expect(csvRow(all[0] as QueryRecord).trim().split(',').at(-1)).toBe('false');
    // Resizing is the user's ring; clearing empties both.
    log.resize(2);
    expect(log.page({ includeOwn: true }, 0, 1).total).toBe(2 + OWN_CHECKS_KEPT);
    log.clear();
    expect(log.page({ includeOwn: true }, 0, 1).total).toBe(0);
  });

  test('where the name router sent a query: filtered by route, and carried in the CSV', () => {
    const log = new QueryLog(10);
    log.push(rec(1));
    log.push(rec(2, { name: 'printer.lan', source: 'cleartext', resolverId: null, connectionId: null, route: { kind: 'link', link: 'veth0', suffix: 'lan', servers: '10.99.0.1', source: 'systemd-resolved' } }));
    log.push(rec(3, { name: 'tv.local', source: 'local', rcode: 'NXDOMAIN', route: { kind: 'answered', why: '.local is for mDNS' } }));
    log.push(rec(4, { name: 'nas.lan', rcode: 'SERVFAIL', route: { kind: 'refused', why: 'strict mode' } }));
    expect(log.page({ route: 'link' }, 0, 10).records.map((r) => r.name)).toEqual(['printer.lan']);
    expect(log.page({ route: 'answered' }, 0, 10).records.map((r) => r.name)).toEqual(['tv.local']);
    expect(log.page({ route: 'local' }, 0, 10).total).toBe(3);
    expect(csvHeader().trim().split(',').slice(-7, -1)).toEqual(['route', 'routeLink', 'routeServers', 'routeSuffix', 'routeSource', 'routeWhy']);
    const records = [...log.newest()];
    expect(csvRow(records[2] as QueryRecord).trim().split(',').slice(-7, -1)).toEqual(['link', 'veth0', '10.99.0.1', 'lan', 'systemd-resolved', '']);
    expect(csvRow(records[1] as QueryRecord).trim().split(',').slice(-7, -1)).toEqual(['answered', '', '', '', '', '.local is for mDNS']);
    expect(csvRow(records[3] as QueryRecord).trim().split(',').slice(-7, -1)).toEqual(['', '', '', '', '', '']);
  });

  test('a query sent again after silence keeps its hedge in the log, not taken for a route', () => {
    const log = new QueryLog(10);
    log.push(rec(1, { connectionId: 7, hedge: { connectionId: 7, afterMs: 190 } }));
    log.push(rec(2));
    const [plain, hedged] = [...log.newest()];
    expect(hedged).toMatchObject({ connectionId: 7, hedge: { connectionId: 7, afterMs: 190 } });
    expect(hedged?.route).toBeUndefined();
    expect(plain?.hedge).toBeUndefined();
    expect(log.page({ route: 'local' }, 0, 10).total).toBe(0);
    // The export says so too: on which connection, after how long.
    const cells = (r: QueryRecord | undefined): string[] => csvRow(r as QueryRecord).trim().split(',');
    const at = (c: (typeof EXPORT_COLUMNS)[number]): number => EXPORT_COLUMNS.indexOf(c);
    expect([cells(hedged)[at('hedgeConnection')], cells(hedged)[at('hedgeAfterMs')]]).toEqual(['7', '190']);
    expect([cells(plain)[at('hedgeConnection')], cells(plain)[at('hedgeAfterMs')]]).toEqual(['', '']);
  });

  test('why an answer was blocked comes back field for field, and the blocked filter picks it', () => {
    const log = new QueryLog(10);
    const said = rec(1, { rcode: 'NXDOMAIN', extendedErrors: [{ code: 15, name: 'Blocked', text: 'malware: lab list' }], blocked: { kind: 'ede', code: 15, name: 'Blocked', text: 'malware: lab list' } });
    const sink = rec(2, { blocked: { kind: 'zero-address', address: '0.0.0.0' } });
    // A null address beside an EDE that blocks nothing: both kept.
    const both = rec(3, { extendedErrors: [{ code: 3, name: 'Stale Answer', text: '' }], blocked: { kind: 'zero-address', address: '::' } });
    const stale = rec(4, { extendedErrors: [{ code: 3, name: 'Stale Answer', text: 'old' }] });
    const plain = rec(5);
    for (const r of [said, sink, both, stale, plain]) log.push(r);
    expect([...log.newest()].reverse()).toEqual([said, sink, both, stale, plain]);
    expect(log.page({ blocked: 'any' }, 0, 10).records.map((r) => r.seq)).toEqual([3, 2, 1]);
    expect(log.page({ blocked: 'resolver' }, 0, 10).records.map((r) => r.seq)).toEqual([1]);
    expect(log.page({ blocked: 'null-address' }, 0, 10).records.map((r) => r.seq)).toEqual([3, 2]);
  });

  test('10,000 records (the default size) take under 2.2 MB (V8 heap and array buffers), and come back field for field', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const heap = (): number => {
      gc();
      gc();
      return v8.getHeapStatistics().used_heap_size + process.memoryUsage().arrayBuffers;
    };
    const kinds: Partial<QueryRecord>[] = [
      {},
      { connectionId: null, reused: null, source: 'cache', attempts: 0, upstreamUs: 0 },
      { reused: false, handshake: 'full', queueUs: 12_345.6, transport: 'tcp' },
      { handshake: 'resumed', truncated: true, latencyUs: 0.5 },
      { source: 'servfail', rcode: 'SERVFAIL', error: 'timeout', attempts: 3, earlierUs: 1_600_123 },
      { connectionId: 9, reused: false, handshake: 'resumed', hedge: { connectionId: 9, afterMs: 71 }, earlierUs: 71_250.5 },
      { source: 'local', name: null },
      { source: 'cleartext', resolverId: null, route: { kind: 'link', link: 'wlan0', suffix: 'lan', servers: '192.168.1.1', source: 'systemd-resolved' } },
      { source: 'stale', depth: 7, connectionId: 123_456 },
    ];
    // Names made the way the engine makes them (a new string per query), startedAt a wall clock in ms (not a small integer).
    const make = (i: number): QueryRecord => rec(i, { startedAt: 1_764_000_000_000.25 + i, name: `www.n${i % 1000}.example`.slice(0), latencyUs: 800.5 + i, ...kinds[i % kinds.length] });
    const log = new QueryLog(10_000);
    const before = heap();
    for (let i = 1; i <= 10_000; i++) log.push(make(i));
    const held = heap() - before;
    expect(held).toBeLessThan(2.2e6); // each record kept whole: 2.75 MB
    const back = [...log.newest()];
    expect(back).toHaveLength(10_000);
    for (const i of [10_000, 9_999, 9_998, 9_997, 9_996, 9_995, 9_994, 9_993, 1]) expect(back[10_000 - i]).toStrictEqual(make(i));
  });
});
