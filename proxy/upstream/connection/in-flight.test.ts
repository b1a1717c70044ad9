import { describe, expect, test } from 'vitest';
import { answerTo, request } from '../../../test-support/upstream-requests.js';
import { InFlightMap } from './in-flight.js';

interface Entry {
  readonly question: ReturnType<typeof request>['question'];
  readonly name: string;
}

function add(map: InFlightMap<Entry>, name: string): { id: number; wire: Buffer } {
  const r = request(name);
  const id = map.add({ question: r.question, name });
  r.wire.writeUInt16BE(id, 2);
  return { id, wire: r.wire };
}

describe('the in-flight map of one connection', () => {
  test('gives every query a fresh ID no other query in flight holds', () => {
    const map = new InFlightMap<Entry>();
    const ids = new Set<number>();
    for (let i = 0; i < 5000; i++) ids.add(add(map, `n${i}.test`).id);
    expect(ids.size).toBe(5000);
    expect(map.size).toBe(5000);
  });

  test('an answer is matched by ID, leaves the map, and says whether it overtook an earlier query', () => {
    const map = new InFlightMap<Entry>();
    const a = add(map, 'a.test');
    const b = add(map, 'b.test');
    const second = map.match(answerTo(b.wire));
    expect(second).toMatchObject({ kind: 'answer', outOfOrder: true, entry: { name: 'b.test' } });
    const first = map.match(answerTo(a.wire));
    expect(first).toMatchObject({ kind: 'answer', outOfOrder: false, entry: { name: 'a.test' } });
    expect(map.size).toBe(0);
    // A second copy of an answer finds nothing.
    expect(map.match(answerTo(a.wire))).toEqual({ kind: 'unknown' });
  });

  test('an answer that does not echo the question is a mismatch and the query stays pending', () => {
    const map = new InFlightMap<Entry>();
    const a = add(map, 'asked.test');
    const m = map.match(answerTo(a.wire, '192.0.2.1', 'spoofed.test'));
    expect(m).toMatchObject({ kind: 'mismatch', asked: { name: 'asked.test' }, got: { name: 'spoofed.test' } });
    expect(map.size).toBe(1);
    expect(map.match(answerTo(a.wire))).toMatchObject({ kind: 'answer' });
  });

  test('a cancelled query is gone: the map is empty and a late answer is unknown', () => {
    const map = new InFlightMap<Entry>();
    const a = add(map, 'slow.test');
    expect(map.cancel(a.id)).toBe(true);
    expect(map.cancel(a.id)).toBe(false);
    expect(map.size).toBe(0);
    expect(map.match(answerTo(a.wire))).toEqual({ kind: 'unknown' });
  });

  test('failAll hands back every query once, in send order, and empties the map', () => {
    const map = new InFlightMap<Entry>();
    const ids = ['x.test', 'y.test', 'z.test'].map((n) => add(map, n).id);
    const all = map.failAll();
    expect(all.map(([id, e]) => [id, e.name])).toEqual([
      [ids[0], 'x.test'],
      [ids[1], 'y.test'],
      [ids[2], 'z.test'],
    ]);
    expect(map.size).toBe(0);
    expect(map.failAll()).toEqual([]);
  });

  test('garbage is never an answer', () => {
    const map = new InFlightMap<Entry>();
    const a = add(map, 'a.test');
    expect(map.match(Buffer.alloc(1))).toEqual({ kind: 'unknown' });
    const truncated = Buffer.from([a.wire[2] as number, a.wire[3] as number, 0x81]);
    expect(map.match(truncated).kind).toBe('mismatch');
    expect(map.size).toBe(1);
  });
});
