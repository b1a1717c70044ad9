/**
 * What the control API does, independent of HTTP: it listens to the proxy's
 * events (query, connection, state), keeps the query log, the sliding-window
 * metrics and the timeline, and carries out changes (resolver switch,
 * settings) with validation first, then persistence, then the change.
 *
 * Invariants:
 * - A change that fails validation or persistence changes nothing.
 * - Changes are serialised (one at a time), so the file on disk and the
 *   running proxy never disagree about which change came last.
 * - Switching the resolver or rebuilding the pool drops no query: the proxy
 *   moves new queries to the new pool and lets the old one drain.
 */
import type { ConfigProblem } from '../config/config-file.js';
import { MetricsWindow } from './metrics-window.js';
import type { QueryRecord } from '../engine/query-record.js';
import type { ConnectionEvent, StateChange, StubProxy } from '../dotstub.js';
import { QueryLog, type QueryFilter } from './query-log.js';
import { canAuthenticate, MAX_CUSTOM_RESOLVERS, validateCustomResolver, type ResolverContext, type ResolverStore } from '../config/resolver-store.js';
import type { ResolverSpec } from '../config/resolvers.js';
import { poolSettingsFrom } from '../config/run-config.js';
import { changedFields, parseSettingsPatch, POOL_SETTINGS, type Settings, type SettingsStore } from '../config/settings.js';
import type {
  ConnectionView,
  MetricsView,
  QueryPage,
  ResolversView,
  ResolverView,
  SignInView,
  RetryView,
  StatusView,
  TimelineEvent,
  ValidationView,
} from './api-types.js';
import { ApiFailure, validationFailure } from './errors.js';
import { StreamHub } from './stream.js';
import { metricsView } from './metrics-view.js';
import { captiveAction, signIn } from './captive-actions.js';
import { retryView } from './retry-view.js';
import { NOT_MANAGED, parseSystemDnsBody, systemDnsFailure } from './system-dns-actions.js';
import { NetworkLadder } from './ladder.js';
import { probeForSwitch, type SwitchProbeView } from './switch-probe.js';
import { resolverView } from './resolver-view.js';
import { DEFAULT_RESOLVER_TEST, testResolvers, type MeasureScope, type ResolverTestResult } from './resolver-test.js';
import { formatHostPort } from '../host-port.js';
import { PRIVACY_WORDS } from '../network/privacy-words.js';
import type { CaptiveEvent } from '../network/captive/session.js';
import type { SystemDnsManager, SystemDnsView } from '../system-dns/manager.js';
import { ShownState } from './shown-state.js';

const TIMELINE_SIZE = 500;

export interface ControlServiceOptions {
  readonly proxy: StubProxy;
  readonly settings: SettingsStore;
  readonly resolvers: ResolverStore;
  /** Settings in effect now: persisted ones with this run's CLI overrides. */
  readonly effective: Settings;
  /** Stream batching; tests shorten it. */
  readonly streamIntervalMs?: number;
  /** Which resolvers "Test resolvers" may send to (default all; 'local': only this machine's, for test labs). */
  readonly measureScope?: MeasureScope;
  /** The test's bounds and sample counts; tests shorten them. */
  readonly resolverTest?: Partial<typeof DEFAULT_RESOLVER_TEST>;
  /** Called when something goes wrong in the background (e.g. a pool drain). */
  readonly onError?: (err: unknown) => void;
  /**
   * The system-DNS takeover this process manages (--system-dns), if any.
   * While it is not in force the privacy state is `off` with its reason.
   */
  readonly systemDns?: SystemDnsManager;
}

