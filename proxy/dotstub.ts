/**
 * The proxy, wired: listeners → engine (its router sends the networks' own
 * names to their links) → cache → captive gate → the active resolver's
 * upstream (upstream/for-resolver.ts); decisions in named observers: the
 * privacy controller (privacy/privacy-controller.ts: privacy state,
 * connection events, warm re-open, portal checks, degraded mode) and the
 * network watch. The network we're on has one owner
 * (network/current-network.ts): the name router, the leak watch and the
 * privacy controller hear from it when it changes. The app and the test
 * harnesses build it with startDotstub.
 *
 * Observers (the control API, the CLI's log) hear what happens as events
 * (events.ts). The control API also reads what is, now, from the getters
 * below and asks for changes through the methods; three getters hand out a
 * stage itself (engine, routing, privacy), which its actions reach into.
 */
import { EventEmitter } from 'node:events';
import { AnswerCache } from './cache/answer-cache.js';
import { CachingUpstream } from './cache/caching-upstream.js';
import { defaultConfig, withChanges, type CaptiveConfig, type ProxyConfig, type RuntimeChanges } from './run/proxy-config.js';
import type { ResolverSpec } from './config/resolvers.js';
import { drain } from './engine/drain.js';
import { Engine } from './engine/engine.js';
import { newCounters, type Counters } from './engine/query-record.js';
import { routingFor, type Routing } from './engine/router.js';
import type { StubProxyEvents } from './events.js';
import type { ListenAddress } from './listen/address.js';
import { ClientShares } from './listen/client-shares.js';
import { Listeners } from './listen/listeners.js';
import { CurrentNetwork } from './network/current-network.js';
import { leakWatchFor, notMeasured, type LeakView, type LeakWatch } from './network/leak-watch.js';
import type { DdrOffer } from './network/network-memory.js';
import { networkName } from './network/network-name.js';
import { discoverNetworkResolver } from './network/network-resolver.js';
import { NetworkWatch, type NetworkChange } from './network/watch.js';
import { CaptiveGate } from './privacy/captive/gate.js';
import { DdrCheck, resolverForOffer, type DdrPolicy } from './privacy/ddr-check.js';
import { DnsCheck, type DnsCheckPolicy } from './privacy/dns-check.js';
import { Nat64Check } from './privacy/nat64-check.js';
import { DnssecCheck, type DnssecView } from './privacy/dnssec-check.js';
import { PrivacyController, type CaptiveAction } from './privacy/privacy-controller.js';
import { ActiveUpstream } from './upstream/active.js';
import { upstreamFor } from './upstream/for-resolver.js';
import type { ConnectionSnapshot, ManagedUpstream, RetryOutcome, Transport, TransportChange } from './upstream/managed.js';
import { poolCapacity } from './upstream/pool/options.js';

export { defaultConfig, type CaptiveConfig, type ProxyConfig, type RuntimeChanges };
export type { ConnectionEvent, NetworkView, PrivacyState, RaceView, StateChange } from './events.js';
export type { ConnectionSnapshot };

export class StubProxy extends EventEmitter<StubProxyEvents> {
  /** The run's configuration; replaced (never edited) by switchResolver and reconfigure. */
  #config: ProxyConfig;
  /** One object, each field with one writer: the engine, the cache (CachingUpstream) or the upstream pools. */
  readonly #counters: Counters = newCounters();
  readonly #engine: Engine;
  readonly #upstream: ActiveUpstream;
  /** Answers from every resolver used so far are flushed on a switch: one cache, per proxy. */
  readonly #cache: AnswerCache | null;
  readonly #privacy: PrivacyController;
  readonly #network: CurrentNetwork;
  readonly #listeners: Listeners;
  readonly #watch: NetworkWatch | null;
  readonly #routing: Routing | null; // by name owner (engine/router.ts); null: off
  readonly #leaks: LeakWatch | null; // paths around dotstub, read from the OS's state where names are (network/leak-watch.ts)
  readonly #dnsCheck: DnsCheck | null; // whether the network answers DNS for every address, once per join (privacy/dns-check.ts); null: off
  readonly #dnssec: DnssecCheck | null; // whether the resolver validates DNSSEC, measured once per resolver (privacy/dnssec-check.ts); null: not measured
  readonly #ddr: DdrCheck; // the network's own encrypted resolver, asked for once per join (with the network checks), used where the user chose it (privacy/ddr-check.ts)
  readonly #nat64: Nat64Check; // on a network without IPv4, the NAT64 prefix an IPv4 resolver is reached through, once per join (privacy/nat64-check.ts)
  /** The user's own resolver (switchResolver): what runs unless the network's own was chosen for the network we're on. */
  #chosen: ResolverSpec;
  /** The network's own encrypted resolver in use now instead (the user chose it for this network); null: the user's own. */
  #networkOwn: ResolverSpec | null = null;
  #startedAt = 0;

