/**
 * The Server-Sent Events parser both clients of GET /api/stream use (the
 * desktop app over node:http, the dashboard over fetch: neither can use
 * EventSource, which can't send the Authorization header). The HTML spec's
 * event-stream interpretation: `event`, `data` (joined with \n), `id` (kept
 * for the events after it, as EventSource's last event ID is), `retry` (the
 * reconnection time the server asks for); comment lines (`: ping`) are
 * ignored; lines end in \n, \r\n or \r, and a chunk may end anywhere, even
 * between \r and \n; an event is dispatched at a blank line, one with no
 * data is dropped. Text in, events out: pure, so chunk boundaries are
 * tested without a socket.
 *
 * Invariant: what the parser holds (the unfinished line and the data of the
 * event being assembled) never exceeds `maxEventChars`. A line or event that
 * would is refused with a RangeError before it is kept, and the parser lets
 * go of everything it held: a server that never ends an event can't grow the
 * client's memory (the caller ends that stream).
 */
export interface SseEvent {
  /** `event:` field; "message" when absent. */
  readonly event: string;
  readonly data: string;
  /** The last `id:` the stream sent (at this event or before it); undefined before any. */
  readonly id: string | undefined;
}

/** 4 Mi characters: the API's largest batch (every view, a full page of queries) is a small fraction of it. */
const DEFAULT_MAX_EVENT_CHARS = 4 << 20;

export class SseParser {
  readonly #max: number;
  /** The line not yet ended. */
  #line = '';
  #event = '';
  #data: string[] = [];
  /** Characters in #data, counting the \n each joins with. */
  #dataChars = 0;
  #id: string | undefined;
  /** The last chunk ended in \r: a \n starting the next one ends no second line. */
  #sawCR = false;
  /** The reconnection time the server asked for (`retry:`), ms; undefined until it does. */
  retryMs: number | undefined;

  constructor(options: { readonly maxEventChars?: number } = {}) {
    this.#max = options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS;
  }

  /** Characters held now (the unfinished line and the event's data): at most maxEventChars. */
  get bufferedChars(): number {
    return this.#line.length + this.#dataChars;
  }

  /** Parses `chunk`; returns the events it completed. Throws RangeError if a line or an event would exceed maxEventChars. */
  feed(chunk: string): SseEvent[] {
    const out: SseEvent[] = [];
    const text = this.#sawCR && chunk.startsWith('\n') ? chunk.slice(1) : chunk;
    this.#sawCR = text.endsWith('\r');
    const ends = /\r\n|\r|\n/g;
    let start = 0;
    for (let m = ends.exec(text); m !== null; m = ends.exec(text)) {
      this.#hold(m.index - start);
      const line = this.#line + text.slice(start, m.index);
      this.#line = '';
      this.#field(line, out);
      start = m.index + m[0].length;
    }
    this.#hold(text.length - start);
    this.#line += text.slice(start);
    return out;
  }

  /** Refuses (and lets go of everything held) if `more` characters on the current line would pass the bound. */
  #hold(more: number): void {
    if (this.#line.length + more + this.#dataChars <= this.#max) return;
    this.#line = '';
    this.#event = '';
    this.#data = [];
    this.#dataChars = 0;
    throw new RangeError(`event stream: an event over ${this.#max} characters`);
  }

  #field(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.#data.length > 0) out.push({ event: this.#event || 'message', data: this.#data.join('\n'), id: this.#id });
      this.#event = '';
      this.#data = [];
      this.#dataChars = 0;
      return;
    }
    if (line.startsWith(':')) return; // a comment (the server's `: ping`)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.#event = value;
        break;
      case 'data':
        // The line was within the bound; the event's data as a whole must be too.
        this.#hold(value.length + 1);
        this.#data.push(value);
        this.#dataChars += value.length + 1;
        break;
      case 'id':
        if (!value.includes('\0')) this.#id = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break; // unknown fields are ignored (spec)
    }
  }
}
