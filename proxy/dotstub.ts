/**
 * The composition root: listeners → engine → upstream, wired together, with
 * the privacy state (a pure reducer, network/privacy-state.ts) and typed
 * events for everything a UI shows. The CLI and the test harnesses both
 * build the proxy here.
 *
 * Events are the only interface for observers (control API, CLI log):
 *   'query'       one QueryRecord per answered query
 *   'connection'  open (full/resumed) / close (reason) / keepalive / connect-failed
 *   'state'       privacy-state transitions, each with a reason a user can read
 */
import { EventEmitter } from 'node:events';
import { AnswerCache, type AnswerCacheOptions } from './cache/answer-cache.js';
import { CachingUpstream } from './cache/caching-upstream.js';
import { describeResolver, dohEndpoint, type ResolverSpec } from './config/resolvers.js';
import { Engine } from './engine/engine.js';
import type { Upstream } from './upstream/upstream.js';
import { newCounters, type Counters, type QueryRecord } from './engine/query-record.js';
import { ConfigError, type DotstubError } from './errors.js';
import { DEFAULT_LISTEN, type ListenAddress } from './listen/address.js';
import { TcpListener } from './listen/tcp.js';
import { UdpListener } from './listen/udp.js';
import { INITIAL_PRIVACY, nextPrivacyState, type PrivacyEvent, type PrivacyState, type PrivacyStatus } from './network/privacy-state.js';
import { dotConnectionFactory } from './upstream/dot/connection.js';
import type { AuthPolicy } from './upstream/auth-policy.js';
import { ClientShares } from './listen/client-shares.js';
import { dohConnectionFactory } from './upstream/doh/connection.js';
import { Fallback, type Transport, type TransportChange } from './upstream/fallback.js';
import { classifyFailure, type FailureKind } from './network/classify.js';
import { NetworkWatch, type NetworkChange } from './network/watch.js';
import { CaptivePortal, type CaptiveEvent, type CaptiveView } from './network/captive/session.js';
import { CaptiveGate } from './network/captive/gate.js';
import type { ProbeTargets } from './network/captive/probe.js';
import { DegradedMode } from './network/degraded-mode.js';
import type { SignInProxyInfo } from './network/signin-proxy.js';
import { discoverNetworkResolver, type DiscoveryPaths } from './network/network-resolver.js';
import { Pool, type AddressAttempt, type RetryOutcome } from './upstream/pool.js';
import { DEFAULT_POOL_OPTIONS, type PoolOptions } from './upstream/pool/options.js';

export type { PrivacyState };

export interface StateChange {
  readonly state: PrivacyState;
  readonly previous: PrivacyState;
  readonly reason: string;
  readonly at: number;
  readonly resolverId: string;
}

export type ConnectionEvent =
  | {
      readonly type: 'open';
      readonly at: number;
      readonly connectionId: number;
      readonly resolverId: string;
      readonly address: string;
      /** Which transport the connection carries (DoT, or DoH after the fallback). */
      readonly transport: Transport;
      readonly resumed: boolean;
      readonly verified: boolean;
      readonly authError: string | null;
      readonly tlsVersion: string;
      readonly cipher: string;
      readonly handshakeMs: number;
      /** Opened for a burst of queries (issue 12): closes when idle and isn't re-opened. */
      readonly burst: boolean;
    }
  | {
      readonly type: 'close';
      readonly at: number;
      readonly connectionId: number;
      readonly resolverId: string;
      readonly reason: string;
      readonly failed: number;
      readonly queriesCarried: number;
      readonly error: string | null;
    }
  | {
      readonly type: 'keepalive';
      readonly at: number;
      readonly connectionId: number;
      readonly resolverId: string;
      readonly timeoutMs: number;
    }
  | {
      readonly type: 'connect-failed';
      readonly at: number;
      readonly resolverId: string;
      readonly address: string;
      readonly code: string;
      readonly message: string;
      readonly retryInMs: number;
      /** Which transport's attempt failed. */
      readonly transport: Transport;
      /** How long the attempt took to fail, ms. */
      readonly afterMs: number;
      /** What the network did, in a stable code and a sentence (network/classify.ts). */
      readonly kind: FailureKind;
      readonly classification: string;
      readonly sentence: string;
    };

