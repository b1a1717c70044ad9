import { describe, expect, test } from 'vitest';
import { FrameReader, frame } from './framing.js';

const msg = (n: number, fill: number): Buffer => Buffer.alloc(n, fill);

describe('FrameReader', () => {
  test('joins a message split at every possible byte, including inside the length prefix', () => {
    const m = msg(300, 7);
    const framed = frame(m);
    for (let cut = 1; cut < framed.length; cut++) {
      const r = new FrameReader();
      expect(r.push(framed.subarray(0, cut))).toEqual([]);
      const out = r.push(framed.subarray(cut));
      expect(out).toHaveLength(1);
      expect(out[0]?.equals(m)).toBe(true);
      expect(r.buffered).toBe(0);
    }
  });

  test('splits several messages joined in one chunk, keeping a partial tail', () => {
    const a = msg(10, 1);
    const b = msg(20, 2);
    const c = msg(30, 3);
    const all = Buffer.concat([frame(a), frame(b), frame(c)]);
    const r = new FrameReader();
    const first = r.push(all.subarray(0, all.length - 5));
    expect(first.map((x) => x.length)).toEqual([10, 20]);
    expect(r.buffered).toBe(32 - 5);
    const rest = r.push(all.subarray(all.length - 5));
    expect(rest).toHaveLength(1);
    expect(rest[0]?.equals(c)).toBe(true);
  });

  test('byte-at-a-time delivery yields every message in order', () => {
    const msgs = [msg(1, 9), msg(0, 0), msg(513, 5), msg(2, 4)];
    const stream = Buffer.concat(msgs.map(frame));
    const r = new FrameReader();
    const out: Buffer[] = [];
    for (const byte of stream) out.push(...r.push(Buffer.from([byte])));
    expect(out.map((x) => x.length)).toEqual([1, 0, 513, 2]);
  });

  test('a frame over the limit is an error, not a hang', () => {
    const r = new FrameReader(100);
    expect(() => r.push(Buffer.from([0x01, 0x00]))).toThrow(RangeError);
  });

  test('frame() refuses messages that cannot be framed', () => {
    expect(() => frame(Buffer.alloc(70000))).toThrow(RangeError);
  });
});
