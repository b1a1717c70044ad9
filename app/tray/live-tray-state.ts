/**
 * Keeps a TrayState current from a running proxy's control API.
 *
 * - Prefers the live stream: a batch with a state, resolver or settings
 *   event refreshes status and resolvers soon (within `eventDelayMs`); any
 *   batch refreshes them and the metrics at most every `refreshMs` (latency
 *   only changes when queries flow, and batches only come when they do).
 * - While the stream is down, polls every `refreshMs` and retries the stream
 *   after `streamRetryMs`.
 * - A refused local name, while the tray may have to ask about it, refreshes
 *   soon too (local-names-question.ts), and so does a pushed status whose
 *   networks revision moved (the network we're on changed, or what is known
 *   about it: an offer of its own encrypted resolver appears at once).
 * - Emits 'change' only when the TrayState differs from the last one.
 *
 * Electron-free: the tray adapter listens to 'change'.
 */
import { EventEmitter } from 'node:events';
import type { LocalNamesView, MetricsView, NetworksView, ResolversView, StatusView, StreamBatch, SystemDnsView } from '../../proxy/control/api-types.js';
import type { ControlClient, StreamHandle } from '../control/client.js';
import type { SupervisorState } from '../proxy-process/supervisor.js';
import { trayStateFrom } from './tray-state.js';
import { INITIAL_TRAY_STATE, type TrayService, type TrayState } from './types.js';

/** The error code of a query refused as a local name not allowed on this network (engine/engine.ts). */
const LOCAL_NAMES_REFUSED = 'DOTSTUB_LOCAL_NAMES_NOT_ALLOWED';

export interface LiveTrayStateOptions {
  readonly refreshMs?: number;
  readonly eventDelayMs?: number;
  readonly streamRetryMs?: number;
}

interface Events {
  change: [TrayState];
}

export class LiveTrayState extends EventEmitter<Events> {
  readonly #refreshMs: number;
  readonly #eventDelayMs: number;
  readonly #streamRetryMs: number;
  #supervisor: SupervisorState = { phase: 'stopped', reason: 'not started' };
  #service: TrayService | undefined;
  #status: StatusView | undefined;
  #resolvers: ResolversView | undefined;
  #metrics: MetricsView | undefined;
  #systemDns: SystemDnsView | null | undefined;
  #localNames: LocalNamesView | null | undefined;
  #networks: NetworksView | undefined;
  #client: ControlClient | undefined;
  #stream: StreamHandle | undefined;
  #streamUp = false;
  #timers = new Set<NodeJS.Timeout>();
  #refreshTimer: NodeJS.Timeout | undefined;
  #pollTimer: NodeJS.Timeout | undefined;
  #lastRefresh = 0;
  #refreshing: Promise<void> | undefined;
  #current: TrayState = INITIAL_TRAY_STATE;
  #currentKey = JSON.stringify(INITIAL_TRAY_STATE);

  constructor(options: LiveTrayStateOptions = {}) {
    super();
    this.#refreshMs = options.refreshMs ?? 5000;
    this.#eventDelayMs = options.eventDelayMs ?? 100;
    this.#streamRetryMs = options.streamRetryMs ?? 2000;
  }

  get current(): TrayState {
    return this.#current;
  }

  /** The installed service's state (undefined: the app runs its own proxy). Call before setSupervisor. */
  setService(service: TrayService | undefined): void {
    this.#service = service;
    this.#publish();
  }

  /** The supervisor's phase changed. */
  setSupervisor(state: SupervisorState): void {
    this.#supervisor = state;
    if (state.phase !== 'running') this.detach();
    this.#publish();
  }

  /** Follows a (new) running proxy through its control client. */
  attach(client: ControlClient): void {
    this.detach();
    this.#client = client;
    this.#status = undefined;
    this.#metrics = undefined;
    this.#openStream();
    this.#poll();
    void this.refresh();
  }