export class ControlService {
  readonly proxy: StubProxy;
  readonly log: QueryLog;
  readonly metrics = new MetricsWindow();
  readonly stream: StreamHub;
  /** The control server's URL, once it listens (for StatusView.control). */
  controlUrl: string | undefined;
  readonly #settingsStore: SettingsStore;
  readonly #resolvers: ResolverStore;
  #settings: Settings;
  readonly #timeline: TimelineEvent[] = [];
  /** The fallback ladder as it ran for the active resolver (StatusView.ladder). */
  readonly #ladder: NetworkLadder;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #onError: (err: unknown) => void;
  readonly #unsubscribe: () => void;
  readonly #systemDns: SystemDnsManager | undefined;
  /** The privacy state shown (the proxy's own, or off while the takeover isn't in force) and since when. */
  readonly #shown: ShownState;
  /** Names seen by the leak test while it runs, with where their answer came from (from query events, so it works whatever the log keeps). */
  #leakNames: Map<string, QueryRecord['source']> | undefined;
  readonly #measureScope: MeasureScope;
  readonly #resolverTest: typeof DEFAULT_RESOLVER_TEST;
  /** The "Test resolvers" run under way, if any: a second request joins it rather than starting another. */
  #testing: Promise<ResolverTestResult> | null = null;

  constructor(options: ControlServiceOptions) {
    this.proxy = options.proxy;
    this.#settingsStore = options.settings;
    this.#resolvers = options.resolvers;
    this.#settings = options.effective;
    this.#onError = options.onError ?? ((err) => console.error('dotstub: control:', err));
    this.#measureScope = options.measureScope ?? 'all';
    this.#resolverTest = { ...DEFAULT_RESOLVER_TEST, ...options.resolverTest };
    this.log = new QueryLog(this.#settings.logSize);
    this.#resolvers.addSession(this.proxy.resolver);
    this.#ladder = new NetworkLadder(this.proxy.resolver.id);
    this.stream = new StreamHub({
      intervalMs: options.streamIntervalMs ?? 250,
      snapshot: () => ({ counters: this.proxy.counters, inFlight: this.proxy.inFlight }),
    });
    const onQuery = (r: QueryRecord): void => {
      if (r.name !== null) this.#leakNames?.set(r.name.toLowerCase().replace(/\.$/, ''), r.source);
      this.log.push(r);
      this.metrics.record(r);
      this.stream.pushQuery(r);
    };
    const onConnection = (event: ConnectionEvent): void => {
      this.#ladder.record(event);
      this.#event({ kind: 'connection', event });
    };
    const onState = (event: StateChange): void => this.#event({ kind: 'state', event });
    const onNetworkChange = (): void => this.#ladder.reset(this.proxy.resolver.id);
    const onCaptive = (event: CaptiveEvent): void => this.#event({ kind: 'captive', event });
    this.proxy.on('query', onQuery);
    this.proxy.on('connection', onConnection);
    this.proxy.on('state', onState);
    this.proxy.on('captive', onCaptive);
    this.proxy.on('network-change', onNetworkChange);
    this.#systemDns = options.systemDns;
    this.#shown = new ShownState(this.proxy, this.#systemDns);
    // The takeover starting or ending is a privacy-state change the user sees.
    let shown = this.status();
    const onTakeover = (): void => {
      const now = this.status();
      if (now.state !== shown.state || now.reason !== shown.reason) {
        this.#event({ kind: 'state', event: { state: now.state, previous: shown.state, reason: now.reason, at: Date.now(), resolverId: this.proxy.resolver.id } });
      }
      shown = now;
    };
    this.#systemDns?.on('change', onTakeover);
    this.#unsubscribe = () => {
      this.#shown.close();
      this.proxy.off('query', onQuery);
      this.proxy.off('connection', onConnection);
      this.proxy.off('state', onState);
      this.proxy.off('captive', onCaptive);
      this.#systemDns?.off('change', onTakeover);
      this.proxy.off('network-change', onNetworkChange);
    };
  }

  close(): void {
    this.#unsubscribe();
    this.stream.close();
  }

  #event(e: TimelineEvent): void {
    this.#timeline.push(e);
    if (this.#timeline.length > TIMELINE_SIZE) this.#timeline.splice(0, this.#timeline.length - TIMELINE_SIZE);
    this.stream.pushEvent(e);
  }