/** The last thing the network did to the active resolver's connections (status API). */
export interface NetworkView {
  readonly at: number;
  readonly transport: Transport;
  readonly address: string;
  readonly kind: FailureKind;
  readonly classification: string;
  readonly sentence: string;
  /** The error's own words, for the curious. */
  readonly detail: string;
  readonly afterMs: number;
  /** Each address tried (Happy Eyeballs: IPv6, then IPv4 250 ms later), its outcome and timing. */
  readonly attempts: readonly AttemptView[];
}

/** One address's part in a connection race, classified when it failed. */
export interface AttemptView {
  readonly address: string;
  /** ms after the race began that this address was tried. */
  readonly startMs: number;
  /** ms from its start to its outcome; null when abandoned because another address won. */
  readonly afterMs: number | null;
  readonly outcome: AddressAttempt['outcome'];
  readonly kind: FailureKind | null;
  readonly classification: string | null;
  readonly sentence: string | null;
}

/** The last connection race that tried more than one address and was won (status API). */
export interface RaceView {
  readonly at: number;
  readonly transport: Transport;
  readonly winner: string;
  /** ms from the race's start to the winner's authentication. */
  readonly afterMs: number;
  readonly attempts: readonly AttemptView[];
}

/** Queries within this long mean the machine is in use: keep a connection open (issue 11, "warm when needed"). */
const WARM_WHILE_IN_USE_MS = 180_000;
const MAX_EMPTY_REOPENS = 3;

export interface StubProxyEvents {
  query: [QueryRecord];
  connection: [ConnectionEvent];
  state: [StateChange];
  listening: [readonly ListenAddress[]];
  malformed: [string];
  /** The network changed (route, address, resume from sleep) and connections were re-made. */
  'network-change': [NetworkChange];
  /** Something the user should know that didn't stop the proxy. */
  warning: [string];
  /** Which transport carries queries changed (a resolver with a DoH URL: DoT ⇄ DoH), and why. */
  transport: [TransportChange];
  /** A captive portal's story: detected, asking, allowed, names let through, signed in, back to private. */
  captive: [CaptiveEvent];
}

/** Captive-portal handling (issue 9): where to probe and whom to ask in cleartext. */
export interface CaptiveConfig {
  readonly probes: ProbeTargets;
  /** The network's own resolver, when the user set it (`--network-dns`); empty: discovered. */
  readonly networkDns: readonly string[];
  /** Strict mode's "allow sign-in" answers per network; null: not remembered. */
  readonly consentFile: string | null;
  /** Where discovery looks (tests point it at their own files). */
  readonly paths?: DiscoveryPaths;
  /** A fixed network key (tests); the gateway's hashed MAC otherwise. */
  readonly networkKey?: () => string | null;
  readonly exceptionMs?: number;
  readonly reprobeMs?: number;
}

/** A connect failure this soon after start or a network change starts a portal check. */
const PORTAL_CHECK_WINDOW_MS = 5 * 60_000;
/** At most one portal check per this long. */
const PORTAL_CHECK_EVERY_MS = 30_000;

export interface ProxyConfig {
  readonly listen: readonly ListenAddress[];
  readonly resolver: ResolverSpec;
  readonly auth: AuthPolicy;
  readonly pool: PoolOptions;
  readonly padding: boolean;
  readonly recordNames: boolean;
  /** Answer Firefox's DoH canary (use-application-dns.net) NXDOMAIN so its lookups stay here. */
  readonly keepBrowsersOnStub: boolean;
  /** Open connections at start so the first query doesn't pay the handshake. */
  readonly warm: boolean;
  /** Watch routes, addresses and sleep, and reconnect at once when they change (network/watch.ts). */
  readonly watchNetwork: boolean;
  /** The answer cache's bounds; null: no cache (every query goes to the resolver). */
  readonly cache: Partial<AnswerCacheOptions> | null;
  /** Captive-portal detection and the sign-in exception; null: off (no probe ever leaves). */
  readonly captive: CaptiveConfig | null;
  /**
   * Opportunistic mode only: while encrypted DNS is blocked, let the
   * network's own resolver answer in cleartext (state `degraded`). Off by
   * default; never in strict mode.
   */
  readonly allowDegraded: boolean;
  /** The network's own resolver for degraded mode when captive handling is off (empty: discovered). */
  readonly networkDns: readonly string[];
}

