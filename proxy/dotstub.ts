/**
 * The proxy, wired: listeners → engine (its router sends the networks' own
 * names to their links) → cache → captive gate → the running resolver's
 * upstream (engine/resolver-upstream.ts). Wiring only, nothing here changes
 * after start; every later decision lives in a named observer: which
 * resolver runs (privacy/resolver-choice.ts), the privacy controller
 * (privacy/privacy-controller.ts), the checks made once per network joined
 * (privacy/network-checks.ts), the network watch. The network we're on has
 * one owner (network/current-network.ts); what this run is now (its
 * configuration, when it started), run/live-run.ts.
 *
 * Observers (the control API, the CLI's log) hear what happens as events
 * (events.ts), read what is from the getters below, and tell the owners
 * handed out (engine, routing, privacy, choice, network, checks) of changes.
 */
import { EventEmitter } from 'node:events';
import { defaultConfig, type CaptiveConfig, type ProxyConfig, type RuntimeChanges } from './run/proxy-config.js';
import { currentNetworkFor } from './run/current-network-for.js';
import { LiveRun } from './run/live-run.js';
import type { ResolverSpec } from './config/resolvers.js';
import { drain } from './engine/drain.js';
import { Engine } from './engine/engine.js';
import { newCounters, type Counters } from './engine/query-record.js';
import { ResolverUpstream } from './engine/resolver-upstream.js';
import { routingFor, type Routing } from './engine/router.js';
import type { StubProxyEvents } from './events.js';
import type { ListenAddress } from './listen/address.js';
import { ClientShares } from './listen/client-shares.js';
import { Listeners } from './listen/listeners.js';
import type { CurrentNetwork } from './network/current-network.js';
import { leakWatchFor, notMeasured, type LeakView, type LeakWatch } from './network/leak-watch.js';
import { NetworkWatch, type NetworkChange } from './network/watch.js';
import { CaptiveGate } from './privacy/captive/gate.js';
import { DnssecCheck, type DnssecView } from './privacy/dnssec-check.js';
import { NetworkChecks } from './privacy/network-checks.js';
import { PrivacyController } from './privacy/privacy-controller.js';
import { ResolverChoice } from './privacy/resolver-choice.js';
import type { ConnectionSnapshot, RetryOutcome, Transport, TransportChange } from './upstream/managed.js';
import { poolCapacity } from './upstream/pool/options.js';

export { defaultConfig, type CaptiveConfig, type ProxyConfig, type RuntimeChanges };
export type { ConnectionEvent, NetworkView, PrivacyState, RaceView, StateChange } from './events.js';
export type { ConnectionSnapshot };

export class StubProxy extends EventEmitter<StubProxyEvents> {
  readonly #run: LiveRun;
  /** One object, each field with one writer: the engine, the cache (CachingUpstream) or the upstream pools. */
  readonly #counters: Counters = newCounters();
  readonly #engine: Engine;
  readonly #upstream: ResolverUpstream;
  readonly #privacy: PrivacyController;
  readonly #choice: ResolverChoice;
  readonly #network: CurrentNetwork;
  readonly #listeners: Listeners;
  readonly #watch: NetworkWatch | null;
  readonly #routing: Routing | null; // by name owner (engine/router.ts); null: off
  readonly #leaks: LeakWatch | null; // paths around dotstub, read from the OS's state where names are (network/leak-watch.ts)
  readonly #dnssec: DnssecCheck | null; // whether the resolver validates DNSSEC, measured once per resolver; null: not measured
  readonly #checks: NetworkChecks;

  constructor(config: ProxyConfig) {
    super();
    const run = (this.#run = new LiveRun(config));
    this.#upstream = new ResolverUpstream({
      first: config.resolver,
      cache: config.cache,
      counters: this.#counters,
      reach: () => ({ auth: run.config.auth, options: run.config.pool }),
      gate: (upstream) => new CaptiveGate(this.#privacy.captivePortal, upstream, this.#privacy.degraded),
    });
    const first = this.#upstream.current;
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
      run: (resolver) =>
        this.#upstream.switchTo(resolver, (front, next) => {
          this.#engine.setUpstream(front);
          run.switched(resolver);
          this.#privacy.switched(next);
          if (run.running) next.warm();
        }),
      told: (e) => this.emit('network-resolver', e),
      warning: (w) => this.emit('warning', w),
    });
    this.#routing = routingFor(config.names, {
      strict: () => run.config.auth.mode === 'strict',
      localNames: () => run.config.names?.localNames ?? 'ask',
      recordNames: () => run.config.recordNames,
      network: this.#network,
    });
    this.#engine = new Engine(this.#upstream.front(), { padding: config.padding, recordNames: config.recordNames, keepBrowsersOnStub: config.keepBrowsersOnStub }, this.#counters, this.#routing?.router ?? null);
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
  /** The query path's first stage: queries in flight, the last received. */
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
  /** Reads the OS's state again now (the takeover just rewrote it); settles once a reading begun after this call is applied, and pushed as 'leaks'. */
  async refreshLeaks(): Promise<void> {
    await this.#leaks?.refresh();
  }
  /** What the privacy controller decided and saw: the privacy state, the network's verdict, the last race, the captive portal, the sign-in proxy. */
  get privacy(): PrivacyController {
    return this.#privacy;
  }
  /** Which resolver runs (its one owner): told of the user's pick (choose), asked for the user's own resolver (chosen). */
  get choice(): ResolverChoice {
    return this.#choice;
  }
  /** The network we're on (its one owner): its key, what is remembered about it and every network, the user's choices. */
  get network(): CurrentNetwork {
    return this.#network;
  }
  /** The checks made once per network joined, and where they run in this run. */
  get checks(): NetworkChecks {
    return this.#checks;
  }
  /** Whether the resolver validates DNSSEC, as measured; null: not measured in this run. */
  get dnssec(): DnssecView | null {
    return this.#dnssec?.view ?? null;
  }
  /** Entries and bytes in the answer cache (null without one). */
  get cacheSize(): { readonly entries: number; readonly bytes: number; readonly maxBytes: number } | null {
    return this.#upstream.cacheSize;
  }

  connections(): ConnectionSnapshot[] {
    return this.#upstream.connections();
  }

  /** Binds the listeners (UDP and TCP share each port) and opens the pool. */
  async start(): Promise<readonly ListenAddress[]> {
    if (this.#run.running) throw new Error('proxy already started');
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
   * reads the new one and tells the rest (the name router, the leak watch,
   * the resolver's owner, the checks, the privacy controller, which restarts
   * the upstream where the new network's memory says).
   */
  networkChanged(change: NetworkChange): void {
    if (!this.#run.running) return;
    this.emit('network-change', change);
    this.#network.moved();
  }

  /** "Retry now": connect at once instead of waiting out the back-off. */
  retryNow(): RetryOutcome {
    return this.#run.running ? this.#upstream.current.retryNow() : 'closed';
  }

  /**
   * Stops without losing a query: new TCP connections are refused, but
   * queries already sent (in flight, or still in a socket buffer) are
   * answered until the proxy has been idle for a moment or `drainMs` passes;
   * whatever is left then gets SERVFAIL. Then everything closes.
   */
  async stop(drainMs = 3000): Promise<void> {
    if (!this.#run.running) return;
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
