/**
 * RFC 1035 §4.2.2 / RFC 7766 §8 stream framing: each message is preceded by a
 * two-octet length. TCP and TLS deliver bytes, not messages, so one chunk may
 * hold half a length prefix or several messages at once.
 */

export class FrameReader {
  /** Bytes received but not yet returned as whole messages; never holds a complete message after push(). */
  #pending: Buffer = Buffer.alloc(0);
  readonly #maxMessage: number;

  constructor(maxMessage = 65535) {
    this.#maxMessage = maxMessage;
  }

  /** Feeds a chunk and returns every message it completes, in order. */
  push(chunk: Buffer): Buffer[] {
    let buf = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const out: Buffer[] = [];
    let offset = 0;
    while (buf.length - offset >= 2) {
      const len = buf.readUInt16BE(offset);
      if (len > this.#maxMessage) throw new RangeError(`frame of ${len} bytes exceeds ${this.#maxMessage}`);
      if (buf.length - offset - 2 < len) break;
      out.push(buf.subarray(offset + 2, offset + 2 + len));
      offset += 2 + len;
    }
    // Copy the tail so a small leftover doesn't pin a large chunk in memory.
    buf = buf.subarray(offset);
    this.#pending = buf.length === 0 ? Buffer.alloc(0) : Buffer.from(buf);
    return out;
  }

  /** The held-back bytes of an incomplete message, length prefix first (a view: don't keep it). */
  peek(): Buffer {
    return this.#pending;
  }

  /** Bytes of an incomplete message held back. */
  get buffered(): number {
    return this.#pending.length;
  }
}

/** Prefixes a message with its two-octet length. */
export function frame(message: Buffer): Buffer {
  if (message.length > 65535) throw new RangeError(`DNS message of ${message.length} bytes cannot be framed`);
  const out = Buffer.allocUnsafe(message.length + 2);
  out.writeUInt16BE(message.length, 0);
  message.copy(out, 2);
  return out;
}
