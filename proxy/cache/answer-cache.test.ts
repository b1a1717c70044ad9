import dnsPacket from 'dns-packet';
import { describe, expect, test } from 'vitest';
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
    expect(c.set('k', answer('www.example.test', 300), 0, c.generation, t0)).toBe(true);
    const hit = c.get('k', t0 + 42_500);
    expect(hit).toMatchObject({ stale: false, remainingSec: 257 });
    const served = c.materialize(hit!, q('WWW.Example.TEST'), t0 + 42_500);
    const d = dnsPacket.decode(served);
    expect(d.answers?.[0]).toMatchObject({ ttl: 258, data: '192.0.2.1' });
    expect(d.questions?.[0]?.name).toBe('WWW.Example.TEST');
    // The stored bytes are not the ones handed out.
    served.fill(0);
    expect(dnsPacket.decode(c.materialize(c.get('k', t0)!, q('www.example.test'), t0)).answers?.[0]).toMatchObject({ ttl: 300 });
  });

  test('after the TTL an answer is only stale (TTL 30), and gone after the stale bound', () => {
    const c = new AnswerCache({ staleMaxSec: 100 });
    c.set('k', answer('a.test', 10), 0, c.generation, 0);
    const stale = c.get('k', 10_000);
    expect(stale?.stale).toBe(true);
    expect(dnsPacket.decode(c.materialize(stale!, q('a.test'), 10_000)).answers?.[0]).toMatchObject({ ttl: STALE_TTL_SEC });
    expect(c.get('k', 110_500)).toBeUndefined();
    expect(c.entries).toBe(0);
  });

  test('what is never stored: TTL 0, truncated answers, REFUSED; SERVFAIL only for seconds', () => {
    const c = new AnswerCache({ servfailTtlSec: 2 });
    expect(c.set('zero', answer('a.test', 0), 0, c.generation)).toBe(false);
    expect(c.set('tc', answer('a.test', 300, { tc: true }), 0, c.generation)).toBe(false);
    expect(c.set('refused', answer('a.test', 300, { rcode: 5 }), 5, c.generation)).toBe(false);
    expect(c.set('sf', answer('a.test', 300, { rcode: 2 }), 2, c.generation, 0)).toBe(true);
    expect(c.get('sf', 1_000)?.stale).toBe(false);
    expect(c.get('sf', 2_500)?.stale).toBe(true);
  });

  test('bounded in bytes: the least recently used answers go first', () => {
    const one = answer('n0.test', 300, { pad: 200 }).length + 200 + 30;
    const c = new AnswerCache({ maxBytes: one * 3, admission: 'lru' });
    for (let i = 0; i < 3; i++) c.set(`n${i}`, answer(`n${i}.test`, 300, { pad: 200 }), 0, c.generation);
    c.get('n0'); // n0 is now the most recently used
    c.set('n3', answer('n3.test', 300, { pad: 200 }), 0, c.generation);
    expect(c.get('n1')).toBeUndefined();
    expect(c.get('n0')).toBeDefined();
    expect(c.get('n3')).toBeDefined();
    expect(c.bytes).toBeLessThanOrEqual(one * 3);
  });

  test('an answer to a question asked before clear() is refused: a flush is never undone by a late answer', () => {
    const c = new AnswerCache();
    const askedBefore = c.generation;
    c.clear();
    expect(c.set('late', answer('a.test', 300), 0, askedBefore)).toBe(false);
    expect(c.get('late')).toBeUndefined();
    expect(c.set('late', answer('a.test', 300), 0, c.generation)).toBe(true);
  });

  test('admission by frequency: a loop of names larger than the cache keeps a steady share of it (LRU keeps none), and a one-off scan does not flush a popular name', () => {
    const one = answer('n0.test', 300, { pad: 200 }).length + 200 + 30;
    const loop = (admission: 'lru' | 'frequency'): number => {
      const c = new AnswerCache({ maxBytes: one * 50, admission });
      let hits = 0;
      for (let round = 0; round < 5; round++) {
        for (let i = 0; i < 80; i++) {
          const key = `n${i}`;
          if (c.get(key, 0)) hits++;
          else c.set(key, answer(`n${i}.test`, 300, { pad: 200 }), 0, c.generation, 0);
        }
      }
      return hits;
    };
    // 80 names in a cache of 50, five times round: LRU evicts each just before it comes back.
    expect(loop('lru')).toBe(0);
    expect(loop('frequency')).toBeGreaterThanOrEqual(4 * 40);

    const c = new AnswerCache({ maxBytes: one * 20 });
    for (let k = 0; k < 5; k++) {
      if (!c.get('popular', 0)) c.set('popular', answer('popular.test', 300, { pad: 200 }), 0, c.generation, 0);
    }
    for (let i = 0; i < 200; i++) if (!c.get(`scan${i}`, 0)) c.set(`scan${i}`, answer(`scan${i}.test`, 300, { pad: 200 }), 0, c.generation, 0);
    expect(c.get('popular', 0)?.stale).toBe(false);
  });
});