  /** Runs changes one at a time, in arrival order. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  problems(): ConfigProblem[] {
    return [this.#settingsStore.problem, this.#resolvers.problem].filter((p): p is ConfigProblem => p !== null);
  }

  #view(spec: ResolverSpec): ResolverView {
    return resolverView(spec, this.#resolvers.isPreset(spec.id), this.metrics.medianMs(spec.id));
  }

  status(): StatusView {
    const s = this.#shown.now();
    const problems = this.problems();
    return {
      state: s.state,
      reason: s.reason,
      since: this.#shown.since,
      leaves: PRIVACY_WORDS[s.state].leaves,
      resolver: this.#view(this.proxy.resolver),
      transport: this.proxy.transport,
      transportReason: this.proxy.transportChange?.reason ?? null,
      network: this.proxy.network,
      captive: this.proxy.captive,
      race: this.proxy.race,
      ladder: this.#ladder.steps(),
      lastVerifiedAt: this.proxy.lastVerifiedAt,
      mode: this.#settings.mode,
      listen: this.proxy.listening.map((a) => formatHostPort(a.host, a.port)),
      uptimeMs: this.proxy.startedAt === 0 ? 0 : Date.now() - this.proxy.startedAt,
      inFlight: this.proxy.inFlight,
      counters: { ...this.proxy.counters },
      leaks: this.proxy.leaks,
      ...(problems.length > 0 ? { problems } : {}),
      ...(this.controlUrl ? { control: this.controlUrl } : {}),
    };
  }

  resolvers(): ResolversView {
    return { active: this.proxy.resolver.id, resolvers: this.#resolvers.all().map((r) => this.#view(r)) };
  }

  /** What a new resolver is checked against: the ones listed, the one in use, the mode. */
  #resolverContext(): ResolverContext {
    return { existing: this.#resolvers.all(), activeId: this.proxy.resolver.id, strict: this.#settings.mode === 'strict' };
  }

  validateResolver(raw: unknown): ValidationView {
    const v = validateCustomResolver(raw, this.#resolverContext());
    if (!v.ok) return { ok: false, fields: v.fields };
    return { ok: true, fields: {} };
  }

  addResolver(raw: unknown): Promise<ResolverView> {
    return this.#serial(async () => {
      // Same address and port as one listed (the command line's included), or unverifiable in strict mode: said beside the field.
      const v = validateCustomResolver(raw, this.#resolverContext());
      if (!v.ok) throw validationFailure(v.fields);
      if (this.#resolvers.customCount >= MAX_CUSTOM_RESOLVERS) {
        throw new ApiFailure(409, 'conflict', `at most ${MAX_CUSTOM_RESOLVERS} custom resolvers; remove one first`);
      }
      await this.#resolvers.add(v.spec);
      return this.#view(v.spec);
    });
  }

  removeResolver(id: string): Promise<void> {
    return this.#serial(async () => {
      if (this.#resolvers.isPreset(id)) throw new ApiFailure(409, 'conflict', `${id} is a preset and can't be removed`);
      if (this.proxy.resolver.id === id) throw new ApiFailure(409, 'conflict', `${id} is in use: switch to another resolver first`);
      if (!this.#resolvers.isCustom(id)) throw new ApiFailure(404, 'not_found', `no custom resolver "${id}"`);
      await this.#resolvers.remove(id);
    });
  }

