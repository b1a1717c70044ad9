import { describe, expect, test } from 'vitest';
import type { QueryRecord } from '../api-types.js';
import { csvCell, csvHeader, csvLine, EXPORT_COLUMNS, exportFilename, exportRow } from './query-export.js';
import { record } from './query-record.test-helpers.js';

const base: QueryRecord = record({ seq: 3, startedAt: Date.UTC(2026, 11, 2, 12, 0, 0), name: 'n3.test', latencyUs: 1234.4, upstreamUs: 1100 });
const label = (id: string): string => (id === 'quad9' ? 'Quad9' : id);
const cellsOf = (r: QueryRecord): string[] => csvLine(r, label).trim().split(',');
const col = (c: (typeof EXPORT_COLUMNS)[number]): number => EXPORT_COLUMNS.indexOf(c);

describe('the query log as a file', () => {
  test('CSV: RFC 4180 quoting, no spreadsheet formulas, CRLF', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvCell('-1+1')).toBe("'-1+1");
    expect(csvCell(-1)).toBe('-1');
    expect(csvCell(null)).toBe('');
    expect(csvCell(true)).toBe('true');
    expect(csvHeader()).toBe(EXPORT_COLUMNS.join(',') + '\r\n');
    const line = csvLine({ ...base, name: '=cmd|calc.test' }, label);
    expect(line.endsWith('\r\n')).toBe(true);
    expect(line.trim().split(',')).toHaveLength(EXPORT_COLUMNS.length);
    expect(line.trim().split(',')[col('name')]).toBe("'=cmd|calc.test");
  });

  test('times in milliseconds to the microsecond, the resolver by name and by id', () => {
    const c = cellsOf(base);
    expect(c[col('time')]).toBe('2026-12-02T12:00:00.000Z');
    expect([c[col('latencyMs')], c[col('upstreamMs')], c[col('queueMs')]]).toEqual(['1.234', '1.1', '0']);
    expect([c[col('resolver')], c[col('resolverId')]]).toEqual(['Quad9', 'quad9']);
    expect(cellsOf({ ...base, resolverId: null, connectionId: null, reused: null })[col('resolver')]).toBe('');
  });

  test('a query sent again after silence: the connection and the silence, empty otherwise', () => {
    const hedged = cellsOf({ ...base, connectionId: 7, hedge: { connectionId: 7, afterMs: 190 } });
    expect([hedged[col('hedgeConnection')], hedged[col('hedgeAfterMs')]]).toEqual(['7', '190']);
    expect([cellsOf(base)[col('hedgeConnection')], cellsOf(base)[col('hedgeAfterMs')]]).toEqual(['', '']);
    expect(exportRow({ ...base, hedge: { connectionId: 2, afterMs: 55 } }, label)).toMatchObject({ hedgeConnection: 2, hedgeAfterMs: 55 });
    // The copy answered: the time before it, apart from its own queue and round trip.
    expect(cellsOf({ ...base, connectionId: 2, hedge: { connectionId: 2, afterMs: 55 }, earlierUs: 61_250 })[col('earlierMs')]).toBe('61.25');
    expect(cellsOf(base)[col('earlierMs')]).toBe('');
  });

  test('where the name router sent it, one column a fact; dotstub’s own checks marked', () => {
    const link = cellsOf({ ...base, route: { kind: 'link', link: 'veth0', suffix: 'lan', servers: '10.99.0.1', source: 'systemd-resolved' } });
    expect(link.slice(col('route'), col('routeWhy') + 1)).toEqual(['link', 'veth0', '10.99.0.1', 'lan', 'systemd-resolved', '']);
    const here = cellsOf({ ...base, route: { kind: 'answered', why: '.local is for mDNS' } });
    expect(here.slice(col('route'), col('routeWhy') + 1)).toEqual(['answered', '', '', '', '', '.local is for mDNS']);
    expect(cellsOf(base).slice(col('route'), col('routeWhy') + 1)).toEqual(['', '', '', '', '', '']);
    expect(cellsOf({ ...base, internal: true })[col('internal')]).toBe('true');
    expect(cellsOf(base)[col('internal')]).toBe('false');
  });

  test('why it was blocked: the EDE that said so, its name and text, the others after; a 0.0.0.0 answer marked', () => {
    const said = cellsOf({
      ...base,
      rcode: 'NXDOMAIN',
      extendedErrors: [
        { code: 3, name: 'Stale Answer', text: 'old' },
        { code: 15, name: 'Blocked', text: 'malware: lab list' },
      ],
      blocked: { kind: 'ede', code: 15, name: 'Blocked', text: 'malware: lab list' },
    });
    expect(said.slice(col('blocked'), col('edeOthers') + 1)).toEqual(['ede', '15', 'Blocked', 'malware: lab list', '3 Stale Answer: old']);
    const sink = cellsOf({ ...base, blocked: { kind: 'zero-address', address: '0.0.0.0' } });
    expect(sink.slice(col('blocked'), col('edeOthers') + 1)).toEqual(['zero-address', '', '', '', '']);
    const stale = cellsOf({ ...base, extendedErrors: [{ code: 3, name: 'Stale Answer', text: '' }] });
    expect(stale.slice(col('blocked'), col('edeOthers') + 1)).toEqual(['', '3', 'Stale Answer', '', '']);
    expect(cellsOf(base).slice(col('blocked'), col('edeOthers') + 1)).toEqual(['', '', '', '', '']);
  });

  test('file names carry the time, safe for every file system', () => {
    expect(exportFilename('csv', Date.UTC(2026, 10, 22, 6, 40))).toBe('dotstub-queries-2026-11-22T06-40-00-000Z.csv');
    expect(exportFilename('json', Date.UTC(2026, 10, 22, 6, 40))).toBe('dotstub-queries-2026-11-22T06-40-00-000Z.json');
  });
});
