import { describe, expect, it } from 'vitest';
import { RingBuffer } from './ring.js';

describe('RingBuffer', () => {
  it('keeps items in order until full', () => {
    const r = new RingBuffer<number>(3);
    r.pushAll([1, 2]);
    expect(r.size).toBe(2);
    expect(r.toArray()).toEqual([1, 2]);
    expect(r.at(0)).toBe(1);
    expect(r.newest()).toBe(2);
  });

  it('drops the oldest when full and keeps absolute indexes stable', () => {
    const r = new RingBuffer<number>(3);
    r.pushAll([10, 11, 12, 13, 14]);
    expect(r.size).toBe(3);
    expect(r.total).toBe(5);
    expect(r.first).toBe(2);
    expect(r.toArray()).toEqual([12, 13, 14]);
    expect(r.atAbsolute(1)).toBeUndefined();
    expect(r.atAbsolute(2)).toBe(12);
    expect(r.atAbsolute(4)).toBe(14);
    expect(r.atAbsolute(5)).toBeUndefined();
    expect(r.at(3)).toBeUndefined();
  });

  it('holds 100,000 records at capacity and keeps the newest', () => {
    const r = new RingBuffer<number>(100_000);
    for (let i = 0; i < 250_000; i++) r.push(i);
    expect(r.size).toBe(100_000);
    expect(r.at(0)).toBe(150_000);
    expect(r.newest()).toBe(249_999);
  });

  it('rejects a bad capacity', () => {
    expect(() => new RingBuffer(0)).toThrow(RangeError);
    expect(() => new RingBuffer(1.5)).toThrow(RangeError);
  });

  it('clears', () => {
    const r = new RingBuffer<number>(2);
    r.pushAll([1, 2, 3]);
    r.clear();
    expect(r.size).toBe(0);
    expect(r.newest()).toBeUndefined();
  });

  it('drops everything held but keeps absolute indices monotonic', () => {
    const r = new RingBuffer<number>(3);
    r.pushAll([1, 2, 3, 4]);
    r.dropAll();
    expect([r.size, r.total, r.first, r.atAbsolute(3)]).toEqual([0, 4, 4, undefined]);
    r.pushAll([5, 6]);
    expect([r.size, r.first, r.toArray(), r.atAbsolute(4), r.newest()]).toEqual([2, 4, [5, 6], 5, 6]);
    r.pushAll([7, 8]);
    expect(r.toArray()).toEqual([6, 7, 8]);
  });
});