  /** Stops following (the proxy stopped); keeps the last resolvers for the menu. */
  detach(): void {
    this.#client = undefined;
    this.#stream?.close();
    this.#stream = undefined;
    this.#streamUp = false;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    clearTimeout(this.#refreshTimer);
    this.#refreshTimer = undefined;
    clearTimeout(this.#pollTimer);
    this.#pollTimer = undefined;
    this.#status = undefined;
    this.#metrics = undefined;
    this.#systemDns = undefined;
    this.#localNames = undefined;
    this.#networks = undefined;
  }

  /** Fetches status, resolvers and metrics now (one at a time: calls while one runs share it). */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#fetch().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  async #fetch(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    this.#lastRefresh = Date.now();
    // null once: routing by name owner is off in this proxy, and stays so for it.
    const asking = this.#localNames === null ? Promise.resolve(null) : client.localNames();
    const [status, resolvers, metrics, systemDns, localNames, networks] = await Promise.allSettled([
      client.status(),
      client.resolvers(),
      client.metrics(),
      client.systemDns(),
      asking,
      client.networks(),
    ]);
    if (client !== this.#client) return; // detached or replaced meanwhile
    if (systemDns.status === 'fulfilled') this.#systemDns = systemDns.value;
    if (localNames.status === 'fulfilled') this.#localNames = localNames.value;
    if (status.status === 'fulfilled') this.#status = status.value;
    if (resolvers.status === 'fulfilled') this.#resolvers = resolvers.value;
    if (metrics.status === 'fulfilled') this.#metrics = metrics.value;
    if (networks.status === 'fulfilled') this.#networks = networks.value;
    this.#publish();
  }

  #publish(): void {
    const next = trayStateFrom({ supervisor: this.#supervisor, status: this.#status, resolvers: this.#resolvers, metrics: this.#metrics, systemDns: this.#systemDns, localNames: this.#localNames, networks: this.#networks, service: this.#service });
    const key = JSON.stringify(next);
    if (key === this.#currentKey) return;
    this.#current = next;
    this.#currentKey = key;
    this.emit('change', next);
  }

  #openStream(): void {
    const client = this.#client;
    if (!client) return;
    const handle = client.stream({
      onOpen: () => (this.#streamUp = true),
      onBatch: (batch) => this.#onBatch(batch),
    });
    this.#stream = handle;
    void handle.ended.then((err) => {
      if (this.#stream !== handle) return;
      this.#stream = undefined;
      this.#streamUp = false;
      if (err && client === this.#client) this.#after(this.#streamRetryMs, () => this.#openStream());
    });
  }

  #onBatch(batch: StreamBatch): void {
    const revision = batch.views?.status?.networksRevision;
    const networksMoved = revision !== undefined && revision !== this.#status?.networksRevision;
    const important = batch.events.some((e) => e.kind === 'state' || e.kind === 'resolver' || e.kind === 'settings' || e.kind === 'captive') || networksMoved || this.#mayAsk(batch);
    const wait = important ? this.#eventDelayMs : Math.max(0, this.#lastRefresh + this.#refreshMs - Date.now());
    if (this.#refreshTimer && !important) return;
    clearTimeout(this.#refreshTimer);
    this.#refreshTimer = setTimeout(() => {
      this.#refreshTimer = undefined;
      void this.refresh();
    }, wait);
  }

  /**
   * A local name refused on a network with no choice and no question yet:
   * the tray asks soon, not at the next refresh (under "Keep private", or
   * with the question already shown, refusals change nothing here).
   */
  #mayAsk(batch: StreamBatch): boolean {
    const v = this.#localNames;
    if (v === null || v?.remembered || v?.firstRefused) return false;
    return batch.queries.some((q) => q.error === LOCAL_NAMES_REFUSED);
  }

  /** Polls only while the stream is down. */
  #poll(): void {
    this.#pollTimer = setTimeout(() => {
      if (!this.#client) return;
      if (!this.#streamUp) void this.refresh();
      this.#poll();
    }, this.#refreshMs);
  }

  #after(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    this.#timers.add(t);
  }
}
