/**
 * The dashboard's live state: one store fed by the API's snapshots and its
 * event stream, read by components through useSyncExternalStore.
 *
 * Where the state comes from: while the stream is connected, its batches
 * carry the API's views (status, resolvers, connections, metrics, settings)
 * whenever they change, so nothing is polled; a change the user makes is
 * answered with the new state (applyStatus, applySettings). Only while the
 * stream is down does the store poll (metrics and connections every 2 s,
 * status and resolvers every 5 s) and try to resync.
 *
 * Render budget: the stream delivers a batch every 250 ms (up to hundreds of
 * queries at 1,000 qps). Batches go straight into the ring buffer, but
 * listeners are told at most once per animation frame, so React renders at
 * most 60 times a second however fast data arrives.
 *
 * Query log: a RingBuffer of the newest QUERY_CAPACITY records (oldest
 * dropped), de-duplicated by the proxy's monotonic `seq` (reset when the
 * proxy restarts). Aggregates (hit fraction, percentiles, per-second series)
 * come from the API, which sees every query, not from the ring, which may
 * miss some the stream skipped under load.
 */
import type {
  ConnectionView,
  Counters,
  MetricsView,
  QueryRecord,
  ResolversView,
  Settings,
  StatusView,
  StreamBatch,
  StreamViews,
  TimelineEvent,
} from '../../../proxy/control/api-types.js';
import { ControlError } from '../../../proxy/control/api-client/errors.js';
import { api } from '../api/client.js';
import { openStream } from '../api/stream.js';
import { RingBuffer } from '../lib/ring.js';

const QUERY_CAPACITY = 100_000;
const EVENT_CAPACITY = 2_000;
/** Page size for filling the log on load and after a reconnect (the API's largest page). */
const BACKFILL_PAGE = 1_000;

export type LinkState = 'connecting' | 'live' | 'reconnecting' | 'unauthorized';

/** Why the page is not signed in: no token in the link or tab, a token that can't be one, or one the proxy refused. */
export type AuthProblem = 'missing' | 'malformed' | 'rejected';

export interface DashboardSnapshot {
  readonly link: LinkState;
  readonly linkError: string | null;
  /** Set while link is 'unauthorized'. */
  readonly authProblem: AuthProblem | null;
  /**
   * now() when the link stopped being live (at start: when the store
   * started); null while live. Everything shown is as of this moment.
   */
  readonly lostAt: number | null;
  readonly status: StatusView | null;
  /** Date.now() when `status` was fetched, to extrapolate uptime. */
  readonly statusAt: number;
  readonly resolvers: ResolversView | null;
  readonly connections: readonly ConnectionView[];
  /** Date.now() when `connections` was fetched, to extrapolate ages. */
  readonly connectionsAt: number;
  readonly metrics: MetricsView | null;
  readonly settings: Settings | null;
  /** Timeline, oldest first, at most EVENT_CAPACITY. */
  readonly events: readonly TimelineEvent[];
  readonly counters: Counters | null;
  readonly inFlight: number;
  /** Bumped whenever the query ring changed. */
  readonly logVersion: number;
  /** Queries the stream skipped to bound its batches (in the proxy's log, not in ours). */
  readonly skipped: number;
  readonly types: readonly string[];
  readonly rcodes: readonly string[];
}

const INITIAL: DashboardSnapshot = {
  link: 'connecting',
  linkError: null,
  authProblem: null,
  lostAt: null,
  status: null,
  statusAt: 0,
  resolvers: null,
  connections: [],
  connectionsAt: 0,
  metrics: null,
  settings: null,
  events: [],
  counters: null,
  inFlight: 0,
  logVersion: 0,
  skipped: 0,
  types: [],
  rcodes: [],
};

type Mutable<T> = { -readonly [K in keyof T]?: T[K] };

type Refresh = 'status' | 'resolvers' | 'connections' | 'metrics' | 'settings';

/** What the store needs from its environment; tests pass fakes. */
export interface StoreEnv {
  readonly api: Pick<typeof api, 'status' | 'resolvers' | 'connections' | 'metrics' | 'settings' | 'queries' | 'recentEvents' | 'clearQueries'>;
  openStream(onBatch: (b: StreamBatch) => void, onOpen: () => void, onError: (err: ControlError | null) => void): () => void;
  schedule(fn: () => void): void;
  now(): number;
}

