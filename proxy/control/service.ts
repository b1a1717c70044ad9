/**
 * What the control API does, independent of HTTP: it listens to the proxy's
 * events (query, connection, state), keeps the query log, the sliding-window
 * metrics and the timeline, and holds the actions that carry out changes
 * (actions/: resolvers, settings, system DNS, captive portals, local names),
 * each with its body checked first, then persistence, then the change.
 *
 * Invariants:
 * - A change that fails validation or persistence changes nothing.
 * - Changes are serialised (one at a time), so the file on disk and the
 *   running proxy never disagree about which change came last.
 * - Switching the resolver or rebuilding the pool drops no query: the proxy
 *   moves new queries to the new pool and lets the old one drain.
 */
import type { ConfigProblem } from '../files/config-file.js';
import { MetricsWindow } from './metrics-window.js';
import { BlockedDays } from './blocked-days.js';
import type { QueryRecord } from '../engine/query-record.js';
import type { ConnectionEvent, StateChange, StubProxy } from '../dotstub.js';
import type { StubProxyEvents } from '../events.js';
import { QueryLog, type QueryFilter } from './query-log.js';
import type { ResolverStore } from '../config/resolver-store.js';
import type { ResolverSpec } from '../config/resolvers.js';
import type { Settings, SettingsStore } from '../run/settings.js';
import type { ConnectionView, MetricsView, QueryPage, ResolversView, ResolverView, RetiredNoticeView, SignInView, RetryView, StatusView, TimelineEvent } from './api-types.js';
import { StreamHub } from './stream.js';
import { metricsView } from './metrics-view.js';
import { captiveAction, signIn } from './actions/captive.js';
import { ResolverActions } from './actions/resolvers.js';
import { SettingsActions } from './actions/settings.js';
import { SystemDnsActions } from './actions/system-dns.js';
import { moveWords, retiredNoticeView } from './retired-notice.js';
import { retryView } from './retry-view.js';
import { NetworkLadder } from './ladder.js';
import { resolverView } from './resolver-view.js';
import { DEFAULT_RESOLVER_TEST, type MeasureScope } from './resolver-test.js';
import { formatHostPort } from '../runtime/host-port.js';
import { PRIVACY_WORDS } from '../privacy/privacy-words.js';
import type { CaptiveEvent } from '../privacy/captive/session.js';
import type { SystemDnsManager } from '../system-dns/manager.js';
import { Timeline } from './timeline.js';

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
  /** Where the events timeline is kept across restarts (the config dir's timeline.json); without it, in memory only. */
  readonly timelineFile?: string;
  /** The config dir, where the last resolver test is kept across restarts; none: kept in memory only. */
  readonly configDir?: string;
}

export class ControlService {
  readonly proxy: StubProxy;
  readonly log: QueryLog;
  readonly metrics = new MetricsWindow();
  /** Blocked answers per day, for the Overview. */
  readonly #blockedDays = new BlockedDays();
  readonly stream: StreamHub;
  /** The control server's URL, once it listens (for StatusView.control). */
  controlUrl: string | undefined;
  /** Check, add, remove, switch, probe and test resolvers (actions/resolvers.ts). */
  readonly resolverActions: ResolverActions;
  /** The settings in effect, and changes to them (actions/settings.ts). */
  readonly settingsActions: SettingsActions;
  /** The system-DNS takeover and the leak test (actions/system-dns.ts). */
  readonly systemDnsActions: SystemDnsActions;
  readonly #settingsStore: SettingsStore;
  readonly #resolvers: ResolverStore;
  readonly #timeline: Timeline;
  /** The fallback ladder as it ran for the active resolver (StatusView.ladder). */
  readonly #ladder: NetworkLadder;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #onError: (err: unknown) => void;
  readonly #unsubscribe: () => void;

