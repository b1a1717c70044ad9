import { describe, expect, it } from 'vitest';
import type { QueryRecord } from '../../../proxy/control/api-types.js';
import { blockedFromHash, compileFilter, EMPTY_FILTER, FilteredIndex, filterToParams, isFilterActive } from './filters.js';
import { record } from './fixtures.test-helpers.js';
import { RingBuffer } from './ring.js';

describe('compileFilter', () => {
  it('matches everything when empty', () => {
    expect(isFilterActive(EMPTY_FILTER)).toBe(false);
    expect(compileFilter(EMPTY_FILTER)(record())).toBe(true);
  });

  it('name is a case-insensitive substring; a trailing dot is ignored', () => {
    const f = compileFilter({ ...EMPTY_FILTER, name: 'EXAMPLE.test.' });
    expect(f(record({ name: 'www.example.test' }))).toBe(true);
    expect(f(record({ name: 'other.test' }))).toBe(false);
    expect(f(record({ name: null }))).toBe(false);
  });

  it("hides dotstub's own checks unless asked, with and without other filters", () => {
    const own = record({ name: 'liveness.dotstub.resolver.arpa', source: 'local', internal: true });
    expect(compileFilter(EMPTY_FILTER)(own)).toBe(false);
    expect(compileFilter({ ...EMPTY_FILTER, name: 'liveness' })(own)).toBe(false);
    expect(compileFilter({ ...EMPTY_FILTER, showOwn: true })(own)).toBe(true);
    expect(compileFilter({ ...EMPTY_FILTER, showOwn: true, name: 'liveness' })(own)).toBe(true);
    // Showing them is not a filter: the count still reads "held", not "match".
    expect(isFilterActive({ ...EMPTY_FILTER, showOwn: true })).toBe(false);
  });

  it('type, rcode and slow-only combine', () => {
    const f = compileFilter({ ...EMPTY_FILTER, type: 'aaaa', rcode: 'NXDOMAIN', slowOnly: true, slowMs: 50 });
    expect(f(record({ type: 'AAAA', rcode: 'NXDOMAIN', latencyUs: 60_000 }))).toBe(true);
    expect(f(record({ type: 'AAAA', rcode: 'NXDOMAIN', latencyUs: 40_000 }))).toBe(false);
    expect(f(record({ type: 'A', rcode: 'NXDOMAIN', latencyUs: 60_000 }))).toBe(false);
    expect(f(record({ type: 'AAAA', rcode: 'NOERROR', latencyUs: 60_000 }))).toBe(false);
  });

  it('turns into the API’s query parameters', () => {
    expect(filterToParams({ name: ' n1.test ', type: 'A', rcode: '', slowOnly: true, slowMs: 100, showOwn: false }).toString()).toBe(
      'name=n1.test&type=A&minLatencyMs=100',
    );
    expect(filterToParams(EMPTY_FILTER).toString()).toBe('');
  });
});

describe('the blocked filter', () => {
  const said = record({ rcode: 'NXDOMAIN', blocked: { kind: 'ede', code: 15, name: 'Blocked', text: 'malware' } });
  const sink = record({ blocked: { kind: 'zero-address', address: '0.0.0.0' } });
  const plain = record({ extendedErrors: [{ code: 3, name: 'Stale Answer', text: '' }] });

  it('picks what the resolver blocked, what answered 0.0.0.0, or either, as the API does', () => {
    const pick = (blocked: '' | 'any' | 'resolver' | 'null-address'): boolean[] => [said, sink, plain].map(compileFilter({ ...EMPTY_FILTER, blocked }));
    expect(pick('resolver')).toEqual([true, false, false]);
    expect(pick('null-address')).toEqual([false, true, false]);
    expect(pick('any')).toEqual([true, true, false]);
    expect(pick('')).toEqual([true, true, true]);
    expect(isFilterActive({ ...EMPTY_FILTER, blocked: 'resolver' })).toBe(true);
    expect(filterToParams({ ...EMPTY_FILTER, blocked: 'resolver' }).toString()).toBe('blocked=resolver');
  });

  it('the Overview links to it: #/queries?blocked=resolver', () => {
    expect(blockedFromHash('#/queries?blocked=resolver')).toBe('resolver');
    expect(blockedFromHash('#/queries?blocked=nonsense')).toBe('');
    expect(blockedFromHash('#/queries')).toBe('');
  });
});

describe('FilteredIndex', () => {
  const fill = (ring: RingBuffer<QueryRecord>, from: number, to: number): void => {
    for (let i = from; i < to; i++) ring.push(record({ seq: i, type: i % 2 ? 'AAAA' : 'A' }));
  };

  it('tests only new records and drops evicted ones', () => {
    const ring = new RingBuffer<QueryRecord>(10);
    const idx = new FilteredIndex(compileFilter({ ...EMPTY_FILTER, type: 'A' }));
    fill(ring, 0, 6);
    idx.sync(ring);
    expect(idx.length).toBe(3);
    expect(ring.atAbsolute(idx.absoluteAt(idx.end - 1)!)?.seq).toBe(4);
    fill(ring, 6, 16); // evicts 0…5
    idx.sync(ring);
    expect(idx.length).toBe(5);
    const seqs = [];
    for (let k = idx.start; k < idx.end; k++) seqs.push(ring.atAbsolute(idx.absoluteAt(k)!)!.seq);
    expect(seqs).toEqual([6, 8, 10, 12, 14]);
  });

  it('a new predicate rescans what the ring holds', () => {
    const ring = new RingBuffer<QueryRecord>(100);
    fill(ring, 0, 10);
    const idx = new FilteredIndex(() => true);
    idx.sync(ring);
    expect(idx.length).toBe(10);
    idx.setPredicate(compileFilter({ ...EMPTY_FILTER, type: 'AAAA' }));
    idx.sync(ring);
    expect(idx.length).toBe(5);
  });

  it('endBefore freezes a paused view at a ring position', () => {
    const ring = new RingBuffer<QueryRecord>(100);
    fill(ring, 0, 10);
    const idx = new FilteredIndex(compileFilter({ ...EMPTY_FILTER, type: 'A' }));
    idx.sync(ring);
    const pausedAt = ring.total;
    fill(ring, 10, 20);
    idx.sync(ring);
    expect(idx.length).toBe(10);
    expect(idx.endBefore(pausedAt) - idx.start).toBe(5);
  });

  it('keeps up with 100,000 records cheaply and compacts', () => {
    const ring = new RingBuffer<QueryRecord>(100_000);
    const idx = new FilteredIndex(() => true);
    for (let batch = 0; batch < 30; batch++) {
      for (let i = 0; i < 10_000; i++) ring.push(record({ seq: batch * 10_000 + i }));
      idx.sync(ring);
    }
    expect(idx.length).toBe(100_000);
    expect(ring.atAbsolute(idx.absoluteAt(idx.start)!)?.seq).toBe(200_000);
    expect(ring.atAbsolute(idx.absoluteAt(idx.end - 1)!)?.seq).toBe(299_999);
  });
});