export function defaultConfig(resolver: ResolverSpec, overrides: Partial<ProxyConfig> = {}): ProxyConfig {
  return {
    listen: DEFAULT_LISTEN,
    resolver,
    auth: { mode: 'strict', ca: [] },
    pool: DEFAULT_POOL_OPTIONS,
    padding: true,
    recordNames: true,
    keepBrowsersOnStub: true,
    watchNetwork: true,
    warm: true,
    cache: {},
    captive: null,
    allowDegraded: false,
    networkDns: [],
    ...overrides,
  };
}

export interface ConnectionSnapshot {
  readonly id: number;
  readonly resolverId: string;
  readonly address: string;
  readonly state: string;
  readonly ageMs: number;
  readonly queriesCarried: number;
  readonly inFlight: number;
  readonly resumed: boolean | null;
  readonly verified: boolean | null;
  readonly tlsVersion: string | null;
  readonly cipher: string | null;
  readonly keepaliveMs: number | null;
  readonly idleTimeoutMs: number;
  /** Opened for a burst of queries: closes when idle and isn't re-opened. */
  readonly burst: boolean;
}

export class StubProxy extends EventEmitter<StubProxyEvents> {
  #config: ProxyConfig;
  /** One object, each field with one writer: the engine or the upstream pools. */
  readonly #counters: Counters = newCounters();
  readonly #engine: Engine;
  /** The active upstream: a DoT pool, or Fallback(DoT; DoH) when the resolver has a DoH URL. */
  #pool: Pool | Fallback;
  /** Upstreams being drained after a switch; they finish their in-flight queries. */
  readonly #retiring = new Set<Pool | Fallback>();
  /** Answers from every resolver used so far are flushed on a switch: one cache, per proxy. */
  readonly #cache: AnswerCache | null;
  /** Watches routes, addresses and sleep while running (config.watchNetwork). */
  #watch: NetworkWatch | undefined;
  /** Warm re-opens in a row whose connection closed without carrying a query. */
  #emptyReopens = 0;
  /** Date.now() when the active resolver was last seen verified on an open connection (null: never). */
  #lastVerifiedAt: number | null = null;
  /** The active resolver's last connect failure, classified; null once a connection of that transport opens. */
  #network: NetworkView | null = null;
  /** The last race across addresses that was won after more than one was tried. */
  #race: RaceView | null = null;
  #udp: UdpListener[] = [];
  #tcp: TcpListener[] = [];
  #listening: ListenAddress[] = [];
  #privacy: PrivacyStatus = INITIAL_PRIVACY;
  /** Every listener's clients share the pool's capacity fairly. */
  readonly #shares = new ClientShares(() => this.#config.pool.size * this.#config.pool.maxInFlight);
  #stateSince = Date.now();
  /** Captive portals: detection, the sign-in exception (null when config.captive is). */
  readonly #captive: CaptivePortal | null;
  /** When the proxy started or the network last changed: a connect failure soon after may be a portal. */
  #networkSince = 0;
  /** Degraded mode's cleartext path while it is on. */
  readonly #degraded = new DegradedMode();
  #startedAt = 0;
  #running = false;

  constructor(config: ProxyConfig) {
    super();
    this.#config = config;
    this.#cache = config.cache ? new AnswerCache(config.cache) : null;
    this.#captive = config.captive ? this.#makeCaptive(config.captive) : null;
    this.#pool = this.#makePool(config.resolver);
    this.#engine = new Engine(this.#upstreamFor(this.#pool), { padding: config.padding, recordNames: config.recordNames, keepBrowsersOnStub: config.keepBrowsersOnStub }, this.#counters);
    this.#engine.on('query', (r) => this.emit('query', r));
    this.#engine.on('malformed', (why) => this.emit('malformed', why));
  }

