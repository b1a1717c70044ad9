/**
 * A Server-Sent Events parser for a stream read with fetch (the dashboard
 * can't use EventSource: it can't send the Authorization header). Follows
 * the HTML spec's event-stream interpretation for the fields the control
 * API sends: `event`, `data` (joined with \n), `retry`; comment lines
 * (`: ping`) are ignored; lines end in \n, \r\n or \r; an event is
 * dispatched at a blank line, and one with no data is dropped.
 *
 * Text in, events out: chunk boundaries may fall anywhere, even between
 * \r and \n, so the unfinished tail is kept for the next feed().
 */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
}

export class SseParser {
  #buffer = '';
  #event = '';
  #data: string[] = [];
  /** The server's `retry:` in ms, if it sent one. */
  retryMs: number | null = null;

  feed(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    this.#buffer += text;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.#buffer);
      if (!m) break;
      // A lone \r at the very end may be the first half of \r\n: wait for more.
      if (m[0] === '\r' && m.index === this.#buffer.length - 1) break;
      const line = this.#buffer.slice(0, m.index);
      this.#buffer = this.#buffer.slice(m.index + m[0].length);
      this.#line(line, out);
    }
    return out;
  }

  #line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.#data.length > 0) out.push({ event: this.#event || 'message', data: this.#data.join('\n') });
      this.#event = '';
      this.#data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.#event = value;
    else if (field === 'data') this.#data.push(value);
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
  }
}
