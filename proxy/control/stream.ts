/**
 * The live stream (Server-Sent Events): query records, timeline events and
 * counters, batched every `intervalMs` so 1,000 queries/s become 4 messages/s.
 *
 * Cost control:
 * - Nothing is collected while no client is connected.
 * - A batch is serialised once and written to every client.
 * - At most `maxQueriesPerBatch` records per batch; the rest are counted in
 *   `skipped` (they are in the query log).
 * - A client that doesn't read (socket buffer above `slowBytes`) gets batches
 *   without query records until it catches up; above `deadBytes` it is
 *   disconnected (EventSource reconnects by itself).
 */
import type { ServerResponse } from 'node:http';
import type { Counters, QueryRecord } from '../engine/query-record.js';
import type { StreamBatch, TimelineEvent } from './api-types.js';

export interface StreamOptions {
  readonly intervalMs?: number;
  readonly pingMs?: number;
  readonly maxQueriesPerBatch?: number;
  readonly slowBytes?: number;
  readonly deadBytes?: number;
  /** Counters and in-flight now, for each batch. */
  readonly snapshot: () => { counters: Counters; inFlight: number };
}

export class StreamHub {
  readonly #clients = new Set<ServerResponse>();
  readonly #intervalMs: number;
  readonly #pingMs: number;
  readonly #maxQueries: number;
  readonly #slowBytes: number;
  readonly #deadBytes: number;
  readonly #snapshot: StreamOptions['snapshot'];
  #queries: QueryRecord[] = [];
  #skipped = 0;
  #events: TimelineEvent[] = [];
  #timer: NodeJS.Timeout | undefined;
  #lastWrite = 0;
  /** Bytes written to clients since start (for the benchmark). */
  bytesSent = 0;
  batchesSent = 0;

  constructor(options: StreamOptions) {
    this.#intervalMs = options.intervalMs ?? 250;
    this.#pingMs = options.pingMs ?? 15_000;
    this.#maxQueries = options.maxQueriesPerBatch ?? 500;
    this.#slowBytes = options.slowBytes ?? 1 << 20;
    this.#deadBytes = options.deadBytes ?? 8 << 20;
    this.#snapshot = options.snapshot;
  }

  get clients(): number {
    return this.#clients.size;
  }

  /** Takes over `res` as an event stream until the client goes away. */
  add(res: ServerResponse): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.socket?.setNoDelay(true);
    this.#clients.add(res);
    res.on('close', () => this.#clients.delete(res));
    // A first batch at once, so a client has counters before anything happens.
    const { counters, inFlight } = this.#snapshot();
    const hello: StreamBatch = { at: Date.now(), queries: [], skipped: 0, events: [], counters: { ...counters }, inFlight };
    this.#write(res, `retry: 2000\n\nevent: batch\ndata: ${JSON.stringify(hello)}\n\n`);
    if (!this.#timer) {
      this.#lastWrite = Date.now();
      this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
    }
  }

  pushQuery(r: QueryRecord): void {
    if (this.#clients.size === 0) return;
    if (this.#queries.length < this.#maxQueries) this.#queries.push(r);
    else this.#skipped++;
  }

  pushEvent(e: TimelineEvent): void {
    if (this.#clients.size === 0) return;
    // Events are rare (connections, state changes); bound them anyway.
    if (this.#events.length < 1000) this.#events.push(e);
  }

  #tick(): void {
    if (this.#clients.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#queries = [];
      this.#events = [];
      this.#skipped = 0;
      return;
    }
    const now = Date.now();
    if (this.#queries.length === 0 && this.#events.length === 0 && this.#skipped === 0) {
      if (now - this.#lastWrite >= this.#pingMs) {
        this.#lastWrite = now;
        for (const res of this.#clients) this.#write(res, ': ping\n\n');
      }
      return;
    }
    const { counters, inFlight } = this.#snapshot();
    const batch: StreamBatch = { at: now, queries: this.#queries, skipped: this.#skipped, events: this.#events, counters: { ...counters }, inFlight };
    const full = `event: batch\ndata: ${JSON.stringify(batch)}\n\n`;
    let light: string | undefined;
    for (const res of this.#clients) {
      const backlog = res.writableLength;
      if (backlog > this.#deadBytes) {
        res.destroy();
        continue;
      }
      if (backlog > this.#slowBytes) {
        light ??= `event: batch\ndata: ${JSON.stringify({ ...batch, queries: [], skipped: batch.skipped + batch.queries.length })}\n\n`;
        this.#write(res, light);
      } else {
        this.#write(res, full);
      }
    }
    this.batchesSent++;
    this.#lastWrite = now;
    this.#queries = [];
    this.#events = [];
    this.#skipped = 0;
  }

  #write(res: ServerResponse, chunk: string): void {
    if (res.destroyed || res.writableEnded) return;
    this.bytesSent += Buffer.byteLength(chunk);
    res.write(chunk);
  }

  /** Ends every stream and stops the timer. */
  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    for (const res of this.#clients) res.end();
    this.#clients.clear();
  }
}
