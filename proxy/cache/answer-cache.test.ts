import v8 from 'node:v8';
import vm from 'node:vm';
import dnsPacket from 'dns-packet';
import { describe, expect, test } from 'vitest';
import { readUpstreamAnswer } from '../dns/upstream-answer.js';
import { AnswerCache, STALE_TTL_SEC } from './answer-cache.js';

function answer(name: string, ttl: number, opts: { rcode?: number; tc?: boolean; pad?: number } = {}): Buffer {
  const flags = (opts.tc ? dnsPacket.TRUNCATED_RESPONSE : 0) | (opts.rcode ?? 0);
  return dnsPacket.encode({
    type: 'response',
    id: 7,
    flags,
    questions: [{ type: 'A', name }],
    answers: opts.rcode ? [] : [{ type: 'A', name, ttl, data: '192.0.2.1' }],
    additionals: opts.pad ? [{ type: 'TXT', name: 'pad.test', ttl, data: 'x'.repeat(opts.pad) }] : [],
  });
}
const q = (name: string): Buffer => dnsPacket.encode({ type: 'query', id: 1, questions: [{ type: 'A', name }] }).subarray(12);

describe('the answer cache', () => {
  test('serves a copy with TTLs lowered by the age, and the asker’s own question bytes', () => {
    const c = new AnswerCache();
    const t0 = 1_000_000;
    expect(c.set(q('www.example.test'), 0, answer('www.example.test', 300), 0, c.generation, t0)).toBe(true);
    const hit = c.get(q('www.Example.test'), 0, t0 + 42_500);
    expect(hit).toMatchObject({ stale: false, remainingSec: 257 });
    const served = c.materialize(hit!, q('WWW.Example.TEST'), t0 + 42_500);
    const d = dnsPacket.decode(served);
    expect(d.answers?.[0]).toMatchObject({ ttl: 258, data: '192.0.2.1' });
    expect(d.questions?.[0]?.name).toBe('WWW.Example.TEST');
    // The stored bytes are not the ones handed out.
    served.fill(0);
    expect(dnsPacket.decode(c.materialize(c.get(q('www.example.test'), 0, t0)!, q('www.example.test'), t0)).answers?.[0]).toMatchObject({ ttl: 300 });
  });

  test('after the TTL an answer is only stale (TTL 30), and gone after the stale bound', () => {
    const c = new AnswerCache({ staleMaxSec: 100 });
    c.set(q('a.test'), 0, answer('a.test', 10), 0, c.generation, 0);
    const stale = c.get(q('a.test'), 0, 10_000);
    expect(stale?.stale).toBe(true);
    expect(dnsPacket.decode(c.materialize(stale!, q('a.test'), 10_000)).answers?.[0]).toMatchObject({ ttl: STALE_TTL_SEC });
    expect(c.get(q('a.test'), 0, 110_500)).toBeUndefined();
    expect(c.entries).toBe(0);
  });

  test('what is never stored: TTL 0, truncated answers, REFUSED; SERVFAIL only for seconds', () => {
    const c = new AnswerCache({ servfailTtlSec: 2 });
    expect(c.set(q('a.test'), 0, answer('a.test', 0), 0, c.generation)).toBe(false);
    expect(c.set(q('a.test'), 0, answer('a.test', 300, { tc: true }), 0, c.generation)).toBe(false);
    expect(c.set(q('a.test'), 0, answer('a.test', 300, { rcode: 5 }), 5, c.generation)).toBe(false);
    expect(c.set(q('a.test'), 0, answer('a.test', 300, { rcode: 2 }), 2, c.generation, 0)).toBe(true);
    expect(c.get(q('a.test'), 0, 1_000)?.stale).toBe(false);
    expect(c.get(q('a.test'), 0, 2_500)?.stale).toBe(true);
  });

  test('bounded in bytes: the least recently used answers go first', () => {
    const one = answer('n0.test', 300, { pad: 200 }).length + 200 + 30;
    const c = new AnswerCache({ maxBytes: one * 3, admission: 'lru' });
    for (let i = 0; i < 3; i++) c.set(q(`n${i}.test`), 0, answer(`n${i}.test`, 300, { pad: 200 }), 0, c.generation);
    c.get(q('n0.test'), 0); // n0 is now the most recently used
    c.set(q('n3.test'), 0, answer('n3.test', 300, { pad: 200 }), 0, c.generation);
    expect(c.get(q('n1.test'), 0)).toBeUndefined();
    expect(c.get(q('n0.test'), 0)).toBeDefined();
    expect(c.get(q('n3.test'), 0)).toBeDefined();
    expect(c.bytes).toBeLessThanOrEqual(one * 3);
  });

  test('an answer to a question asked before clear() is refused: a flush is never undone by a late answer', () => {
    const c = new AnswerCache();
    const askedBefore = c.generation;
    c.clear();
    expect(c.set(q('a.test'), 0, answer('a.test', 300), 0, askedBefore)).toBe(false);
    expect(c.get(q('a.test'), 0)).toBeUndefined();
    expect(c.set(q('a.test'), 0, answer('a.test', 300), 0, c.generation)).toBe(true);
  });

  test('admission by frequency: a loop of names larger than the cache keeps a steady share of it (LRU keeps none), and a one-off scan does not flush a popular name', () => {
    const one = answer('n0.test', 300, { pad: 200 }).length + 200 + 30;
    const loop = (admission: 'lru' | 'frequency'): number => {
      const c = new AnswerCache({ maxBytes: one * 50, admission });
      let hits = 0;
      for (let round = 0; round < 5; round++) {
        for (let i = 0; i < 80; i++) {
          const key = q(`n${i}.test`);
          if (c.get(key, 0, 0)) hits++;
          else c.set(key, 0, answer(`n${i}.test`, 300, { pad: 200 }), 0, c.generation, 0);
        }
      }
      return hits;
    };
    // 80 names in a cache of 50, five times round: LRU evicts each just before it comes back.
    expect(loop('lru')).toBe(0);
    expect(loop('frequency')).toBeGreaterThanOrEqual(4 * 40);

    const c = new AnswerCache({ maxBytes: one * 20 });
    for (let k = 0; k < 5; k++) {
      if (!c.get(q('popular.test'), 0, 0)) c.set(q('popular.test'), 0, answer('popular.test', 300, { pad: 200 }), 0, c.generation, 0);
    }
    for (let i = 0; i < 200; i++) if (!c.get(q(`scan${i}.test`), 0, 0)) c.set(q(`scan${i}.test`), 0, answer(`scan${i}.test`, 300, { pad: 200 }), 0, c.generation, 0);
    expect(c.get(q('popular.test'), 0, 0)?.stale).toBe(false);
  });

  test('bounded in memory, not only in accounted bytes: a full cache takes about its budget, whatever the queries around it allocated', () => {
    // A full collection, as --expose-gc gives (this worker runs without it), that frees
    // array buffers before it returns (so that process.memoryUsage() can be compared).
    v8.setFlagsFromString('--expose-gc');
    v8.setFlagsFromString('--no-concurrent-array-buffer-sweeping');
    const gc = vm.runInNewContext('gc') as () => void;
    const budget = 1024 * 1024;
    const answers = Array.from({ length: 20_000 }, (_, i) => answer(`n${i}.example.test`, 300));
    const questions = answers.map((_, i) => q(`n${i}.example.test`));
    // As the caching upstream stores them: with what reading the answer found (the hits' layout).
    const layouts = answers.map((a, i) => {
      const { raw: _raw, ...read } = readUpstreamAnswer(a as Buffer, { key: { name: `n${i}.example.test`, type: 'A', class: 'IN' }, bytes: questions[i] as Buffer });
      return read;
    });
    const fill = (): AnswerCache => {
      const c = new AnswerCache({ maxBytes: budget, admission: 'lru' });
      for (let i = 0; i < answers.length; i++) {
        // What a query allocates around a store: short-lived buffers from Node's shared pool.
        for (let j = 0; j < 4; j++) Buffer.allocUnsafe(150).fill(j);
        c.set(questions[i] as Buffer, 0, answers[i] as Buffer, 0, c.generation, undefined, layouts[i]);
      }
      return c;
    };
    // Warm (compiled) first; then the least of three tries: this worker allocates on its own meanwhile, never less.
    const held: AnswerCache[] = [fill()];
    let taken = Infinity;
    for (let t = 0; t < 3; t++) {
      held.length = 0;
      gc();
      const before = process.memoryUsage();
      held.push(fill());
      gc();
      const after = process.memoryUsage();
      taken = Math.min(taken, after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers));
      expect(held[0]?.entries).toBeGreaterThan(2000);
      expect(held[0]?.bytes).toBeLessThanOrEqual(budget);
    }
    // (The inputs stay alive until after the measurement, so that only the cache's growth is counted.)
    expect(answers.length + questions.length + layouts.length).toBe(60_000);
    // Measured: 1.2x the budget (340 bytes an entry: the entry, its message as a string, its TTL
    // offsets, its slot in the map); it was 4.7x (1,450 bytes: a key string, two typed arrays, and
    // a slice of Node's shared pool that kept a whole 8 KiB chunk alive).
    expect(taken).toBeLessThan(1.6 * budget);
  });
});
