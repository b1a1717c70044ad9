/**
 * Every decision the proxy makes while it runs about what the user's
 * lookups get, in one observer of the active upstream's events
 * (upstream/managed.ts) and the captive-portal session:
 *
 *   - the privacy state (a pure reducer, privacy-state.ts), each change emitted;
 *   - connection events for observers, each failure classified (classify.ts),
 *     and the status API's network and race views;
 *   - warm re-open (issue 11): while the machine is in use, a connection
 *     closed by the server or the idle timer is re-opened at once;
 *   - when a connect failure starts a portal check (soon after start or a
 *     network change, at most one per 30 s);
 *   - degraded mode (NETWORK.md, the ladder's last step): when it starts and ends;
 *   - the network's memory (network-recorder.ts): what worked on each network,
 *     and the hint the upstream starts on when we join one again (DoH at once
 *     where 853 was blocked).
 *
 * The root wires it once; it speaks on the proxy's own emitter. Events from
 * an upstream that is no longer the active one are still reported as
 * connection events but decide nothing.
 */
import type { EventEmitter } from 'node:events';
import type { ProxyConfig } from '../config/proxy-config.js';
import { dohEndpoint, type ResolverSpec } from '../config/resolvers.js';
import type { DotstubError } from '../errors.js';
import type { AttemptView, NetworkView, RaceView, StubProxyEvents } from '../events.js';
import type { AddressAttempt, ManagedUpstream, NetworkHint, Transport } from '../upstream/managed.js';
import { gatewayAddress, networkIdentity } from '../network/network-key.js';
import { networkName } from '../network/network-name.js';
import { CaptivePortal, type CaptiveView } from './captive/session.js';
import { NetworkRecorder } from '../network/network-recorder.js';
import type { SignInProxyInfo } from './captive/signin-proxy.js';
import { classifyFailure, type FailureKind } from '../network/classify.js';
import { DegradedMode } from './degraded-mode.js';
import { discoverNetworkResolver } from '../network/network-resolver.js';
import { INITIAL_PRIVACY, nextPrivacyState, type PrivacyEvent, type PrivacyState, type PrivacyStatus } from './privacy-state.js';

/** Queries within this long mean the machine is in use: keep a connection open (issue 11, "warm when needed"). */
const WARM_WHILE_IN_USE_MS = 180_000;
const MAX_EMPTY_REOPENS = 3;
/** A connect failure this soon after start or a network change starts a portal check. */
const PORTAL_CHECK_WINDOW_MS = 5 * 60_000;
/** At most one portal check per this long. */
const PORTAL_CHECK_EVERY_MS = 30_000;

export type CaptiveAction = 'allow' | 'decline' | 'extend' | 'check';

export interface PrivacyControllerInit {
  /** Where it speaks: the proxy's emitter. */
  readonly out: EventEmitter<StubProxyEvents>;
  /** The run's configuration now (settings change it at run time). */
  readonly config: () => ProxyConfig;
  /** When the last query arrived (performance.now() clock of the engine), for warm re-open. */
  readonly lastQueryAt: () => number;
  /** The upstream carrying queries at start. */
  readonly upstream: ManagedUpstream;
  /** The network we're on became known for sure after a change (the gateway's MAC came): whoever keys by it reads it again. */
  readonly networkKnown?: () => void;
}

export class PrivacyController {
  readonly #out: EventEmitter<StubProxyEvents>;
  readonly #config: () => ProxyConfig;
  readonly #lastQueryAt: () => number;
  /** Degraded mode's cleartext path (the captive gate reads it). */
  readonly degraded = new DegradedMode();
  /** Captive portals: detection, the sign-in exception (null when config.captive is). */
  readonly captivePortal: CaptivePortal | null;
  /** What worked on each network (null when config.networkMemory is). */
  readonly memory: NetworkRecorder | null;
  readonly #networkKnown: () => void;
  /** Polls the network's key while it is provisional, just after a change. */
  #settling: NodeJS.Timeout | undefined;
  /** The upstream whose events decide; others only report. */
  #upstream: ManagedUpstream;
  #running = false;
  #privacy: PrivacyStatus = INITIAL_PRIVACY;
  #stateSince = Date.now();
  /** Warm re-opens in a row whose connection closed without carrying a query. */
  #emptyReopens = 0;
  /** Date.now() when the active resolver was last seen verified on an open connection (null: never). */
  #lastVerifiedAt: number | null = null;
  /** The active resolver's last connect failure, classified; null once a connection of that transport opens. */
  #network: NetworkView | null = null;
  /** The last race across addresses that was won after more than one was tried. */
  #race: RaceView | null = null;
  /** When the proxy started or the network last changed: a connect failure soon after may be a portal. */
  #networkSince = 0;

