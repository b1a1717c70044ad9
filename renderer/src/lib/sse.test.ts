import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.js';

describe('SseParser', () => {
  it('reads the control API stream: retry, named batches, pings', () => {
    const p = new SseParser();
    const out = p.feed('retry: 2000\n\nevent: batch\ndata: {"a":1}\n\n: ping\n\nevent: batch\ndata: {"a":2}\n\n');
    expect(out).toEqual([
      { event: 'batch', data: '{"a":1}' },
      { event: 'batch', data: '{"a":2}' },
    ]);
    expect(p.retryMs).toBe(2000);
  });

  it('chunk boundaries anywhere, CRLF split between chunks included', () => {
    const text = 'event: batch\r\ndata: {"queries":[1,2,3]}\r\n\r\nevent: batch\r\ndata: x\r\n\r\n';
    for (let cut = 1; cut < text.length; cut++) {
      const p = new SseParser();
      const out = [...p.feed(text.slice(0, cut)), ...p.feed(text.slice(cut))];
      expect(out, `cut at ${cut}`).toEqual([
        { event: 'batch', data: '{"queries":[1,2,3]}' },
        { event: 'batch', data: 'x' },
      ]);
    }
  });

  it('an event is dispatched only at its blank line; multi-line data joins with \\n; no data → nothing', () => {
    const p = new SseParser();
    expect(p.feed('data: one\ndata: two\n')).toEqual([]);
    expect(p.feed('\n')).toEqual([{ event: 'message', data: 'one\ntwo' }]);
    expect(p.feed('event: batch\n\n')).toEqual([]);
    // The event name doesn't leak into the next event.
    expect(p.feed('data:x\n\n')).toEqual([{ event: 'message', data: 'x' }]);
  });

  it('ignores unknown fields and a bad retry', () => {
    const p = new SseParser();
    expect(p.feed('id: 7\nretry: soon\nfoo\ndata: y\n\n')).toEqual([{ event: 'message', data: 'y' }]);
    expect(p.retryMs).toBeNull();
  });
});
