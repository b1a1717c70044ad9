import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.js';

describe('SseParser', () => {
  it('parses the control stream format: retry, named events, comments', () => {
    const p = new SseParser();
    const events = p.feed('retry: 2000\n\nevent: batch\ndata: {"at":1}\n\n: ping\n\nevent: batch\ndata: {"at":2}\n\n');
    expect(p.retryMs).toBe(2000);
    expect(events).toEqual([
      { event: 'batch', data: '{"at":1}', id: undefined },
      { event: 'batch', data: '{"at":2}', id: undefined },
    ]);
  });

  it('assembles events split at any byte, with CRLF, CR or LF line ends', () => {
    const text = 'event: batch\r\ndata: one\r\ndata: two\r\n\r\ndata:three\r\rid: 7\ndata: four\n\n';
    for (let cut = 1; cut < text.length; cut++) {
      const p = new SseParser();
      const events = [...p.feed(text.slice(0, cut)), ...p.feed(text.slice(cut))];
      expect(events, `cut at ${cut}`).toEqual([
        { event: 'batch', data: 'one\ntwo', id: undefined },
        { event: 'message', data: 'three', id: undefined },
        { event: 'message', data: 'four', id: '7' },
      ]);
    }
  });

  it('an event is dispatched only at its blank line; multi-line data joins with \\n; no data → nothing', () => {
    const p = new SseParser();
    expect(p.feed('data: one\ndata: two\n')).toEqual([]);
    expect(p.feed('\n')).toEqual([{ event: 'message', data: 'one\ntwo', id: undefined }]);
    expect(p.feed('event: batch\n\n')).toEqual([]);
    // The event name doesn't leak into the next event.
    expect(p.feed('data:x\n\n')).toEqual([{ event: 'message', data: 'x', id: undefined }]);
  });

  it('keeps the last event id for the events after it (as EventSource does); an id with NUL is ignored', () => {
    const p = new SseParser();
    expect(p.feed('id: 41\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\nid\ndata: d\n\n')).toEqual([
      { event: 'message', data: 'a', id: '41' },
      { event: 'message', data: 'b', id: '41' },
      { event: 'message', data: 'c', id: '41' },
      // A bare `id` empties it.
      { event: 'message', data: 'd', id: '' },
    ]);
  });

  it('honours retry: only a whole number of ms, the latest one wins; unknown fields are ignored', () => {
    const p = new SseParser();
    expect(p.retryMs).toBeUndefined();
    expect(p.feed('retry: soon\nfoo\ndata: y\n\n')).toEqual([{ event: 'message', data: 'y', id: undefined }]);
    expect(p.retryMs).toBeUndefined();
    p.feed('retry: 300\n\n');
    expect(p.retryMs).toBe(300);
    p.feed('retry: 1.5\nretry: 4500\n\n');
    expect(p.retryMs).toBe(4500);
  });

  it('refuses a line over its bound without holding it: memory stays under the bound, and nothing is kept after', () => {
    const p = new SseParser({ maxEventChars: 100 });
    // A server that never ends its line, 30 characters at a time.
    let refused: unknown;
    let most = 0;
    try {
      for (let i = 0; i < 100; i++) {
        p.feed('data: 0123456789012345678901234'.slice(0, 30));
        most = Math.max(most, p.bufferedChars);
      }
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(RangeError);
    expect(most).toBeLessThanOrEqual(100);
    expect(p.bufferedChars).toBe(0);
    // One chunk far over the bound is refused before it is kept.
    const q = new SseParser({ maxEventChars: 100 });
    expect(() => q.feed(`data: ${'x'.repeat(10_000)}`)).toThrow(RangeError);
    expect(q.bufferedChars).toBe(0);
  });

  it('refuses an event whose data lines add up over the bound, and takes events under it however large the chunk', () => {
    const p = new SseParser({ maxEventChars: 100 });
    expect(() => {
      for (let i = 0; i < 20; i++) p.feed('data: 0123456789\n');
    }).toThrow(RangeError);
    expect(p.bufferedChars).toBe(0);
    // Many small events in one large chunk are each under the bound.
    const q = new SseParser({ maxEventChars: 100 });
    expect(q.feed('data: 0123456789\n\n'.repeat(1000))).toHaveLength(1000);
  });
});
