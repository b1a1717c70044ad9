import { describe, expect, it } from 'vitest';
import type { QueryRecord } from '../../../proxy/control/api-types.js';
import { EXPORT_COLUMNS } from '../../../proxy/control/api-client/query-export.js';
import { shownRecords, toCsv, toJson } from './export.js';
import { compileFilter, EMPTY_FILTER, FilteredIndex } from './filters.js';
import { record } from './fixtures.test-helpers.js';
import { RingBuffer } from './ring.js';

const resolvers = [{ id: 'quad9', label: 'Quad9' }];

function ringOf(n: number, capacity = 1000): RingBuffer<QueryRecord> {
  const ring = new RingBuffer<QueryRecord>(capacity);
  for (let i = 1; i <= n; i++) ring.push(record({ seq: i, name: `n${i}.test`, type: i % 2 ? 'A' : 'AAAA' }));
  return ring;
}

describe('export = what the screen counts', () => {
  it('the filtered rows, newest first, as many as the index counts', () => {
    const ring = ringOf(20);
    const idx = new FilteredIndex(compileFilter({ ...EMPTY_FILTER, type: 'AAAA' }));
    idx.sync(ring);
    const rows = [...shownRecords(idx, idx.end, ring)];
    expect(rows).toHaveLength(idx.length);
    expect(rows.map((r) => r.seq)).toEqual([20, 18, 16, 14, 12, 10, 8, 6, 4, 2]);
  });

  it('paused: only the rows up to the pause point', () => {
    const ring = ringOf(10);
    const idx = new FilteredIndex(compileFilter(EMPTY_FILTER));
    idx.sync(ring);
    const pausedAt = ring.total;
    for (let i = 11; i <= 15; i++) ring.push(record({ seq: i }));
    idx.sync(ring);
    const end = idx.endBefore(pausedAt);
    expect(end - idx.start).toBe(10);
    expect([...shownRecords(idx, end, ring)].map((r) => r.seq)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  it('after the ring evicted old rows, exactly the rows still held', () => {
    const ring = ringOf(30, 25);
    const idx = new FilteredIndex(compileFilter(EMPTY_FILTER));
    idx.sync(ring);
    expect([...shownRecords(idx, idx.end, ring)]).toHaveLength(25);
  });
});

describe('file formats', () => {
  it('CSV: header, resolver names (not ids), CRLF, formula-safe cells', () => {
    const csv = toCsv([record({ name: '=cmd|calc.test', resolverId: 'quad9', latencyUs: 1500 }), record({ resolverId: null, connectionId: null, reused: null })], resolvers);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe(EXPORT_COLUMNS.join(','));
    expect(lines).toHaveLength(4); // header, 2 rows, final empty
    const cols = lines[1]!.split(',');
    expect(cols[EXPORT_COLUMNS.indexOf('resolver')]).toBe('Quad9');
    expect(cols[EXPORT_COLUMNS.indexOf('resolverId')]).toBe('quad9');
    expect(cols[EXPORT_COLUMNS.indexOf('name')]).toBe("'=cmd|calc.test");
    expect(cols[EXPORT_COLUMNS.indexOf('latencyMs')]).toBe('1.5');
    expect(lines[2]!.split(',')[EXPORT_COLUMNS.indexOf('resolver')]).toBe('');
  });

  it('JSON: one object per row with the resolver name; empty is []', () => {
    const parsed = JSON.parse(toJson([record({ resolverId: 'quad9' })], resolvers)) as Record<string, unknown>[];
    expect(parsed).toHaveLength(1);
    expect(parsed[0]).toMatchObject({ resolver: 'Quad9', name: 'example.test', rcode: 'NOERROR' });
    expect(JSON.parse(toJson([], resolvers))).toEqual([]);
  });
});
