/**
 * The live stream (/api/stream, server-sent events) read with fetch and a
 * ReadableStream reader, because EventSource can't send the Authorization
 * header and the API accepts nothing else.
 *
 * Reconnects as EventSource would, after the server's `retry:` (2 s), when
 * the connection fails, ends, or goes silent longer than the server's ping
 * interval allows; except that the first attempt after a stream that was
 * open comes at once (FIRST_RETRY_MS), so a blip is not on screen for the
 * 2 s after which the page calls dotstub unreachable (lib/link-status.ts).
 * A 401 is final (a token doesn't become valid by waiting): it is reported
 * once and the stream stays closed. An event over the parser's bound
 * (api-client/sse.ts) ends the stream like a failed connection.
 *
 * Uses only what browsers and Node share (fetch, streams, globalThis
 * timers), so stream.test.ts runs it against a real server.
 */
import type { StreamBatch } from '../../../proxy/control/api-types.js';
import { API } from '../../../proxy/control/api-client/endpoints.js';
import { SseParser } from '../../../proxy/control/api-client/sse.js';
import { ControlError } from '../../../proxy/control/api-client/errors.js';
import { authHeaders } from './client.js';

const DEFAULT_RETRY_MS = 2000;
const FIRST_RETRY_MS = 250;
/** The server pings an idle stream every 15 s; twice that in silence means the link is dead. */
const SILENCE_MS = 30_000;

export interface StreamHandlers {
  onBatch(batch: StreamBatch): void;
  onOpen(): void;
  /** The stream failed or closed; `err` is an ControlError for HTTP errors (401: stopped for good). */
  onError(err: ControlError | null): void;
}

export interface StreamOptions {
  /** Default GET /api/stream of this page's origin; tests give a full URL. */
  readonly url?: string;
  /** Default SILENCE_MS. */
  readonly silenceMs?: number;
  /** The longest event taken, characters (default: SseParser's). */
  readonly maxEventChars?: number;
}

export function openStream(h: StreamHandlers, options: StreamOptions = {}): () => void {
  const url = options.url ?? API.stream.path;
  const silenceMs = options.silenceMs ?? SILENCE_MS;
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let abort: AbortController | null = null;
  let retryMs = DEFAULT_RETRY_MS;
  /** The last attempt got an open stream: the next retry is the quick one. */
  let wasOpen = false;

  const again = (): void => {
    if (closed || retry !== null) return;
    const delay = wasOpen ? FIRST_RETRY_MS : retryMs;
    wasOpen = false;
    retry = globalThis.setTimeout(() => {
      retry = null;
      void connect();
    }, delay);
  };

  const connect = async (): Promise<void> => {
    if (closed) return;
    const ctl = new AbortController();
    abort = ctl;
    let silence: ReturnType<typeof setTimeout> | null = null;
    const quiet = (): void => {
      if (silence !== null) globalThis.clearTimeout(silence);
      silence = globalThis.setTimeout(() => ctl.abort(), silenceMs);
    };
    try {
      const res = await fetch(url, {
        headers: { ...authHeaders(), accept: 'text/event-stream' },
        credentials: 'omit',
        cache: 'no-store',
        signal: ctl.signal,
      });
      if (!res.ok || !res.body) {
        const err = new ControlError(res.status, res.status === 401 ? 'unauthorized' : 'http', `the live stream answered ${res.status}`);
        void res.body?.cancel();
        h.onError(err);
        if (res.status !== 401) again();
        return;
      }
      wasOpen = true;
      h.onOpen();
      const parser = new SseParser({ maxEventChars: options.maxEventChars });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      quiet();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        quiet();
        for (const e of parser.feed(value)) {
          if (e.event !== 'batch') continue;
          let batch: StreamBatch;
          try {
            batch = JSON.parse(e.data) as StreamBatch;
          } catch {
            // A malformed batch is dropped; the next snapshot refresh repairs the view.
            continue;
          }
          h.onBatch(batch);
        }
        if (parser.retryMs !== undefined) retryMs = parser.retryMs;
      }
      if (!closed) h.onError(null);
    } catch (err) {
      if (closed) return;
      if (err instanceof ControlError) {
        // No token to send: nothing to retry until the page is signed in.
        h.onError(err);
        return;
      }
      h.onError(null);
    } finally {
      if (silence !== null) globalThis.clearTimeout(silence);
      // Whatever ended this attempt (an event over the bound, a batch handler that threw), its connection goes with it.
      ctl.abort();
    }
    again();
  };

  void connect();
  return () => {
    closed = true;
    if (retry !== null) globalThis.clearTimeout(retry);
    abort?.abort();
  };
}
