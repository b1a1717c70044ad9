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

  it('refuses an event larger than its bound', () => {
    const p = new SseParser({ maxEventBytes: 100 });
    expect(() => p.feed(`data: ${'x'.repeat(200)}`)).toThrow(RangeError);
    const q = new SseParser({ maxEventBytes: 100 });
    expect(() => {
      for (let i = 0; i < 20; i++) q.feed('data: 0123456789\n');
    }).toThrow(RangeError);
  });
});
