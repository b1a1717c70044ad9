/**
 * The proxy, wired: listeners → engine (its router sends the networks' own
 * names to their links) → cache → captive gate → the running resolver's
 * upstream (upstream/for-resolver.ts). Wiring only: nothing here changes
 * after start. Every later decision lives in a named observer: which
 * resolver runs (privacy/resolver-choice.ts), the privacy controller
 * (privacy/privacy-controller.ts: privacy state, connection events, warm
 * re-open, portal checks, degraded mode), the checks made once per network
 * joined (privacy/network-checks.ts) and the network watch. The network
 * we're on has one owner (network/current-network.ts, built by
 * run/current-network-for.ts); what this run is now (its configuration,
 * when it started) is run/live-run.ts's. The app and the test harnesses
 * build it with startDotstub.
 *
 * Observers (the control API, the CLI's log) hear what happens as events
 * (events.ts). The control API also reads what is, now, from the getters
 * below and tells the owners of changes; four getters hand out a stage or
 * an owner itself (engine, routing, privacy, network, choice).
 */
import { EventEmitter } from 'node:events';
import { AnswerCache } from './cache/answer-cache.js';
import { CachingUpstream } from './cache/caching-upstream.js';
import { defaultConfig, type CaptiveConfig, type ProxyConfig, type RuntimeChanges } from './run/proxy-config.js';
import { currentNetworkFor } from './run/current-network-for.js';
import { LiveRun } from './run/live-run.js';
import type { ResolverSpec } from './config/resolvers.js';
import { drain } from './engine/drain.js';
import { Engine } from './engine/engine.js';
import { newCounters, type Counters } from './engine/query-record.js';
import { routingFor, type Routing } from './engine/router.js';
import type { StubProxyEvents } from './events.js';
import type { ListenAddress } from './listen/address.js';
import { ClientShares } from './listen/client-shares.js';
import { Listeners } from './listen/listeners.js';
import type { CurrentNetwork } from './network/current-network.js';
import { leakWatchFor, notMeasured, type LeakView, type LeakWatch } from './network/leak-watch.js';
import { NetworkWatch, type NetworkChange } from './network/watch.js';
import { CaptiveGate } from './privacy/captive/gate.js';
import type { DdrPolicy } from './privacy/ddr-check.js';
import type { DnsCheckPolicy } from './privacy/dns-check.js';
import { DnssecCheck, type DnssecView } from './privacy/dnssec-check.js';
import { NetworkChecks } from './privacy/network-checks.js';
import { PrivacyController, type CaptiveAction } from './privacy/privacy-controller.js';
import { ResolverChoice } from './privacy/resolver-choice.js';
import { ActiveUpstream } from './upstream/active.js';
import { upstreamFor } from './upstream/for-resolver.js';
import type { ConnectionSnapshot, ManagedUpstream, RetryOutcome, Transport, TransportChange } from './upstream/managed.js';
import { poolCapacity } from './upstream/pool/options.js';

export { defaultConfig, type CaptiveConfig, type ProxyConfig, type RuntimeChanges };
export type { ConnectionEvent, NetworkView, PrivacyState, RaceView, StateChange } from './events.js';
export type { ConnectionSnapshot };

export class StubProxy extends EventEmitter<StubProxyEvents> {
  readonly #run: LiveRun;
  /** One object, each field with one writer: the engine, the cache (CachingUpstream) or the upstream pools. */
  readonly #counters: Counters = newCounters();
  readonly #engine: Engine;
  readonly #upstream: ActiveUpstream;
  /** Answers from every resolver used so far are flushed on a switch: one cache, per proxy. */
  readonly #cache: AnswerCache | null;
  readonly #privacy: PrivacyController;
  readonly #choice: ResolverChoice;
  readonly #network: CurrentNetwork;
  readonly #listeners: Listeners;
  readonly #watch: NetworkWatch | null;
  readonly #routing: Routing | null; // by name owner (engine/router.ts); null: off
  readonly #leaks: LeakWatch | null; // paths around dotstub, read from the OS's state where names are (network/leak-watch.ts)
  readonly #dnssec: DnssecCheck | null; // whether the resolver validates DNSSEC, measured once per resolver (privacy/dnssec-check.ts); null: not measured
  readonly #checks: NetworkChecks;