function browserEnv(): StoreEnv {
  return {
    api,
    openStream(onBatch, onOpen, onError) {
      return openStream({ onBatch, onOpen, onError });
    },
    schedule(fn) {
      if (typeof requestAnimationFrame === 'function' && document.visibilityState === 'visible') requestAnimationFrame(() => fn());
      else window.setTimeout(fn, 50);
    },
    now: () => Date.now(),
  };
}

export class DashboardStore {
  readonly queries = new RingBuffer<QueryRecord>(QUERY_CAPACITY);
  readonly #env: StoreEnv;
  #snap: DashboardSnapshot = INITIAL;
  /** Changes made since the last notify, merged into the next snapshot. */
  #pending: Mutable<DashboardSnapshot> = {};
  #scheduled = false;
  readonly #listeners = new Set<() => void>();
  #lastSeq = 0;
  #proxyStartedAt: number | null = null;
  /** Batches that arrive while a resync is fetching the backlog. */
  #held: StreamBatch[] | null = null;
  #events: TimelineEvent[] = [];
  #types = new Set<string>();
  #rcodes = new Set<string>();
  /** connectionId → handshake ms, from open events, for query timing breakdowns. */
  readonly #handshakes = new Map<number, number>();
  #closeStream: (() => void) | null = null;
  /** The stream is open: its batches carry every view, so nothing is polled. */
  #streamUp = false;
  /** The 1 s poll; set only while the stream is down (started and not stopped), so an open stream costs no timer. */
  #timer: ReturnType<typeof setInterval> | null = null;
  #tick = 0;
  #stopped = false;

