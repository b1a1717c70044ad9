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
 *
 * Snapshots (`views`), so a client needs no polling while connected:
 * - every view (status, resolvers, connections, metrics, settings) in the
 *   first batch, in the batch after any timeline event (a connection, a
 *   state change, a switch, a settings change, a captive portal), and every
 *   `refreshMs` (15 s; it replaces the ping, and keeps time windows sliding);
 * - the views queries change (connections, metrics, resolvers' medians) at
 *   most every `liveMs` (2 s) while queries arrive.
 * Views are built once per batch, only while a client is connected.
 */
import type { ServerResponse } from 'node:http';
import type { Counters, QueryRecord } from '../engine/query-record.js';
import type { StreamBatch, StreamViews, TimelineEvent } from './api-types.js';

export interface StreamOptions {
  readonly intervalMs?: number;
  readonly pingMs?: number;
  readonly maxQueriesPerBatch?: number;
  readonly slowBytes?: number;
  readonly deadBytes?: number;
  /** Counters and in-flight now, for each batch. */
  readonly snapshot: () => { counters: Counters; inFlight: number };
  /** The API's views now; without it batches carry none. */
  readonly views?: () => Required<StreamViews>;
  /** Every view at least this often, ms (default 15,000). */
  readonly refreshMs?: number;
  /** The views queries change at most this often, ms (default 2,000). */
  readonly liveMs?: number;
}

/** Which views the next batch carries: none, those queries change, or all. */
type Due = 0 | 1 | 2;
const LIVE: Due = 1;
const ALL: Due = 2;

export class StreamHub {
  readonly #clients = new Set<ServerResponse>();
  readonly #intervalMs: number;
  readonly #pingMs: number;
  readonly #maxQueries: number;
  readonly #slowBytes: number;
  readonly #deadBytes: number;
  readonly #snapshot: StreamOptions['snapshot'];
  readonly #views: StreamOptions['views'];
  readonly #refreshMs: number;
  readonly #liveMs: number;
  #due: Due = 0;
  /** The last views went out because of queries: one more goes liveMs later, so charts show the traffic stopping. */
  #settle = false;
  #lastAll = 0;
  #lastLive = 0;
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
    this.#views = options.views;
    this.#refreshMs = options.refreshMs ?? 15_000;
    this.#liveMs = options.liveMs ?? 2000;
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
    const hello: StreamBatch = { at: Date.now(), queries: [], skipped: 0, events: [], counters: { ...counters }, inFlight, ...this.#viewsFor(ALL) };
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
    if (this.#due < LIVE) this.#due = LIVE;
  }

  /** Something changed that the views show, outside a query or an event (e.g. a resolver added): all views go in the next batch. */
  viewsChanged(): void {
    if (this.#clients.size > 0) this.#due = ALL;
  }

  #viewsFor(due: Due): Pick<StreamBatch, 'views'> {
    if (!this.#views || due === 0) return {};
    const v = this.#views();
    const now = Date.now();
    this.#lastLive = now;
    if (due === ALL) {
      this.#lastAll = now;
      return { views: v };
    }
    return { views: { connections: v.connections, metrics: v.metrics, resolvers: v.resolvers } };
  }

  pushEvent(e: TimelineEvent): void {
    if (this.#clients.size === 0) return;
    // Events are rare (connections, state changes); bound them anyway.
    if (this.#events.length < 1000) this.#events.push(e);
    this.#due = ALL;
  }

  #tick(): void {
    if (this.#clients.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#queries = [];
      this.#events = [];
      this.#skipped = 0;
      this.#due = 0;
      return;
    }
    const now = Date.now();
    if (this.#views && now - this.#lastAll >= this.#refreshMs) this.#due = ALL;
    const settling = this.#settle && this.#due === 0 && now - this.#lastLive >= this.#liveMs;
    if (settling) this.#due = LIVE;
    // Query-driven views wait for their cadence; events' and the refresh's go at once.
    const due: Due = this.#due === LIVE && now - this.#lastLive < this.#liveMs ? 0 : this.#due;
    if (this.#queries.length === 0 && this.#events.length === 0 && this.#skipped === 0 && due === 0) {
      if (now - this.#lastWrite >= this.#pingMs) {
        this.#lastWrite = now;
        for (const res of this.#clients) this.#write(res, ': ping\n\n');
      }
      return;
    }
    const { counters, inFlight } = this.#snapshot();
    const batch: StreamBatch = { at: now, queries: this.#queries, skipped: this.#skipped, events: this.#events, counters: { ...counters }, inFlight, ...this.#viewsFor(due) };
    if (due !== 0) {
      this.#due = 0;
      this.#settle = due === LIVE && !settling;
    }
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

  /** Sends what is still due (the DNS given back at a stop is the last thing a page hears), then ends every stream and stops the timer. */
  close(): void {
    if (this.#clients.size > 0 && (this.#events.length > 0 || this.#queries.length > 0 || this.#due !== 0)) {
      this.#due = ALL;
      this.#tick();
    }
    clearInterval(this.#timer);
    this.#timer = undefined;
    for (const res of this.#clients) res.end();
    this.#clients.clear();
  }
}
