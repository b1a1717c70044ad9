/**
 * A Server-Sent Events parser (the WHATWG event-stream format): feed it text
 * as it arrives, get whole events back. Pure, so chunk boundaries are tested
 * without a socket.
 *
 * Invariant: `#buffer` holds at most one incomplete line plus the fields of
 * the event being assembled; both are bounded by `maxEventBytes`, so a
 * server that never ends an event can't grow memory without limit.
 */
export interface SseEvent {
  /** `event:` field; "message" when absent. */
  readonly event: string;
  readonly data: string;
  readonly id: string | undefined;
}

export class SseParser {
  readonly #maxEventBytes: number;
  #buffer = '';
  #event = '';
  #data: string[] = [];
  #dataBytes = 0;
  #id: string | undefined;
  #sawCR = false;
  /** Reconnection time the server asked for (`retry:`), ms. */
  retryMs: number | undefined;

  constructor(options: { maxEventBytes?: number } = {}) {
    this.#maxEventBytes = options.maxEventBytes ?? 4 << 20;
  }

  /** Parses `chunk`; returns the events it completed. Throws RangeError if an event exceeds maxEventBytes. */
  feed(chunk: string): SseEvent[] {
    const out: SseEvent[] = [];
    let text = chunk;
    // A CRLF split across chunks: the LF was already counted with the CR.
    if (this.#sawCR && text.startsWith('\n')) text = text.slice(1);
    this.#sawCR = text.endsWith('\r');
    this.#buffer += text;
    const lines = this.#buffer.split(/\r\n|\r|\n/);
    this.#buffer = lines.pop() ?? '';
    if (this.#buffer.length + this.#dataBytes > this.#maxEventBytes) throw new RangeError(`event stream: event over ${this.#maxEventBytes} bytes`);
    for (const line of lines) {
      const event = this.#line(line);
      if (event) out.push(event);
    }
    return out;
  }

  #line(line: string): SseEvent | undefined {
    if (line === '') {
      if (this.#data.length === 0) {
        this.#event = '';
        return undefined;
      }
      const event: SseEvent = { event: this.#event || 'message', data: this.#data.join('\n'), id: this.#id };
      this.#event = '';
      this.#data = [];
      this.#dataBytes = 0;
      return event;
    }
    if (line.startsWith(':')) return undefined; // comment (the server's `: ping`)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.#event = value;
        break;
      case 'data':
        this.#data.push(value);
        this.#dataBytes += value.length + 1;
        if (this.#dataBytes > this.#maxEventBytes) throw new RangeError(`event stream: event over ${this.#maxEventBytes} bytes`);
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
    return undefined;
  }
}