  constructor(config: ProxyConfig) {
    super();
    const run = (this.#run = new LiveRun(config));
    this.#cache = config.cache ? new AnswerCache(config.cache) : null;
    const first = this.#makeUpstream(config.resolver);
    this.#upstream = new ActiveUpstream(first);
    this.#network = currentNetworkFor(config);
    this.#privacy = new PrivacyController({
      options: {
        mode: () => run.config.auth.mode,
        allowDegraded: () => run.config.allowDegraded,
        networkDns: () => run.config.networkDns,
        captive: config.captive,
        captiveNetworkDns: () => run.config.captive?.networkDns ?? [],
      },
      lastQueryAt: () => this.#engine.lastReceivedAt,
      upstream: first,
      network: this.#network,
    });
    // What the controller says is the proxy's to say.
    this.#privacy.on('state', (e) => this.emit('state', e));
    this.#privacy.on('connection', (e) => {
      this.emit('connection', e);
      if (e.type === 'open' && e.verified && e.resolverId === this.resolver.id) this.#dnssec?.opened(this.#upstream.current);
    });
    this.#privacy.on('captive', (e) => this.emit('captive', e));
    this.#privacy.on('transport', (e) => this.emit('transport', e));
    this.#privacy.on('warning', (w) => this.emit('warning', w));
    this.#choice = new ResolverChoice({
      first: config.resolver,
      network: this.#network,
      run: (resolver) => this.#switchTo(resolver),
      told: (e) => this.emit('network-resolver', e),
      warning: (w) => this.emit('warning', w),
    });
    this.#routing = routingFor(config.names, {
      strict: () => run.config.auth.mode === 'strict',
      localNames: () => run.config.names?.localNames ?? 'ask',
      recordNames: () => run.config.recordNames,
      network: this.#network,
    });
    this.#engine = new Engine(this.#gated(first), { padding: config.padding, recordNames: config.recordNames, keepBrowsersOnStub: config.keepBrowsersOnStub }, this.#counters, this.#routing?.router ?? null);
    this.#engine.on('query', (r) => {
      this.#privacy.answered(r);
      this.emit('query', r);
    });
    this.#engine.on('malformed', (why) => this.emit('malformed', why));
    // Every listener's clients share the pool's capacity fairly: its connections at most, each at its in-flight cap.
    const shares = new ClientShares(() => poolCapacity(run.config.pool));
    this.#listeners = new Listeners((raw, transport, reply) => this.#engine.handle(raw, transport, reply), shares);
    this.#watch = config.watchNetwork ? new NetworkWatch() : null;
    this.#watch?.on('change', (c) => this.networkChanged(c));
    this.#leaks = leakWatchFor(config.names, { watchingNetwork: this.#watch !== null, ours: (s) => this.#listeners.serves(s.host, s.port), network: this.#network });
    this.#leaks?.onChange((view) => this.emit('leaks', view));
    this.#network.on('remembered', () => this.emit('networks'));
    this.#dnssec = config.dnssecCheck ? new DnssecCheck(config.dnssecCheck, (view) => this.emit('dnssec', view)) : null;
    this.#checks = new NetworkChecks({
      network: this.#network,
      config: () => run.config,
      addresses: () => this.resolver.addresses,
      nat64Changed: () => this.#privacy.networkHintChanged(),
      offerChecked: () => this.#choice.offerChecked(),
    });
  }

  /** The run's configuration now: replaced (never edited) by a switch and by reconfigure (run/live-run.ts). */
  get config(): ProxyConfig {
    return this.#run.config;
  }
  get counters(): Readonly<Counters> {
    return this.#counters;
  }
  get state(): PrivacyController['state'] {
    return this.#privacy.state;
  }
  get resolver(): ResolverSpec {
    return this.#upstream.current.resolver;
  }
  /** The transport carrying queries now; null while none is connected. */
  get transport(): Transport | null {
    return this.#upstream.current.transport;
  }
  /** Why the active resolver's transport is what it is (a resolver with a DoH URL); null: DoT only, or nothing decided yet. */
  get transportChange(): TransportChange | null {
    return this.#upstream.current.lastChange;
  }
  get listening(): readonly ListenAddress[] {
    return this.#listeners.bound;
  }
  get startedAt(): number {
    return this.#run.startedAt;
  }
  get running(): boolean {
    return this.#run.running;
  }
  get inFlight(): number {
    return this.#engine.inFlight;
  }
  get engine(): Engine {
    return this.#engine;
  }
  get routing(): Routing | null {
    return this.#routing;
  }
  /** Whether lookups can go around dotstub now, as read from the OS (StatusView.leaks). */
  get leaks(): LeakView {
    return this.#leaks?.view() ?? notMeasured("this run of dotstub doesn't read the system's DNS settings (started with routing by name owner off)");
  }
  /**
   * Reads the OS's state again now (the takeover just rewrote it); settles
   * once a reading begun after this call is applied, and pushed as 'leaks'.
   */
  async refreshLeaks(): Promise<void> {
    await this.#leaks?.refresh();
  }
  /** What the privacy controller decided and saw: the network's verdict, the last race, the sign-in proxy. */
  get privacy(): PrivacyController {
    return this.#privacy;
  }
  /** Which resolver runs (its one owner): the user's pick is told to it (choose), the user's own resolver read from it (chosen). */
  get choice(): ResolverChoice {
    return this.#choice;
  }
  /** The network we're on (its one owner): its key, what is remembered about it and every network, the user's choices. */
  get network(): CurrentNetwork {
    return this.#network;
  }
  get captive(): PrivacyController['captive'] {
    return this.#privacy.captive;
  }
  /** Whether the resolver validates DNSSEC, as measured; null: not measured in this run. */
  get dnssec(): DnssecView | null {
    return this.#dnssec?.view ?? null;
  }
  /** Where the DNS-interception check runs in this run (every network, only where local names are allowed, or nowhere). */
  get dnsCheck(): DnsCheckPolicy {
    return this.#checks.dnsCheck;
  }
  /** Where this run asks networks for their own encrypted resolver (every network, only where local names are allowed, or nowhere). */
  get ddrCheck(): DdrPolicy {
    return this.#checks.ddrCheck;
  }
  /** Entries and bytes in the answer cache (null without one). */
  get cacheSize(): { readonly entries: number; readonly bytes: number; readonly maxBytes: number } | null {
    return this.#cache ? { entries: this.#cache.entries, bytes: this.#cache.bytes, maxBytes: this.#cache.options.maxBytes } : null;
  }

  connections(): ConnectionSnapshot[] {
    return this.#upstream.connections();
  }

  captiveAction(action: CaptiveAction, remember = false): boolean {
    return this.#privacy.captiveAction(action, remember);
  }

  /** Binds the listeners (UDP and TCP share each port) and opens the pool. */
  async start(): Promise<readonly ListenAddress[]> {
    if (this.running) throw new Error('proxy already started');
    // The network's key first: the name router's first table is read with this network's choices.
    this.#network.start();
    await this.#routing?.start();
    const bound = await this.#listeners.bind(this.config.listen, (w) => this.emit('warning', w));
    // A choice remembered for this network applies before the first connection: the warm one goes to it.
    this.#choice.start();
    this.#run.started(Date.now());
    this.#privacy.started();
    if (this.config.warm) this.#upstream.current.warm();
    this.#watch?.start();
    this.#checks.start();
    await this.#leaks?.start();
    this.emit('listening', bound);
    return bound;
  }

  /**
   * The wiring's half of a switch (privacy/resolver-choice.ts decides):
   * new queries go to the new upstream at once; the old one finishes its
   * in-flight queries, then closes.
   */
  async #switchTo(resolver: ResolverSpec): Promise<void> {
    const next = this.#makeUpstream(resolver);
    // Answers from the old resolver must not be served as the new one's.
    this.#cache?.clear();
    this.#engine.setUpstream(this.#gated(next));
    this.#run.switched(resolver);
    this.#privacy.switched(next);
    if (this.running) next.warm();
    await this.#upstream.replace(next);
  }

  /**
   * Applies new settings at run time: `padding` and `recordNames` from the
   * next query; pool options and the authentication mode rebuild the pool as
   * a switch does (nothing dropped). Resolves once the old pool drained.
   */
  async reconfigure(changes: RuntimeChanges): Promise<void> {
    this.#engine.configure({
      ...(changes.padding !== undefined ? { padding: changes.padding } : {}),
      ...(changes.recordNames !== undefined ? { recordNames: changes.recordNames } : {}),
    });
    this.#run.changed(changes, this.#engine.options);
    this.#privacy.settingsChanged();
    this.#checks.settingsChanged();
    if (changes.pool !== undefined || changes.auth !== undefined) await this.#choice.rebuild();
  }

  /**
   * The network changed under us (network/watch.ts, or a test): its owner
   * reads the new one and tells the rest: the name router reads the new
   * table, the leak watch the OS again, the resolver's owner applies this
   * network's choice, and the privacy controller restarts the upstream on
   * the transport the new network's memory says (queries in flight are
   * retried on the new connections).
   */
  networkChanged(change: NetworkChange): void {
    if (!this.running) return;
    this.emit('network-change', change);
    this.#network.moved();
  }

  /** "Retry now": connect at once instead of waiting out the back-off. */
  retryNow(): RetryOutcome {
    return this.running ? this.#upstream.current.retryNow() : 'closed';
  }

  /**
   * Stops without losing a query: new TCP connections are refused, but
   * queries already sent (in flight, or still in a socket buffer) are
   * answered until the proxy has been idle for a moment or `drainMs` passes;
   * whatever is left then gets SERVFAIL. Then everything closes.
   */
  async stop(drainMs = 3000): Promise<void> {
    if (!this.running) return;
    this.#run.stopped();
    this.#privacy.stopping();
    this.#choice.stop();
    this.#checks.stop();
    this.#network.stop();
    this.#watch?.stop();
    this.#listeners.stopTcp();
    await drain(this.#engine, drainMs);
    this.#listeners.stopUdp();
    this.#upstream.destroy();
    this.#routing?.stop();
    this.#leaks?.stop();
    await this.#engine.idle();
    await this.#listeners.close();
    this.#privacy.stopped();
  }

  #makeUpstream(resolver: ResolverSpec): ManagedUpstream {
    const { auth, pool: options } = this.#run.config;
    return upstreamFor(resolver, { auth, options, counters: this.#counters });
  }

  /**
   * The engine's upstream: behind the captive gate (captive sign-in, degraded
   * mode), behind the answer cache when there is one (so cached private
   * answers, and stale ones, still serve while signing in).
   */
  #gated(upstream: ManagedUpstream): CaptiveGate | CachingUpstream {
    const gated = new CaptiveGate(this.#privacy.captivePortal, upstream, this.#privacy.degraded);
    return this.#cache ? new CachingUpstream(this.#cache, gated, this.#counters) : gated;
  }
}

/**
 * Builds the proxy from `config` and starts it (the app and the test
 * harnesses all start dotstub here). `observe` runs before start, so
 * listeners see every event from the first one.
 */
export async function startDotstub(
  config: ProxyConfig,
  observe?: (proxy: StubProxy) => void,
): Promise<{ readonly proxy: StubProxy; readonly bound: readonly ListenAddress[] }> {
  const proxy = new StubProxy(config);
  observe?.(proxy);
  const bound = await proxy.start();
  return { proxy, bound };
}