  constructor(init: PrivacyControllerInit) {
    this.#out = init.out;
    this.#config = init.config;
    this.#lastQueryAt = init.lastQueryAt;
    this.#upstream = init.upstream;
    this.captivePortal = init.config().captive ? this.#makeCaptive() : null;
    const m = init.config().networkMemory;
    const fixed = m?.networkKey;
    const identify = fixed
      ? () => {
          const key = fixed();
          return key === null ? null : { key, final: true };
        }
      : () => {
          const id = networkIdentity();
          return id === null ? null : { key: id.key, final: id.byMac };
        };
    // A test that gives its own gateway gives its own OS: the network's name is then its to give too.
    const name = m?.name ?? (m?.gateway ? undefined : () => networkName());
    this.memory = m ? new NetworkRecorder({ file: m.file, identify, gateway: m.gateway ?? (() => gatewayAddress()), ...(name ? { name } : {}) }) : null;
    this.#networkKnown = init.networkKnown ?? (() => undefined);
    // The round trip: answers from the chosen resolver on a connection that was already open.
    this.#out.on('query', (r) => {
      if (r.source === 'upstream' && r.reused === true && !r.route && r.resolverId === this.#upstream.resolver.id) this.memory?.answered(r.upstreamUs);
    });
    this.observe(init.upstream);
  }

  get state(): { readonly state: PrivacyState; readonly reason: string; readonly since: number } {
    return { state: this.#privacy.state, reason: this.#privacy.reason, since: this.#stateSince };
  }

  /** When the active resolver was last known good: now while a connection is open, else when the last one closed. */
  get lastVerifiedAt(): number | null {
    return this.#upstream.snapshot().open ? Date.now() : this.#lastVerifiedAt;
  }

  /** The last connect failure of the active resolver, classified; null since that transport's last success. */
  get network(): NetworkView | null {
    return this.#network;
  }

  /** The last race across addresses that was won after more than one was tried (Happy Eyeballs); null if none yet. */
  get race(): RaceView | null {
    return this.#race;
  }

  get captive(): CaptiveView | null {
    return this.captivePortal?.view ?? null;
  }

  get signInProxy(): SignInProxyInfo | null {
    return this.captivePortal?.signInProxy ?? null;
  }

  /**
   * "Forget this network": everything remembered about it goes, what worked
   * there and the user's choices, the strict-mode sign-in answer included;
   * false when the memory didn't know it.
   */
  forgetNetwork(key: string): boolean {
    this.captivePortal?.forgetAnswer(key);
    return this.memory?.memory.forget(key) ?? false;
  }

  started(): void {
    this.#running = true;
    this.#networkSince = Date.now();
    this.memory?.joined();
    this.#upstream.prefer(this.#hint());
    this.#settleKey();
    this.#onPrivacyEvent({ type: 'started', resolver: this.#upstream.resolver.label });
  }

  /**
   * Just after a change the gateway's MAC isn't known until traffic went
   * through it (the upstream's first connection attempt brings it within
   * milliseconds): the key is read again every 25 ms until it is, then the
   * network's memory says where to start (DoH at once where 853 was blocked)
   * and the name router reads its choices. At most SETTLE_MS, then the
   * gateway's address is taken as the key (a link without ARP).
   */
  #settleKey(): void {
    clearInterval(this.#settling);
    const memory = this.memory;
    if (!memory?.provisional) return;
    this.#settling = setInterval(() => {
      memory.settle();
      if (memory.provisional && this.#running) return;
      clearInterval(this.#settling);
      if (!this.#running) return;
      this.#upstream.prefer(this.#hint());
      this.#networkKnown();
    }, 25);
    this.#settling.unref();
  }

  /** Stopping: no more decisions; the captive session and degraded mode end. */
  stopping(): void {
    this.#running = false;
    clearInterval(this.#settling);
    this.memory?.left();
    this.captivePortal?.stop();
    this.#endDegraded();
  }

  stopped(): void {
    this.#onPrivacyEvent({ type: 'stopped' });
  }

  /** The active resolver's upstream is now `next` (a switch, or settings that rebuild it). */
  switched(next: ManagedUpstream): void {
    this.observe(next);
    this.#upstream = next;
    next.prefer(this.#hint());
    this.#lastVerifiedAt = null;
    if (this.#running) this.#onPrivacyEvent({ type: 'switching', resolver: next.resolver.label });
  }

  /**
   * The network changed: its failure, its portal and degraded mode belonged
   * to the old one; the upstream starts over, where the new network's memory
   * says (DoH at once where 853 was blocked).
   */
  networkChanged(): void {
    this.#network = null;
    this.#networkSince = Date.now();
    this.memory?.left();
    this.memory?.joined();
    this.captivePortal?.networkChanged();
    this.#endDegraded('the network changed: trying encrypted DNS first again');
    this.#upstream.networkChanged(this.#hint());
    this.#settleKey();
  }

  /** Settings changed: degraded mode ends when it is no longer allowed. */
  settingsChanged(): void {
    const c = this.#config();
    if (!c.allowDegraded || c.auth.mode === 'strict') this.#endDegraded('cleartext fallback is off now');
  }

  /** The user's answer to "Allow sign-in?", or a request to extend it; false when there is nothing to answer. */
  captiveAction(action: CaptiveAction, remember = false): boolean {
    const portal = this.captivePortal;
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

  /** Turns `upstream`'s events into the proxy's connection events and, while it is the active one, decisions. */
  observe(upstream: ManagedUpstream): void {
    const resolver = upstream.resolver;
    const active = (): boolean => upstream === this.#upstream && this.#running;
    upstream.on('open', (e) => {
      this.#out.emit('connection', { type: 'open', at: Date.now(), resolverId: resolver.id, ...e, authError: e.authError ?? null });
      if (!active()) return;
      // A transport that opens clears its own failure only: while DoH carries the
      // queries, the status still says what the network did to DoT (and why DoH).
      if (this.#network?.transport === e.transport) this.#network = null;
      if (e.verified) this.captivePortal?.authenticated();
      if (e.verified) this.memory?.opened(e.transport);
      this.#endDegraded();
      const name = resolver.authName && !resolver.label.includes(resolver.authName) ? `${resolver.label} (${resolver.authName})` : resolver.label;
      const who = e.transport === 'doh' ? `${name} via DNS-over-HTTPS` : name;
      this.#onPrivacyEvent({ type: 'connected', resolver: who, verified: e.verified, tlsVersion: e.tlsVersion, authError: e.authError });
    });
    upstream.on('close', (e) => {
      this.#out.emit('connection', {
        type: 'close',
        at: Date.now(),
        connectionId: e.connectionId,
        resolverId: resolver.id,
        reason: e.reason,
        failed: e.failed,
        queriesCarried: e.queriesCarried,
        error: e.error ? e.error.message : null,
      });
      if (!active() || !e.lastClosed) return;
      this.#lastVerifiedAt = Date.now();
      // Warm when needed (issue 11): while the machine is in use, a connection the
      // server closed is re-opened at once (a resumed handshake), so the next
      // query finds it open; once idle for WARM_WHILE_IN_USE_MS, not. One our own
      // idle timer closed stays closed: it was idle for the idle timeout the user
      // set, and re-opening it was a handshake a minute for nothing (issue 23:
      // 5.8 ms of CPU a minute, idle). Bounded: after MAX_EMPTY_REOPENS re-opened
      // connections in a row closed without carrying a query, wait for a query
      // (no reconnect loop against a server that closes on sight).
      this.#emptyReopens = e.queriesCarried === 0 ? this.#emptyReopens + 1 : 0;
      if (e.reason !== 'idle' && Date.now() - this.#lastQueryAt() < WARM_WHILE_IN_USE_MS && this.#emptyReopens <= MAX_EMPTY_REOPENS) {
        upstream.warm();
        return;
      }
      const since = new Date(this.#lastVerifiedAt).toTimeString().slice(0, 8);
      this.#onPrivacyEvent({ type: 'idle', resolver: resolver.label, since });
    });
    upstream.on('race', (r) => {
      if (active()) this.#race = { at: Date.now(), transport: r.transport, winner: r.winner, afterMs: r.afterMs, attempts: attemptViews(r.attempts, r.transport, resolver) };
    });
    upstream.on('keepalive', (k) =>
      this.#out.emit('connection', { type: 'keepalive', at: Date.now(), connectionId: k.connectionId, resolverId: resolver.id, timeoutMs: k.timeoutMs }),
    );
    upstream.on('connect-failed', (f) => {
      const classified = classify(f.error, f.transport, resolver);
      if (active()) {
        const attempts = attemptViews(f.attempts, f.transport, resolver);
        this.#network = { at: Date.now(), transport: f.transport, address: f.address, ...classified, detail: f.error.message, afterMs: f.afterMs, attempts };
      }
      this.#out.emit('connection', {
        type: 'connect-failed',
        at: Date.now(),
        resolverId: resolver.id,
        address: f.address,
        code: f.error.code,
        message: f.error.message,
        retryInMs: f.retryInMs,
        transport: f.transport,
        afterMs: f.afterMs,
        ...classified,
      });
      if (!active()) return;
      if (f.transport === 'dot') this.memory?.dotFailed(classified.kind, classified.classification);
      this.#maybeCheckPortal();
      if (!f.speaks) return;
      this.#onPrivacyEvent({ type: 'connect-failed', message: f.message, retryInMs: f.retryInMs });
    });
    upstream.on('transport', (change) => {
      if (active()) this.#out.emit('transport', change);
    });
  }

  /** Where the upstream should start on the network we're on. */
  #hint(): NetworkHint {
    return this.memory?.hint() ?? {};
  }

  #onPrivacyEvent(event: PrivacyEvent): void {
    const next = nextPrivacyState(this.#privacy, event, { mode: this.#config().auth.mode });
    const previous = this.#privacy;
    if (next.state === previous.state && next.reason === previous.reason) return;
    if (next.state !== previous.state) this.#stateSince = Date.now();
    this.#privacy = next;
    this.#out.emit('state', { state: next.state, previous: previous.state, reason: next.reason, at: Date.now(), resolverId: this.#upstream.resolver.id });
    if (next.state === 'blocked') this.#maybeDegrade(next.reason);
  }

  /**
   * The ladder's last step (NETWORK.md): encrypted DNS is blocked, the user
   * chose opportunistic mode and allowed cleartext: the network's own
   * resolver answers, in state `degraded`, until an encrypted connection
   * opens again (the pools keep re-probing with their back-off).
   */
  #maybeDegrade(why: string): void {
    const c = this.#config();
    if (!this.degraded.mayStart() || !this.#running || !c.allowDegraded || c.auth.mode !== 'opportunistic') return;
    if (this.captivePortal?.active || this.captivePortal?.checking) return;
    const found = discoverNetworkResolver(c.captive?.networkDns.length ? c.captive.networkDns : c.networkDns, c.captive?.paths);
    if (!found) {
      this.#out.emit('warning', "cleartext fallback is allowed, but this network's own resolver isn't known: set network DNS in Settings");
      return;
    }
    this.degraded.start(found);
    const who = found.servers.map((x) => x.host).join(', ');
    this.#onPrivacyEvent({
      type: 'degraded',
      sentence: `encrypted DNS is blocked here (${why.split(';')[0] ?? why}); as you allowed, lookups go unencrypted to this network's resolver (${who}) until it works again`,
    });
  }

  /** Leaves degraded mode (an encrypted connection opened, the network changed, strict mode was chosen). */
  #endDegraded(why?: string): void {
    if (!this.degraded.end()) return;
    if (why && this.#running) this.#onPrivacyEvent({ type: 'degraded-ended', sentence: why });
  }

  #makeCaptive(): CaptivePortal {
    const c = this.#config().captive;
    if (!c) throw new Error('no captive config');
    const portal = new CaptivePortal({
      probes: c.probes,
      networkDns: () => this.#config().captive?.networkDns ?? c.networkDns,
      consentFile: c.consentFile,
      mode: () => this.#config().auth.mode,
      retryEncrypted: () => {
        if (this.#running) this.#upstream.networkChanged();
      },
      encryptedWorks: () => this.#upstream.snapshot().verified,
      ...(c.paths ? { paths: c.paths } : {}),
      ...(c.networkKey ? { networkKey: c.networkKey } : {}),
      ...(c.exceptionMs !== undefined ? { exceptionMs: c.exceptionMs } : {}),
      ...(c.reprobeMs !== undefined ? { reprobeMs: c.reprobeMs } : {}),
    });
    portal.on('event', (e) => {
      if (!this.#running) return;
      this.#out.emit('captive', e);
      if (e.type === 'detected') this.memory?.portalSeen();
      if (e.type === 'signed-in' || (e.type === 'left' && e.how === 'private')) this.memory?.portalSignedIn();
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
    const portal = this.captivePortal;
    if (!portal || portal.active || portal.checking) return;
    const now = Date.now();
    if (now - this.#networkSince > PORTAL_CHECK_WINDOW_MS || now - portal.lastCheckAt < PORTAL_CHECK_EVERY_MS) return;
    void portal.check();
  }
}

function classify(error: DotstubError, transport: Transport, resolver: ResolverSpec): { kind: FailureKind; classification: string; sentence: string } {
  const port = transport === 'doh' && resolver.dohUrl ? dohEndpoint(resolver.dohUrl).port : resolver.port;
  const c = classifyFailure(error, port, resolver.label);
  return { kind: c.kind, classification: c.code, sentence: c.sentence };
}

function attemptViews(attempts: readonly AddressAttempt[], transport: Transport, resolver: ResolverSpec): AttemptView[] {
  return attempts.map((a) => {
    const c = a.error ? classify(a.error, transport, resolver) : undefined;
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