  constructor(options: ControlServiceOptions) {
    this.proxy = options.proxy;
    this.#settingsStore = options.settings;
    this.#resolvers = options.resolvers;
    this.#onError = options.onError ?? ((err) => console.error('dotstub: control:', err));
    this.log = new QueryLog(options.effective.logSize);
    this.#timeline = new Timeline(options.timelineFile ?? null, TIMELINE_SIZE);
    this.#resolvers.addSession(this.proxy.resolver);
    this.#ladder = new NetworkLadder(this.proxy.resolver.id);
    const serial = <T>(fn: () => Promise<T>): Promise<T> => this.#serial(fn);
    const event = (e: TimelineEvent): void => this.#event(e);
    const background = (p: Promise<void>): void => void p.catch((err: unknown) => this.#onError(err));
    this.settingsActions = new SettingsActions({ proxy: this.proxy, store: options.settings, effective: options.effective, log: this.log, serial, event, background });
    this.resolverActions = new ResolverActions({
      proxy: this.proxy,
      store: options.resolvers,
      ladder: this.#ladder,
      mode: () => this.settingsActions.current.mode,
      serial,
      event,
      listChanged: () => this.stream.viewsChanged(),
      background,
      view: (spec) => this.#view(spec),
      status: () => this.status(),
      measureScope: options.measureScope ?? 'all',
      resolverTest: { ...DEFAULT_RESOLVER_TEST, ...options.resolverTest },
      ...(options.configDir ? { configDir: options.configDir } : {}),
    });
    // After a takeover change the page reads the leak line at once: the answer waits for the OS to be read again.
    this.systemDnsActions = new SystemDnsActions(options.systemDns, () => this.proxy.refreshLeaks());
    this.stream = new StreamHub({
      intervalMs: options.streamIntervalMs ?? 250,
      snapshot: () => ({ counters: this.proxy.counters, inFlight: this.proxy.engine.inFlight }),
      views: () => ({ status: this.status(), resolvers: this.resolvers(), connections: this.connections(), metrics: this.metricsView(), settings: this.settings() }),
    });
    const onQuery = (r: QueryRecord): void => {
      this.systemDnsActions.sawQuery(r);
      this.log.push(r);
      this.metrics.record(r);
      this.#blockedDays.record(r);
      this.stream.pushQuery(r);
    };
    // A flapping link's episode (privacy/flap-episode.ts) is told as its first and last lines: the states and
    // connections between them are the live views' to show, not a line each in the timeline and the stream.
    const quiet = (): boolean => this.proxy.privacy.flapping;
    const onConnection = (event: ConnectionEvent): void => {
      this.#ladder.record(event);
      if (!quiet()) this.#event({ kind: 'connection', event });
    };
    // The takeover's changes are the proxy's own state events (app.ts feeds them to its reducer); the timeline keeps the user's choice beside the change, as it always did.
    const onState = ({ takeover, ...event }: StateChange): void => {
      if (quiet() && event.episode === undefined && takeover === undefined) return;
      this.#event({ kind: 'state', event, ...(takeover ? { takeover } : {}) });
    };
    const onNetworkChange = (): void => this.#ladder.reset(this.proxy.resolver.id);
    const onCaptive = (event: CaptiveEvent): void => this.#event({ kind: 'captive', event });
    const onNetworkResolver = (e: StubProxyEvents['network-resolver'][0]): void =>
      this.#event({ kind: 'resolver', at: Date.now(), from: e.from.id, to: e.to.id, reason: e.reason, fromLabel: e.from.label, toLabel: e.to.label, networkChoice: true });
    // A new leak reading, DNSSEC measurement, networks revision or transport is pushed at once (the status view carries them), never left to the 15 s refresh.
    const pushViews = (): void => this.stream.viewsChanged();
    this.proxy.on('query', onQuery);
    this.proxy.on('connection', onConnection);
    this.proxy.on('state', onState);
    this.proxy.on('captive', onCaptive);
    this.proxy.on('leaks', pushViews);
    this.proxy.on('dnssec', pushViews);
    this.proxy.on('networks', pushViews);
    this.proxy.on('transport', pushViews);
    this.proxy.on('network-change', onNetworkChange);
    this.proxy.on('network-resolver', onNetworkResolver);
    // Taken over again because a crash had ended it (at start, or whenever the manager says so): the timeline says so, once.
    let resumedTold: string | null = null;
    const tellResumed = (): void => {
      const resumed = options.systemDns?.resumed ?? null;
      if (resumed === null || resumed === resumedTold) return;
      resumedTold = resumed;
      // The user's choice restored, said whatever the state is this instant (the first connection may still be opening: "still Off" then, and the change follows as its own line).
      this.#event({ kind: 'state', event: { state: this.status().state, previous: 'off', reason: resumed, at: Date.now(), resolverId: this.proxy.resolver.id }, takeover: { action: 'turned-back-on' } });
    };
    tellResumed();
    const onTakeover = (): void => {
      tellResumed();
      // The takeover wrote or gave back the OS's DNS files (also by itself: a pause ending, the watchdog): read them again now.
      void this.proxy.refreshLeaks().catch((err: unknown) => this.#onError(err));
    };
    options.systemDns?.on('change', onTakeover);
    this.#unsubscribe = () => {
      this.proxy.off('query', onQuery);
      this.proxy.off('connection', onConnection);
      this.proxy.off('state', onState);
      this.proxy.off('captive', onCaptive);
      this.proxy.off('leaks', pushViews);
      this.proxy.off('dnssec', pushViews);
      this.proxy.off('networks', pushViews);
      this.proxy.off('transport', pushViews);
      options.systemDns?.off('change', onTakeover);
      this.proxy.off('network-change', onNetworkChange);
      this.proxy.off('network-resolver', onNetworkResolver);
    };
  }

  close(): void {
    this.#unsubscribe();
    this.stream.close();
    this.#timeline.flush();
  }

  #event(e: TimelineEvent): void {
    this.#timeline.push(e);
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
    const s = this.proxy.privacy.state;
    const problems = this.problems();
    return {
      state: s.state,
      reason: s.reason,
      since: s.since,
      leaves: PRIVACY_WORDS[s.state].leaves,
      resolver: this.#view(this.proxy.resolver),
      transport: this.proxy.transport,
      transportReason: this.proxy.transportChange?.reason ?? null,
      network: this.proxy.privacy.network,
      captive: this.proxy.privacy.captive,
      race: this.proxy.privacy.race,
      ladder: this.#ladder.steps(),
      lastVerifiedAt: this.proxy.privacy.lastVerifiedAt,
      mode: this.settingsActions.current.mode,
      listen: this.proxy.listening.map((a) => formatHostPort(a.host, a.port)),
      uptimeMs: this.proxy.startedAt === 0 ? 0 : Date.now() - this.proxy.startedAt,
      inFlight: this.proxy.engine.inFlight,
      counters: { ...this.proxy.counters },
      leaks: this.proxy.leaks,
      dnssec: this.proxy.dnssec,
      networksRevision: this.proxy.network.revision,
      ...(problems.length > 0 ? { problems } : {}),
      retiredNotice: this.#retiredNotice(),
      ...(this.controlUrl ? { control: this.controlUrl } : {}),
    };
  }