  constructor(env: StoreEnv = browserEnv()) {
    this.#env = env;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  getSnapshot = (): DashboardSnapshot => this.#snap;

  handshakeMs(connectionId: number | null): number | null {
    return connectionId === null ? null : (this.#handshakes.get(connectionId) ?? null);
  }

  start(): void {
    this.#stopped = false;
    this.#held = [];
    this.#set({ lostAt: this.#env.now() });
    this.#closeStream = this.#env.openStream(
      (b) => this.ingestBatch(b),
      () => {
        this.#streamUp = true;
        this.#polling(false);
        void this.#resync();
      },
      (err) => {
        this.#streamUp = false;
        this.#polling(!this.#stopped);
        if (err?.status === 401) this.#fail(err);
        else if (this.#link() !== 'unauthorized') this.#set({ link: 'reconnecting' });
        // The stream reconnects by itself; hold batches until the resync after it reopens.
        this.#held ??= [];
      },
    );
    void this.#resync();
    this.#polling(!this.#streamUp);
  }

  /** The page has no usable token: show why, and ask the API nothing. */
  signedOut(problem: AuthProblem): void {
    this.#set({ link: 'unauthorized', authProblem: problem, lostAt: this.#env.now() });
  }

  stop(): void {
    this.#stopped = true;
    this.#closeStream?.();
    this.#closeStream = null;
    this.#polling(false);
  }

  #polling(on: boolean): void {
    if (on && this.#timer === null) this.#timer = globalThis.setInterval(() => this.#poll(), 1000);
    else if (!on && this.#timer !== null) {
      globalThis.clearInterval(this.#timer);
      this.#timer = null;
    }
  }

  /** The live stream is open (and carries every view). */
  get streaming(): boolean {
    return this.#streamUp;
  }

  /** A status the API answered with (a resolver switch, a captive-portal answer): shown at once, no GET after it. */
  applyStatus(status: StatusView): void {
    this.#setStatus(status);
    const resolvers = this.#pending.resolvers ?? this.#snap.resolvers;
    // The one switched from is the way back (as the server's next view will say: ResolversView.previous).
    if (resolvers && resolvers.active !== status.resolver.id) this.#set({ resolvers: { ...resolvers, active: status.resolver.id, previous: resolvers.active } });
  }

  /** Settings the API answered a change with. */
  applySettings(settings: Settings): void {
    this.#set({ settings });
  }

  /** Re-reads one part of the state from the API now (after a user action). */
  async refresh(...parts: Refresh[]): Promise<void> {
    await Promise.all(parts.map((p) => this.#fetch(p)));
  }

  /** "Clear log": empties the proxy's query log, then this page's. */
  async clearLog(): Promise<void> {
    await this.#env.api.clearQueries();
    this.queries.dropAll();
    this.#set({ logVersion: this.#snap.logVersion + 1, skipped: 0 });
  }

  /** Feeds one stream batch; also the test entry point. */
  ingestBatch(b: StreamBatch): void {
    if (this.#held !== null) {
      this.#held.push(b);
      return;
    }
    this.#apply(b);
  }

  #apply(b: StreamBatch): void {
    if (b.queries.length > 0) this.#addQueries(b.queries);
    if (b.events.length > 0) this.#addEvents(b.events, false);
    const patch: Mutable<DashboardSnapshot> = { counters: b.counters, inFlight: b.inFlight, link: 'live', linkError: null };
    if (b.skipped > 0) patch.skipped = (this.#pending.skipped ?? this.#snap.skipped) + b.skipped;
    this.#set(patch);
    if (b.views) this.#applyViews(b.views);
  }

  #applyViews(v: StreamViews): void {
    if (v.status) this.#setStatus(v.status);
    const patch: Mutable<DashboardSnapshot> = {};
    if (v.resolvers) patch.resolvers = v.resolvers;
    if (v.connections) Object.assign(patch, { connections: v.connections, connectionsAt: this.#env.now() });
    if (v.metrics) patch.metrics = v.metrics;
    if (v.settings) patch.settings = v.settings;
    this.#set(patch);
  }

  #setStatus(status: StatusView): void {
    const now = this.#env.now();
    const startedAt = now - status.uptimeMs;
    // A proxy restart starts `seq` again from 1: forget the old high-water mark.
    if (this.#proxyStartedAt !== null && Math.abs(startedAt - this.#proxyStartedAt) > 2000) this.#lastSeq = 0;
    this.#proxyStartedAt = startedAt;
    const patch: Partial<DashboardSnapshot> = { status, statusAt: now, counters: status.counters, inFlight: status.inFlight };
    if (this.#held === null) Object.assign(patch, { link: 'live', linkError: null });
    this.#set(patch);
  }

  #addQueries(records: readonly QueryRecord[]): void {
    let added = 0;
    for (const r of records) {
      if (r.seq <= this.#lastSeq) continue;
      this.#lastSeq = r.seq;
      this.queries.push(r);
      added++;
      if (!this.#types.has(r.type)) {
        this.#types.add(r.type);
        this.#pending.types = [...this.#types].sort();
      }
      if (!this.#rcodes.has(r.rcode)) {
        this.#rcodes.add(r.rcode);
        this.#pending.rcodes = [...this.#rcodes].sort();
      }
    }
    if (added > 0) this.#set({ logVersion: this.#snap.logVersion + 1 });
  }

  #addEvents(events: readonly TimelineEvent[], replace: boolean): void {
    const next = replace ? [...events] : this.#events.concat(events);
    if (next.length > EVENT_CAPACITY) next.splice(0, next.length - EVENT_CAPACITY);
    this.#events = next;
    for (const e of events) {
      // The views these events change come in the same batch (stream.ts): nothing to fetch.
      if (e.kind === 'connection' && e.event.type === 'open') this.#handshakes.set(e.event.connectionId, e.event.handshakeMs);
    }
    if (this.#handshakes.size > 10_000) {
      const drop = [...this.#handshakes.keys()].slice(0, this.#handshakes.size - 5_000);
      for (const k of drop) this.#handshakes.delete(k);
    }
    this.#set({ events: next });
  }

  /** Snapshots, backlog and timeline after (re)connecting the stream. */
  async #resync(): Promise<void> {
    this.#held ??= [];
    const fetchedAt = this.#env.now();
    try {
      await this.#fetch('status');
      const [records, events] = await Promise.all([this.#backfill(), this.#env.api.recentEvents()]);
      this.#addQueries(records);
      this.#addEvents(events, true);
      await Promise.all([this.#fetch('resolvers'), this.#fetch('connections'), this.#fetch('metrics'), this.#fetch('settings')]);
      const held = this.#held ?? [];
      this.#held = null;
      // Views older than the ones just fetched are dropped; queries and events are kept.
      for (const b of held) this.#apply(b.at < fetchedAt && b.views ? { ...b, views: undefined } : b);
      this.#set({ link: 'live', linkError: null });
    } catch (err) {
      this.#fail(err);
      // Keep holding; the stream's next open (or the poll) retries.
    }
  }

  /**
   * The server's query log, oldest first: pages back from the newest until
   * it reaches records already held (after a reconnect), the end of the log,
   * or the ring's capacity. Bounded: at most QUERY_CAPACITY / BACKFILL_PAGE requests.
   */
  async #backfill(): Promise<QueryRecord[]> {
    const bySeq = new Map<number, QueryRecord>();
    for (let offset = 0; offset < QUERY_CAPACITY; ) {
      const page = await this.#env.api.queries(BACKFILL_PAGE, offset);
      for (const r of page.records) bySeq.set(r.seq, r);
      offset += page.records.length;
      const oldest = page.records[page.records.length - 1];
      // New queries arriving meanwhile shift offsets; the seq map removes the overlap.
      if (page.records.length === 0 || offset >= page.total || (oldest && oldest.seq <= this.#lastSeq)) break;
    }
    return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  }

  #fail(err: unknown): void {
    if (err instanceof ControlError && err.status === 401) {
      this.#set({ link: 'unauthorized', linkError: err.message, authProblem: err.code === 'signed_out' ? 'missing' : 'rejected' });
    } else if (this.#link() !== 'unauthorized') {
      this.#set({ link: 'reconnecting', linkError: err instanceof Error ? err.message : String(err) });
    }
  }

  #link(): LinkState {
    return this.#pending.link ?? this.#snap.link;
  }

  async #fetch(part: Refresh): Promise<void> {
    const a = this.#env.api;
    try {
      switch (part) {
        case 'status':
          this.#setStatus(await a.status());
          break;
        case 'resolvers':
          this.#set({ resolvers: await a.resolvers() });
          break;
        case 'connections':
          this.#set({ connections: await a.connections(), connectionsAt: this.#env.now() });
          break;
        case 'metrics':
          this.#set({ metrics: await a.metrics() });
          break;
        case 'settings':
          this.#set({ settings: await a.settings() });
          break;
      }
    } catch (err) {
      if (part === 'status') throw err;
      this.#fail(err);
    }
  }

  #poll(): void {
    if (this.#stopped) return;
    if (typeof document !== 'undefined' && document.visibilityState === 'hidden') return;
    this.#tick++;
    if (this.#snap.link === 'unauthorized') return;
    if (this.#snap.link === 'reconnecting' && this.#held !== null && this.#tick % 3 === 0) {
      void this.#resync();
      return;
    }
    const parts: Refresh[] = [];
    if (this.#tick % 2 === 0) parts.push('metrics', 'connections');
    if (this.#tick % 5 === 0) parts.push('status', 'resolvers');
    if (parts.length) void this.refresh(...parts).catch((err: unknown) => this.#fail(err));
  }

  #set(patch: Partial<DashboardSnapshot>): void {
    // lostAt follows link: stamped on the first change away from live, cleared on return.
    if (patch.link !== undefined && patch.lostAt === undefined) {
      const wasLive = this.#link() === 'live';
      if (patch.link === 'live') patch = { ...patch, lostAt: null, authProblem: null };
      else if (wasLive) patch = { ...patch, lostAt: this.#env.now() };
    }
    Object.assign(this.#pending, patch);
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#env.schedule(() => this.flush());
  }

  /** Publishes pending changes (called once per frame; tests call it directly). */
  flush(): void {
    this.#scheduled = false;
    const patch = this.#pending;
    this.#pending = {};
    if (Object.keys(patch).length === 0) return;
    this.#snap = { ...this.#snap, ...patch };
    for (const l of this.#listeners) l();
  }
}