  /** Switches to a known resolver; new queries go there at once, the old pool drains in the background. */
  switchResolver(raw: unknown): Promise<StatusView> {
    return this.#serial(async () => {
      if (typeof raw !== 'object' || raw === null || typeof (raw as { id?: unknown }).id !== 'string') {
        throw validationFailure({ id: 'send {"id": "<resolver id>"}, an id from GET /api/resolvers' });
      }
      const body = raw as Record<string, unknown>;
      const extra = Object.keys(body).filter((k) => k !== 'id');
      if (extra.length > 0) throw validationFailure(Object.fromEntries(extra.map((k) => [k, `unknown field "${k}"`])));
      const id = body.id as string;
      const spec = this.#resolvers.get(id);
      if (!spec) throw new ApiFailure(404, 'not_found', `unknown resolver "${id}": use an id from GET /api/resolvers`);
      if (this.#settings.mode === 'strict' && !canAuthenticate(spec)) {
        throw new ApiFailure(
          409,
          'conflict',
          `${spec.label} has no authentication name or pin, so strict mode can't verify it: add one, or switch to opportunistic mode`,
        );
      }
      const from = this.proxy.resolver.id;
      await this.#resolvers.setActive(id);
      if (from !== id) {
        this.#ladder.reset(id);
        this.#background(this.proxy.switchResolver(spec));
        this.#event({ kind: 'resolver', at: Date.now(), from, to: id });
      }
      return this.status();
    });
  }

  /** Before a switch: does `id` answer now? One connection and one query, about a second (switch-probe.ts). */
  probeResolver(raw: unknown): Promise<SwitchProbeView> {
    const id = typeof raw === 'object' && raw !== null ? (raw as { id?: unknown }).id : undefined;
    if (typeof id !== 'string') return Promise.reject(validationFailure({ id: 'send {"id": "<resolver id>"}, an id from GET /api/resolvers' }));
    const spec = this.#resolvers.get(id);
    if (!spec) return Promise.reject(new ApiFailure(404, 'not_found', `unknown resolver "${id}": use an id from GET /api/resolvers`));
    return probeForSwitch(spec, this.proxy.config.auth, this.#measureScope);
  }

  /**
   * "Test resolvers": measures every listed resolver from this network, apart
   * from the active upstream (resolver-test.ts), and ranks them. One run at
   * a time: a request while one runs gets that run's result.
   */
  testResolvers(): Promise<ResolverTestResult> {
    if (this.#testing) return this.#testing;
    const run = testResolvers(this.#resolvers.all(), this.proxy.resolver.id, {
      ...this.#resolverTest,
      auth: this.proxy.config.auth,
      scope: this.#measureScope,
    });
    this.#testing = run;
    const clear = (): void => {
      if (this.#testing === run) this.#testing = null;
    };
    run.then(clear, clear);
    return run;
  }

  /**
   * "Retry now": the active resolver is tried at once instead of after its
   * back-off, the way a query arriving with no connection up would be (one
   * attempt at a time, at most one a second). The outcome arrives as usual,
   * as a connection event and a state change.
   */
  retryNow(): RetryView {
    return retryView(this.proxy.resolver.label, this.proxy.retryNow());
  }

  #background(p: Promise<void>): void {
    p.catch((err: unknown) => this.#onError(err));
  }

  #manager(): SystemDnsManager {
    if (!this.#systemDns) throw new ApiFailure(404, 'not_found', NOT_MANAGED);
    return this.#systemDns;
  }

  async systemDns(): Promise<SystemDnsView> {
    return this.#manager().refresh().catch((err: unknown) => Promise.reject(systemDnsFailure(err)));
  }

  /**
   * `{ enabled: true | false }`: takes over the system's DNS, or gives it
   * back; `{ enabled: false, pauseSeconds: N }` gives it back for N seconds
   * (1 to 86,400; the dashboard offers 5 minutes and 1 hour), then takes it over again by itself.
   */
  async setSystemDns(raw: unknown): Promise<SystemDnsView> {
    const manager = this.#manager();
    const body = parseSystemDnsBody(raw);
    try {
      if (typeof body.pauseSeconds === 'number') return await manager.pause(body.pauseSeconds * 1000);
      return await (body.enabled ? manager.enable() : manager.disable());
    } catch (err) {
      throw systemDnsFailure(err);
    }
  }

  /** The leak self-test: a random name through the system must reach this proxy, and no other resolver be known. */
  async leakTest(): Promise<SystemDnsView> {
    const manager = this.#manager();
    if (this.#leakNames) throw new ApiFailure(409, 'conflict', 'a leak test is already running');
    this.#leakNames = new Map();
    const seen = this.#leakNames;
    try {
      return await manager.leakTest(
        (name) => Promise.resolve(seen.has(name)),
        (name) => Promise.resolve(seen.get(name) === 'local'),
      );
    } catch (err) {
      throw systemDnsFailure(err);
    } finally {
      this.#leakNames = undefined;
    }
  }

  connections(): ConnectionView[] {
    return this.proxy.connections();
  }

  metricsView(): MetricsView {
    return metricsView(this.metrics, this.proxy.counters, this.proxy.inFlight, this.proxy.cacheSize);
  }

  queries(filter: QueryFilter, offset: number, limit: number): QueryPage {
    return this.log.page(filter, offset, limit);
  }

  /** "Clear log": forgets every query held (metrics and counters are kept: they are totals, not the log). */
  clearLog(): void {
    this.log.clear();
  }

  recentEvents(): TimelineEvent[] {
    return [...this.#timeline];
  }

  settings(): Settings {
    return this.#settings;
  }

  /**
   * What the desktop app's "Sign in to network" window needs: the portal's
   * page and the loopback proxy (with its credential) that resolves through
   * the network, for that window's session only. 409 unless signing in is allowed now.
   */
  signIn(): SignInView {
    return signIn(this.proxy);
  }

  /** The user's answer to a captive portal ("Allow sign-in", "Not now", "5 more minutes", "Check again"). */
  captiveAction(raw: unknown): StatusView {
    captiveAction(this.proxy, raw);
    return this.status();
  }

  /**
   * Validates a partial change, saves it, then applies it. Settings that only
   * new connections use (mode, pool size, in-flight cap, idle timeout)
   * rebuild the pool the way a resolver switch does: nothing is dropped.
   */
  updateSettings(raw: unknown): Promise<Settings> {
    return this.#serial(async () => {
      const parsed = parseSettingsPatch(raw);
      if (!parsed.ok) throw validationFailure(parsed.fields);
      const before = this.#settings;
      const next: Settings = { ...before, ...parsed.patch };
      // Turning the fallback on needs opportunistic mode; switching to strict just makes it inert.
      if (parsed.patch.cleartextFallback === true && next.mode === 'strict') {
        throw validationFailure({ cleartextFallback: 'the cleartext fallback needs opportunistic mode: strict mode never sends a lookup unencrypted' });
      }
      if (next.mode === 'strict' && !canAuthenticate(this.proxy.resolver)) {
        throw validationFailure({
          mode: `strict mode can't verify ${this.proxy.resolver.label} (no authentication name or pin): switch to a resolver that has one first`,
        });
      }
      const changed = changedFields(before, next);
      if (changed.length === 0) return before;
      // Save exactly what the user changed, on top of what is persisted.
      const patch = Object.fromEntries(changed.map((k) => [k, next[k]])) as Partial<Settings>;
      await this.#settingsStore.save(patch);
      this.#settings = next;
      if (next.logSize !== before.logSize) this.log.resize(next.logSize);
      if (!next.recordNames && before.recordNames) this.log.forgetNames();
      const rebuild = changed.some((k) => POOL_SETTINGS.includes(k));
      const auth = this.proxy.config.auth;
      this.#background(
        this.proxy.reconfigure({
          padding: next.padding,
          recordNames: next.recordNames,
          networkDns: next.networkDns,
          allowDegraded: next.cleartextFallback,
          ...(rebuild
            ? {
                pool: poolSettingsFrom(next),
                auth: { ...auth, mode: next.mode },
              }
            : {}),
        }),
      );
      this.#event({ kind: 'settings', at: Date.now(), changed });
      return next;
    });
  }
}