  #retiredNotice(): RetiredNoticeView | null {
    const s = this.proxy.privacy.state.state;
    return retiredNoticeView({
      notice: this.#resolvers.retiredNotice,
      saved: this.#resolvers.persistedActive,
      running: this.proxy.resolver.id,
      connected: s === 'private' || s === 'private-unverified',
    });
  }

  /**
   * At start: saves the move away from a retired preset the config dir
   * named (ResolverStore.load made it), and says it once in the timeline
   * (the log said it before the proxy started: app.ts). If the save fails
   * the move is still said, and made again next start.
   */
  async settleRetired(): Promise<void> {
    const retired = this.#resolvers.retiring;
    if (!retired) return;
    this.#event({ kind: 'resolver', at: Date.now(), from: retired.id, to: retired.replacement, reason: moveWords(retired), fromLabel: retired.label });
    await this.#serial(() => this.#resolvers.settleRetired());
    this.stream.viewsChanged();
  }

  /** DELETE /api/resolvers/retired-notice: the user read it; not shown again, after a restart either. */
  dismissRetiredNotice(): Promise<void> {
    return this.#serial(async () => {
      await this.#resolvers.dismissRetiredNotice();
      this.stream.viewsChanged();
    });
  }

  resolvers(): ResolversView {
    return { active: this.proxy.resolver.id, chosen: this.proxy.choice.chosen.id, previous: this.resolverActions.previous, resolvers: this.#resolvers.all().map((r) => this.#view(r)) };
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

  connections(): ConnectionView[] {
    return this.proxy.connections();
  }

  metricsView(): MetricsView {
    return metricsView(this.metrics, this.proxy.counters, this.proxy.engine.inFlight, this.proxy.cacheSize, this.#blockedDays);
  }

  queries(filter: QueryFilter, offset: number, limit: number): QueryPage {
    return this.log.page(filter, offset, limit);
  }

  /** "Clear log": forgets every query held (metrics and counters are kept: they are totals, not the log). */
  clearLog(): void {
    this.log.clear();
  }

  recentEvents(): TimelineEvent[] {
    return this.#timeline.all();
  }

  settings(): Settings {
    return this.settingsActions.current;
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
}