  get config(): ProxyConfig {
    return this.#config;
  }
  get counters(): Readonly<Counters> {
    return this.#counters;
  }
  get state(): { readonly state: PrivacyState; readonly reason: string; readonly since: number } {
    return { state: this.#privacy.state, reason: this.#privacy.reason, since: this.#stateSince };
  }
  get resolver(): ResolverSpec {
    return this.#pool.resolver;
  }
  /** The transport carrying queries now; null while none is connected. */
  get transport(): Transport | null {
    if (this.#pool instanceof Fallback) return this.#pool.transport;
    return this.#privacy.state === 'private' || this.#privacy.state === 'private-unverified' ? 'dot' : null;
  }
  get listening(): readonly ListenAddress[] {
    return this.#listening;
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

  connections(): ConnectionSnapshot[] {
    const now = Date.now();
    const all: { readonly c: Pool['connections'][number]; readonly resolverId: string; readonly burst: boolean }[] = [];
    for (const p of [this.#pool, ...this.#retiring]) for (const c of p.connections) all.push({ c, resolverId: p.resolver.id, burst: p.isBurstConnection(c) });
    return all.map(({ c, resolverId, burst }) => ({
      id: c.id,
      resolverId,
      address: c.address,
      state: c.state,
      ageMs: now - c.createdAt,
      queriesCarried: c.queriesCarried,
      inFlight: c.inFlight,
      resumed: c.handshake ? c.handshake.resumed : null,
      verified: c.handshake ? c.handshake.verified : null,
      tlsVersion: c.handshake ? c.handshake.tlsVersion : null,
      cipher: c.handshake ? c.handshake.cipher : null,
      keepaliveMs: c.keepaliveMs ?? null,
      idleTimeoutMs: c.idleTimeoutMs,
      burst,
    }));
  }

  /** Binds the listeners (UDP and TCP share each port) and opens the pool. */
  async start(): Promise<readonly ListenAddress[]> {
    if (this.#running) throw new Error('proxy already started');
    try {
      for (const addr of this.#config.listen) {
        try {
          this.#listening.push(await this.#bindPair(addr));
        } catch (err) {
          // A machine without IPv6 still gets DNS on 127.0.0.1.
          const code = ((err as DotstubError).cause as NodeJS.ErrnoException | undefined)?.code;
          if (this.#config.listen.length > 1 && addr.host.includes(':') && (code === 'EADDRNOTAVAIL' || code === 'EAFNOSUPPORT')) {
            this.emit('warning', `${(err as Error).message}; continuing without it`);
            continue;
          }
          throw err;
        }
      }
      if (this.#listening.length === 0) throw new ConfigError('no listen address could be bound');
    } catch (err) {
      await this.#closeListeners();
      throw err;
    }
    this.#running = true;
    this.#startedAt = Date.now();
    this.#networkSince = this.#startedAt;
    this.#onPrivacyEvent({ type: 'started', resolver: this.#pool.resolver.label });
    if (this.#config.warm) this.#pool.warm();
    if (this.#config.watchNetwork) {
      this.#watch = new NetworkWatch();
      this.#watch.on('change', (c) => this.networkChanged(c));
      this.#watch.start();
    }
    this.emit('listening', this.#listening);
    return this.#listening;
  }

  /**
   * Switches the active resolver without dropping a query: new queries go to
   * the new pool at once; the old pool finishes its in-flight queries, then
   * closes.
   */
  async switchResolver(resolver: ResolverSpec): Promise<void> {
    const old = this.#pool;
    const next = this.#makePool(resolver);
    this.#pool = next;
    // Answers from the old resolver must not be served as the new one's.
    this.#cache?.clear();
    this.#lastVerifiedAt = null;
    this.#engine.setUpstream(this.#upstreamFor(next));
    this.#config = { ...this.#config, resolver };
    if (this.#running) {
      this.#onPrivacyEvent({ type: 'switching', resolver: resolver.label });
      next.warm();
    }
    this.#retiring.add(old);
    await old.close();
    this.#retiring.delete(old);
  }

  /**
   * Applies new settings at run time. `padding` and `recordNames` take
   * effect with the next query. Pool options and the authentication mode
   * only apply to new pools, so changing them rebuilds the pool with the same
   * mechanism as switchResolver: queries in flight finish on the old pool,
   * new ones go to the new pool, nothing is dropped. Resolves once the old
   * pool has drained.
   */
  async reconfigure(changes: {
    readonly pool?: Partial<PoolOptions>;
    readonly auth?: AuthPolicy;
    readonly padding?: boolean;
    readonly recordNames?: boolean;
    /** The network's own resolver for captive sign-in (empty: discovered); used from the next portal check. */
    readonly networkDns?: readonly string[];
    /** Opportunistic mode's cleartext fallback (state `degraded`). */
    readonly allowDegraded?: boolean;
  }): Promise<void> {
    this.#engine.configure({
      ...(changes.padding !== undefined ? { padding: changes.padding } : {}),
      ...(changes.recordNames !== undefined ? { recordNames: changes.recordNames } : {}),
    });
    this.#config = {
      ...this.#config,
      pool: { ...this.#config.pool, ...changes.pool },
      auth: changes.auth ?? this.#config.auth,
      padding: this.#engine.options.padding,
      recordNames: this.#engine.options.recordNames,
      captive: this.#config.captive && changes.networkDns ? { ...this.#config.captive, networkDns: changes.networkDns } : this.#config.captive,
      allowDegraded: changes.allowDegraded ?? this.#config.allowDegraded,
      networkDns: changes.networkDns ?? this.#config.networkDns,
    };
    if (!this.#config.allowDegraded || this.#config.auth.mode === 'strict') this.#endDegraded('cleartext fallback is off now');
    if (changes.pool !== undefined || changes.auth !== undefined) await this.switchResolver(this.#pool.resolver);
  }

  /** Whether the proxy is started (listening and forwarding). */
  get running(): boolean {
    return this.#running;
  }

  /**
   * Stops without losing a query: new TCP connections are refused, but
   * queries already sent (in flight, or still in a socket buffer) are
   * answered until the proxy has been idle for a moment or `drainMs` passes;
   * whatever is left then gets SERVFAIL. Then everything closes.
   */
  async stop(drainMs = 3000): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.#captive?.stop();
    this.#endDegraded();
    this.#watch?.stop();
    this.#watch = undefined;
    const tcpClosing = this.#tcp.map((t) => t.close());
    const deadline = Date.now() + drainMs;
    const quietMs = 100;
    while (Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.#engine.idle(), new Promise<void>((r) => (timer = setTimeout(r, Math.max(1, deadline - Date.now()))))]);
      clearTimeout(timer);
      const quietFor = Date.now() - this.#engine.lastReceivedAt;
      if (this.#engine.inFlight === 0 && quietFor >= quietMs) break;
      await new Promise((r) => setTimeout(r, Math.max(1, quietMs - quietFor)));
    }
    for (const u of this.#udp) u.stopAccepting();
    this.#pool.destroy();
    for (const p of this.#retiring) p.destroy();
    await this.#engine.idle();
    await Promise.all(this.#udp.map((u) => u.close()));
    for (const t of this.#tcp) t.destroyClients();
    await Promise.all(tcpClosing);
    this.#udp = [];
    this.#tcp = [];
    this.#listening = [];
    this.#onPrivacyEvent({ type: 'stopped' });
  }

  /** Binds UDP and TCP on one port; with port 0, UDP picks it and TCP follows. */
  async #bindPair(addr: ListenAddress): Promise<ListenAddress> {
    for (let tries = 0; ; tries++) {
      const handler = (raw: Buffer, transport: 'udp' | 'tcp', reply: (answer: Buffer) => void): boolean =>
        this.#engine.handle(raw, transport, reply);
      const udp = new UdpListener(addr, handler, this.#shares);
      const bound = await udp.listen();
      const tcp = new TcpListener({ host: addr.host, port: bound.port }, handler, this.#shares);
      try {
        await tcp.listen();
      } catch (err) {
        await udp.close();
        const code = ((err as DotstubError).cause as NodeJS.ErrnoException | undefined)?.code;
        if (addr.port === 0 && tries < 5 && code === 'EADDRINUSE') continue;
        throw err;
      }
      this.#udp.push(udp);
      this.#tcp.push(tcp);
      return bound;
    }
  }

  async #closeListeners(): Promise<void> {
    await Promise.all(this.#udp.map((u) => u.close()));
    for (const t of this.#tcp) t.destroyClients();
    await Promise.all(this.#tcp.map((t) => t.close()));
    this.#udp = [];
    this.#tcp = [];
    this.#listening = [];
  }

  #onPrivacyEvent(event: PrivacyEvent): void {
    const next = nextPrivacyState(this.#privacy, event, { mode: this.#config.auth.mode });
    const previous = this.#privacy;
    if (next.state === previous.state && next.reason === previous.reason) return;
    if (next.state !== previous.state) this.#stateSince = Date.now();
    this.#privacy = next;
    this.emit('state', { state: next.state, previous: previous.state, reason: next.reason, at: Date.now(), resolverId: this.#pool.resolver.id });
    if (next.state === 'blocked') this.#maybeDegrade(next.reason);
  }

  /**
   * The ladder's last step (NETWORK.md): encrypted DNS is blocked, the user
   * chose opportunistic mode and allowed cleartext: the network's own
   * resolver answers, in state `degraded`, until an encrypted connection
   * opens again (the pools keep re-probing with their back-off).
   */
  #maybeDegrade(why: string): void {
    if (!this.#degraded.mayStart() || !this.#running || !this.#config.allowDegraded || this.#config.auth.mode !== 'opportunistic') return;
    if (this.#captive?.active || this.#captive?.checking) return;
    const found = discoverNetworkResolver(this.#config.captive?.networkDns.length ? this.#config.captive.networkDns : this.#config.networkDns, this.#config.captive?.paths);
    if (!found) {
      this.emit('warning', "cleartext fallback is allowed, but this network's own resolver isn't known: set network DNS in Settings");
      return;
    }
    this.#degraded.start(found);
    const who = found.servers.map((x) => x.host).join(', ');
    this.#onPrivacyEvent({
      type: 'degraded',
      sentence: `encrypted DNS is blocked here (${why.split(';')[0] ?? why}); as you allowed, lookups go unencrypted to this network's resolver (${who}) until it works again`,
    });
  }

  /** Leaves degraded mode (an encrypted connection opened, the network changed, strict mode was chosen). */
  #endDegraded(why?: string): void {
    if (!this.#degraded.end()) return;
    if (why && this.#running) this.#onPrivacyEvent({ type: 'degraded-ended', sentence: why });
  }

  /**
   * The engine's upstream: the pool, behind the captive gate when portals are
   * handled, behind the answer cache when there is one (so cached private
   * answers, and stale ones, still serve while signing in).
   */
  #upstreamFor(pool: Pool | Fallback): Upstream {
    // Always in place (one branch a query): the cleartext fallback may be allowed at run time, after this pool was made.
    const gated = new CaptiveGate(this.#captive, pool, this.#degraded);
    return this.#cache ? new CachingUpstream(this.#cache, gated, this.#counters) : gated;
  }

  #makeCaptive(c: CaptiveConfig): CaptivePortal {
    const portal = new CaptivePortal({
      probes: c.probes,
      networkDns: () => this.#config.captive?.networkDns ?? c.networkDns,
      consentFile: c.consentFile,
      mode: () => this.#config.auth.mode,
      retryEncrypted: () => {
        if (this.#running) this.#pool.networkChanged();
      },
      encryptedWorks: () => this.#pool.connections.some((conn) => conn.state === 'open' && conn.handshake?.verified === true),
      ...(c.paths ? { paths: c.paths } : {}),
      ...(c.networkKey ? { networkKey: c.networkKey } : {}),
      ...(c.exceptionMs !== undefined ? { exceptionMs: c.exceptionMs } : {}),
      ...(c.reprobeMs !== undefined ? { reprobeMs: c.reprobeMs } : {}),
    });
    portal.on('event', (e) => {
      if (!this.#running) return;
      this.emit('captive', e);
      if (e.type === 'left' && e.how !== 'private') this.#onPrivacyEvent({ type: 'captive-ended', sentence: e.sentence });
    });
    portal.on('change', () => {
      const view = portal.view;
      if (view && this.#running) this.#onPrivacyEvent({ type: 'captive', sentence: view.sentence });
    });
    return portal;
  }

  /** Encrypted DNS failed: soon after start or a network change, that may be a captive portal. */
  #maybeCheckPortal(): void {
    const portal = this.#captive;
    if (!portal || portal.active || portal.checking) return;
    const now = Date.now();
    if (now - this.#networkSince > PORTAL_CHECK_WINDOW_MS || now - portal.lastCheckAt < PORTAL_CHECK_EVERY_MS) return;
    void portal.check();
  }

  /** The captive portal being signed in to, or null. */
  get captive(): CaptiveView | null {
    return this.#captive?.view ?? null;
  }

  /** The sign-in window's loopback proxy and its credential, while the sign-in exception is active. */
  get signInProxy(): SignInProxyInfo | null {
    return this.#captive?.signInProxy ?? null;
  }

  /** The user's answer to "Allow sign-in?", or a request to extend it; false when there is nothing to answer. */
  captiveAction(action: 'allow' | 'decline' | 'extend' | 'check', remember = false): boolean {
    const portal = this.#captive;
    if (!portal || !this.#running) return false;
    switch (action) {
      case 'allow':
        return portal.allow(remember);
      case 'decline':
        return portal.decline(remember);
      case 'extend':
        return portal.extend();
      case 'check':
        if (portal.active || portal.checking) return false;
        void portal.check();
        return true;
    }
  }

  /** Entries and bytes in the answer cache (null without one). */
  get cacheSize(): { readonly entries: number; readonly bytes: number; readonly maxBytes: number } | null {
    return this.#cache ? { entries: this.#cache.entries, bytes: this.#cache.bytes, maxBytes: this.#cache.options.maxBytes } : null;
  }

  #makePool(resolver: ResolverSpec): Pool | Fallback {
    const { auth, pool: options } = this.#config;
    const dot = new Pool({
      protocol: 'DoT',
      resolver,
      options,
      factory: dotConnectionFactory(resolver, auth, options),
      counters: this.#counters,
      // With a DoH URL the fallback owns DoT's re-probing (5 s → 60 s).
      selfRetry: resolver.dohUrl === undefined,
    });
    if (resolver.dohUrl === undefined) {
      this.#observePool(dot, dot, resolver, 'dot');
      return dot;
    }
    const doh = new Pool({
      protocol: 'DoH',
      resolver,
      options,
      factory: dohConnectionFactory(resolver, auth, options),
      counters: this.#counters,
    });
    const fallback = new Fallback({ primary: dot, secondary: doh, primaryPort: resolver.port, secondaryPort: dohEndpoint(resolver.dohUrl).port });
    // The fallback listens first, so these observers see its decision already made.
    this.#observePool(dot, fallback, resolver, 'dot');
    this.#observePool(doh, fallback, resolver, 'doh');
    fallback.on('transport', (change) => {
      if (fallback === this.#pool && this.#running) this.emit('transport', change);
    });
    return fallback;
  }

  /** Turns one pool's events into the proxy's connection events and privacy events; `owner` is what #pool holds. */
  #observePool(pool: Pool, owner: Pool | Fallback, resolver: ResolverSpec, transport: Transport): void {
    const active = (): boolean => owner === this.#pool && this.#running;
    /** Within a fallback, only the side carrying queries speaks for the privacy state. */
    const speaks = (): boolean => !(owner instanceof Fallback) || owner.active === transport;
    pool.on('open', (conn, info) => {
      this.emit('connection', {
        type: 'open',
        at: Date.now(),
        connectionId: conn.id,
        resolverId: resolver.id,
        address: info.address,
        transport,
        resumed: info.resumed,
        verified: info.verified,
        authError: info.authError ?? null,
        tlsVersion: info.tlsVersion,
        cipher: info.cipher,
        handshakeMs: info.handshakeMs,
        burst: pool.isBurstConnection(conn),
      });
      if (!active()) return;
      // A transport that opens clears its own failure only: while DoH carries the
      // queries, the status still says what the network did to DoT (and why DoH).
      if (this.#network?.transport === transport) this.#network = null;
      if (info.verified) this.#captive?.authenticated();
      this.#endDegraded();
      const name = resolver.authName && !resolver.label.includes(resolver.authName) ? `${resolver.label} (${resolver.authName})` : resolver.label;
      const who = transport === 'doh' ? `${name} via DNS-over-HTTPS` : name;
      this.#onPrivacyEvent({ type: 'connected', resolver: who, verified: info.verified, tlsVersion: info.tlsVersion, authError: info.authError });
    });
    pool.on('close', (conn, info) => {
      this.emit('connection', {
        type: 'close',
        at: Date.now(),
        connectionId: conn.id,
        resolverId: resolver.id,
        reason: info.reason,
        failed: info.failed,
        queriesCarried: info.queriesCarried,
        error: info.error ? info.error.message : null,
      });
      if (!active() || !speaks() || !info.wasOpen || pool.connections.some((c) => c.state === 'open' || c.state === 'connecting')) return;
      this.#lastVerifiedAt = Date.now();
      // Warm when needed (issue 11): while the machine is in use, a connection the
      // server or our idle timer closed is re-opened at once (a resumed handshake),
      // so the next query finds it open; once idle for WARM_WHILE_IN_USE_MS, not.
      // Bounded: after MAX_EMPTY_REOPENS re-opened connections in a row closed
      // without carrying a query, wait for a query (no reconnect loop against a
      // server that closes on sight).
      this.#emptyReopens = info.queriesCarried === 0 ? this.#emptyReopens + 1 : 0;
      if (Date.now() - this.#engine.lastReceivedAt < WARM_WHILE_IN_USE_MS && this.#emptyReopens <= MAX_EMPTY_REOPENS) {
        owner.warm();
        return;
      }
      const since = new Date(this.#lastVerifiedAt).toTimeString().slice(0, 8);
      this.#onPrivacyEvent({ type: 'idle', resolver: resolver.label, since });
    });
    pool.on('race', (r) => {
      if (active()) this.#race = { at: Date.now(), transport, winner: r.winner, afterMs: r.afterMs, attempts: this.#attemptViews(r.attempts, transport, resolver) };
    });
    pool.on('keepalive', (conn, ms) =>
      this.emit('connection', { type: 'keepalive', at: Date.now(), connectionId: conn.id, resolverId: resolver.id, timeoutMs: ms }),
    );
    pool.on('connect-failed', (f) => {
      const classified = this.#classify(f.error, transport, resolver);
      if (active()) {
        const attempts = this.#attemptViews(f.attempts, transport, resolver);
        this.#network = { at: Date.now(), transport, address: f.address, ...classified, detail: f.error.message, afterMs: f.afterMs, attempts };
      }
      this.emit('connection', {
        type: 'connect-failed',
        at: Date.now(),
        resolverId: resolver.id,
        address: f.address,
        code: f.error.code,
        message: f.error.message,
        retryInMs: f.retryInMs,
        transport,
        afterMs: f.afterMs,
        ...classified,
      });
      if (!active()) return;
      this.#maybeCheckPortal();
      if (!speaks()) return;
      // Ladder step 4: when DoH fails too, the reason names the first failure (DoT's) as well.
      const first = owner instanceof Fallback && transport === 'doh' ? owner.primaryError : undefined;
      const message = first ? `${first.message}; DNS-over-HTTPS failed too: ${f.error.message}` : f.error.message;
      this.#onPrivacyEvent({ type: 'connect-failed', message, retryInMs: f.retryInMs });
    });
  }

  /**
   * The network changed under us (network/watch.ts, or a test): the active
   * upstream drops its connections, forgets its back-off and reconnects at
   * once; a fallback runs its ladder again from DoT. Queries in flight are
   * retried on the new connections.
   */
  networkChanged(change: NetworkChange): void {
    if (!this.#running) return;
    this.emit('network-change', change);
    this.#network = null;
    this.#networkSince = Date.now();
    this.#captive?.networkChanged();
    this.#endDegraded('the network changed: trying encrypted DNS first again');
    this.#pool.networkChanged();
  }

  /**
   * "Retry now": the active upstream tries to connect at once, as a query
   * arriving with no connection up would (one attempt at a time, at most one
   * a second), instead of waiting out its back-off.
   */
  retryNow(): RetryOutcome {
    if (!this.#running) return 'closed';
    return this.#pool.retryNow();
  }

  /** Why the active resolver's transport is what it is (a resolver with a DoH URL); null: DoT only, or nothing decided yet. */
  get transportChange(): TransportChange | null {
    return this.#pool instanceof Fallback ? (this.#pool.lastChange ?? null) : null;
  }

  /** When the active resolver was last known good: now while a connection is open, else when the last one closed. */
  get lastVerifiedAt(): number | null {
    return this.#pool.connections.some((c) => c.state === 'open') ? Date.now() : this.#lastVerifiedAt;
  }

  /** The last connect failure of the active resolver, classified; null since that transport's last success. */
  get network(): NetworkView | null {
    return this.#network;
  }

  /** The last race across addresses that was won after more than one was tried (Happy Eyeballs); null if none yet. */
  get race(): RaceView | null {
    return this.#race;
  }

  #attemptViews(attempts: readonly AddressAttempt[], transport: Transport, resolver: ResolverSpec): AttemptView[] {
    return attempts.map((a) => {
      const c = a.error ? this.#classify(a.error, transport, resolver) : undefined;
      return {
        address: a.address,
        startMs: a.startMs,
        afterMs: a.afterMs,
        outcome: a.outcome,
        kind: c?.kind ?? null,
        classification: c?.classification ?? null,
        sentence: c?.sentence ?? null,
      };
    });
  }

  #classify(error: DotstubError, transport: Transport, resolver: ResolverSpec): { kind: FailureKind; classification: string; sentence: string } {
    const port = transport === 'doh' && resolver.dohUrl ? dohEndpoint(resolver.dohUrl).port : resolver.port;
    const c = classifyFailure(error, port, resolver.label);
    return { kind: c.kind, classification: c.code, sentence: c.sentence };
  }

  /** `quad9` or `127.0.0.1:853#dns.test`, for logs. */
  describe(): string {
    return describeResolver(this.#pool.resolver);
  }
}

/**
 * Builds the proxy from `config` and starts it: the one composition root
 * (the CLI and the test harnesses all start dotstub here). `observe` runs
 * before start, so listeners see every event from the first one.
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