  constructor(config: ProxyConfig) {
    super();
    this.#config = config;
    this.#chosen = config.resolver;
    this.#cache = config.cache ? new AnswerCache(config.cache) : null;
    const first = this.#makeUpstream(config.resolver);
    this.#upstream = new ActiveUpstream(first);
    this.#network = currentNetworkFor(config);
    this.#privacy = new PrivacyController({
      options: {
        mode: () => this.#config.auth.mode,
        allowDegraded: () => this.#config.allowDegraded,
        networkDns: () => this.#config.networkDns,
        captive: config.captive,
        captiveNetworkDns: () => this.#config.captive?.networkDns ?? [],
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
    this.#routing = routingFor(config.names, {
      strict: () => this.#config.auth.mode === 'strict',
      localNames: () => this.#config.names?.localNames ?? 'ask',
      recordNames: () => this.#config.recordNames,
      network: this.#network,
    });
    this.#engine = new Engine(this.#gated(first), { padding: config.padding, recordNames: config.recordNames, keepBrowsersOnStub: config.keepBrowsersOnStub }, this.#counters, this.#routing?.router ?? null);
    this.#engine.on('query', (r) => {
      this.#privacy.answered(r);
      this.emit('query', r);
    });
    this.#engine.on('malformed', (why) => this.emit('malformed', why));
    // Every listener's clients share the pool's capacity fairly: its connections at most, each at its in-flight cap.
    const shares = new ClientShares(() => poolCapacity(this.#config.pool));
    this.#listeners = new Listeners((raw, transport, reply) => this.#engine.handle(raw, transport, reply), shares);
    this.#watch = config.watchNetwork ? new NetworkWatch() : null;
    this.#watch?.on('change', (c) => this.networkChanged(c));
    this.#leaks = leakWatchFor(config.names, { watchingNetwork: this.#watch !== null, ours: (s) => this.#listeners.serves(s.host, s.port), network: this.#network });
    this.#leaks?.onChange((view) => this.emit('leaks', view));
    this.#network.on('remembered', () => this.emit('networks'));
    this.#dnssec = config.dnssecCheck ? new DnssecCheck(config.dnssecCheck, (view) => this.emit('dnssec', view)) : null;
    this.#dnsCheck = config.dnsCheck ? new DnsCheck({ network: this.#network, mode: () => this.#config.auth.mode, target: config.dnsCheck }) : null;
    const ddr = config.ddrCheck;
    this.#ddr = new DdrCheck({
      network: this.#network,
      mode: () => this.#config.auth.mode,
      networkResolver: () => {
        const captiveDns = this.#config.captive?.networkDns ?? [];
        return discoverNetworkResolver(captiveDns.length ? captiveDns : this.#config.networkDns, this.#config.captive?.paths)?.servers[0] ?? null;
      },
      options: ddr ? () => ({ ca: this.#config.auth.ca, timeoutMs: ddr.timeoutMs }) : null,
      use: (offer) => this.#useNetworkOwn(offer),
    });
    this.#nat64 = new Nat64Check({
      network: this.#network,
      mode: () => this.#config.auth.mode,
      addresses: () => this.resolver.addresses,
      networkResolver: () => discoverNetworkResolver(this.#config.networkDns)?.servers[0] ?? null,
      apply: () => this.#privacy.networkHintChanged(),
      mayAsk: () => this.#config.ddrCheck !== null,
    });
  }

  get config(): ProxyConfig {
    return this.#config;
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
    return this.#startedAt;
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
  get running(): boolean {
    return this.#startedAt !== 0;
  }
  /** What the privacy controller decided and saw: the network's verdict, the last race, the sign-in proxy. */
  get privacy(): PrivacyController {
    return this.#privacy;
  }
  /** The network we're on (its one owner): its key, what is remembered about it and every network, the user's choices. */
  get network(): CurrentNetwork {
    return this.#network;
  }
  get captive(): PrivacyController['captive'] {
    return this.#privacy.captive;
  }
  /** Where the DNS-interception check runs in this run (every network, only where local names are allowed, or nowhere). */
  /** Whether the resolver validates DNSSEC, as measured; null: not measured in this run. */
  get dnssec(): DnssecView | null {
    return this.#dnssec?.view ?? null;
  }

  get dnsCheck(): DnsCheckPolicy {
    return this.#dnsCheck?.policy ?? 'off';
  }
  /** Where this run asks networks for their own encrypted resolver (every network, only where local names are allowed, or nowhere). */
  get ddrCheck(): DdrPolicy {
    return this.#ddr.policy ?? 'off';
  }
  /** The resolver the user chose (the one in use unless this network's own was chosen for it). */
  get chosenResolver(): ResolverSpec {
    return this.#chosen;
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
    const bound = await this.#listeners.bind(this.#config.listen, (w) => this.emit('warning', w));
    this.#startedAt = Date.now();
    this.#privacy.started();
    if (this.#config.warm) this.#upstream.current.warm();
    this.#watch?.start();
    this.#dnsCheck?.start();
    this.#ddr.start();
    this.#nat64.start();
    await this.#leaks?.start();
    this.emit('listening', bound);
    return bound;
  }

  /**
   * Switches the active resolver without dropping a query: new queries go to
   * the new upstream at once; the old one finishes its in-flight queries,
   * then closes.
   */
  async switchResolver(resolver: ResolverSpec): Promise<void> {
    // The user's choice: it is what runs now, on this network too (the control API's switch also makes it this network's choice: actions/resolvers.ts).
    this.#chosen = resolver;
    this.#networkOwn = null;
    await this.#switchTo(resolver);
  }

  /**
   * The network's own encrypted resolver, chosen by the user for the network
   * we're on (privacy/ddr-check.ts), or null: back to the user's own. Never
   * called but for such a choice: nothing here switches by itself.
   */
  #useNetworkOwn(offer: DdrOffer | null): void {
    const next = offer ? resolverForOffer(offer) : null;
    const same = (a: ResolverSpec | null, b: ResolverSpec | null): boolean => JSON.stringify(a) === JSON.stringify(b);
    if (same(next, this.#networkOwn) || (next === null && this.#networkOwn === null)) return;
    this.#networkOwn = next;
    const to = next ?? this.#chosen;
    const from = this.resolver;
    if (same(to, from)) return;
    // Said on the timeline: a switch the user chose, made now (joining the network, or the click), never a silent one.
    // Just after a change of network its key is not known yet (network/current-network.ts: at most 3 s), so the
    // choice made for a network can't apply yet: say that, not that it was another network's (it may be this one).
    const reason = next
      ? `Now using ${next.label}, as you chose for this network`
      : this.#network.provisional
        ? `Back to ${to.label} while the network is identified: ${from.label} is used only on the network you chose it for`
        : `Back to ${to.label}: ${from.label} was your choice for another network, or you stopped it`;
    this.emit('network-resolver', { from: { id: from.id, label: from.label }, to: { id: to.id, label: to.label }, reason });
    void this.#switchTo(to).catch((err: unknown) => this.emit('warning', `could not switch to ${to.label}: ${(err as Error).message}`));
  }

  async #switchTo(resolver: ResolverSpec): Promise<void> {
    const next = this.#makeUpstream(resolver);
    // Answers from the old resolver must not be served as the new one's.
    this.#cache?.clear();
    this.#engine.setUpstream(this.#gated(next));
    this.#config = { ...this.#config, resolver };
    this.#privacy.switched(next);
    if (this.running) next.warm();
    await this.#upstream.replace(next);
  }

  /**
   * Applies new settings at run time: `padding` and `recordNames` from the
   * next query; pool options and the authentication mode rebuild the pool as
   * switchResolver does (nothing dropped). Resolves once the old pool drained.
   */
  async reconfigure(changes: RuntimeChanges): Promise<void> {
    this.#engine.configure({
      ...(changes.padding !== undefined ? { padding: changes.padding } : {}),
      ...(changes.recordNames !== undefined ? { recordNames: changes.recordNames } : {}),
    });
    this.#config = withChanges(this.#config, changes, this.#engine.options);
    this.#privacy.settingsChanged();
    this.#dnsCheck?.settingsChanged();
    this.#ddr.settingsChanged();
    this.#nat64.settingsChanged();
    if (changes.pool !== undefined || changes.auth !== undefined) await this.#switchTo(this.resolver);
  }

  /**
   * The network changed under us (network/watch.ts, or a test): its owner
   * reads the new one and tells the rest: the name router reads the new
   * table, the leak watch the OS again, and the privacy controller restarts
   * the upstream on the transport the new network's memory says (it drops
   * its connections, forgets its back-off and reconnects at once; a fallback
   * runs its ladder again from DoT; queries in flight are retried on the new
   * connections).
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
    this.#startedAt = 0;
    this.#privacy.stopping();
    this.#dnsCheck?.stop();
    this.#ddr.stop();
    this.#nat64.stop();
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
    const { auth, pool: options } = this.#config;
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

/**
 * The one owner of the network we're on, from the parts of the run's
 * configuration that name its files (networks.json, the sign-in answers) and,
 * in tests, its key, gateway and name.
 */
function currentNetworkFor(config: ProxyConfig): CurrentNetwork {
  const m = config.networkMemory;
  const fixed = m?.networkKey ?? config.names?.networkKey ?? config.captive?.networkKey;
  // A test that gives its own gateway gives its own OS: the network's name is then its to give too.
  const name = m ? (m.name ?? (m.gateway ? undefined : () => networkName())) : undefined;
  return new CurrentNetwork({
    file: m?.file ?? config.names?.memoryFile ?? null,
    signInFile: config.captive?.consentFile ?? null,
    ...(fixed
      ? {
          identify: () => {
            const key = fixed();
            return key === null ? null : { key, final: true };
          },
        }
      : {}),
    ...(m?.gateway ? { gateway: m.gateway } : {}),
    ...(name ? { name } : {}),
  });
}
