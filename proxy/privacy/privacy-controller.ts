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
 *   - degraded mode (docs/networks.md#the-fallback-ladder, its last step): when it starts and ends;
 *   - what the network we're on teaches (network/current-network.ts, its one
 *     owner): what worked there, recorded; the hint the upstream starts on
 *     when we join one again (DoH at once where 853 was blocked); and, when
 *     it moves or its key becomes known, the upstream starts over or on the
 *     new hint.
 *
 * The root wires it once and passes what it says on as the proxy's own
 * events; it speaks on its own emitter (views.ts). Events from an upstream
 * that is no longer the active one are still reported as connection events
 * but decide nothing.
 */
import { EventEmitter } from 'node:events';
import type { AuthMode } from '../upstream/auth-policy.js';
import type { CaptiveConfig } from '../run/proxy-config.js';
import { dohEndpoint, type ResolverSpec } from '../config/resolvers.js';
import type { DotstubError } from '../errors.js';
import type { AttemptView, NetworkView, PrivacyEvents, RaceView } from './views.js';
import type { AddressAttempt, ManagedUpstream, NetworkHint, Transport } from '../upstream/managed.js';
import type { CurrentNetwork, NetworkChanged } from '../network/current-network.js';
import { CaptivePortal, type CaptiveView } from './captive/session.js';
import type { SignInProxyInfo } from './captive/signin-proxy.js';
import { classifyFailure, type FailureKind } from '../network/classify.js';
import { DegradedMode } from './degraded-mode.js';
import { discoverNetworkResolver } from '../network/network-resolver.js';
import type { TakeoverCause, TakeoverChange } from '../system-dns/view.js';
import { FlapEpisode, flapEndedWords, flapStartedWords } from './flap-episode.js';
import { INITIAL_PRIVACY, nextPrivacyState, shownPrivacy, type PrivacyEvent, type PrivacyReduction, type PrivacyState } from './privacy-state.js';

/** Queries within this long mean the machine is in use: keep a connection open (issue 11, "warm when needed"). */
const WARM_WHILE_IN_USE_MS = 180_000;
const MAX_EMPTY_REOPENS = 3;
/** A connect failure this soon after start or a network change starts a portal check. */
const PORTAL_CHECK_WINDOW_MS = 5 * 60_000;
/** At most one portal check per this long. */
const PORTAL_CHECK_EVERY_MS = 30_000;

export type CaptiveAction = 'allow' | 'decline' | 'extend' | 'check';

/** What the controller reads of the run's settings; each a function where settings change it at run time. */
export interface PrivacyOptions {
  /** Strict or opportunistic, now. */
  readonly mode: () => AuthMode;
  /** Opportunistic mode with cleartext fallback allowed: degraded mode may start. */
  readonly allowDegraded: () => boolean;
  /** The network's own resolver as the user set it (`--network-dns`), now; empty: discovered. */
  readonly networkDns: () => readonly string[];
  /** Captive-portal handling (its network DNS read through `captiveNetworkDns`); null: off, no probe ever leaves. */
  readonly captive: CaptiveConfig | null;
  /** The sign-in's network DNS, now (captive handling's own setting). */
  readonly captiveNetworkDns: () => readonly string[];
}

/** A query the engine answered, as far as the round trip's median needs it (engine/query-record.ts). */
export interface AnsweredQuery {
  readonly source: string;
  readonly reused: boolean | null;
  readonly route?: unknown;
  readonly resolverId: string | null;
  readonly upstreamUs: number;
}

export interface PrivacyControllerInit {
  readonly options: PrivacyOptions;
  /** When the last query arrived (performance.now() clock of the engine), for warm re-open. */
  readonly lastQueryAt: () => number;
  /** The upstream carrying queries at start. */
  readonly upstream: ManagedUpstream;
  /** The network we're on (its one owner): recorded to, and listened to. */
  readonly network: CurrentNetwork;
}

export class PrivacyController extends EventEmitter<PrivacyEvents> {
  readonly #options: PrivacyOptions;
  readonly #lastQueryAt: () => number;
  /** Degraded mode's cleartext path (the captive gate reads it). */
  readonly degraded = new DegradedMode();
  /** Captive portals: detection, the sign-in exception (null when config.captive is). */
  readonly captivePortal: CaptivePortal | null;
  readonly #network: CurrentNetwork;
  /** Changes of network close together: one episode, told as one (flap-episode.ts). */
  readonly #flaps = new FlapEpisode({
    started: (changes, since) => this.#tellEpisode('start', flapStartedWords(changes, since)),
    ended: (summary) => this.#tellEpisode('end', flapEndedWords(summary)),
  });
  /** The upstream whose events decide; others only report. */
  #upstream: ManagedUpstream;
  #running = false;
  #privacy: PrivacyReduction = INITIAL_PRIVACY;
  #stateSince = Date.now();
  /** Warm re-opens in a row whose connection closed without carrying a query. */
  #emptyReopens = 0;
  /** Date.now() when the active resolver was last seen verified on an open connection (null: never). */
  #lastVerifiedAt: number | null = null;
  /** The active resolver's last connect failure, classified; null once a connection of that transport opens. */
  #lastFailure: NetworkView | null = null;
  /** The last race across addresses that was won after more than one was tried. */
  #race: RaceView | null = null;
  /** When the proxy started or the network last changed: a connect failure soon after may be a portal. */
  #networkSince = 0;

  constructor(init: PrivacyControllerInit) {
    super();
    this.#options = init.options;
    this.#lastQueryAt = init.lastQueryAt;
    this.#upstream = init.upstream;
    this.#network = init.network;
    this.captivePortal = init.options.captive ? this.#makeCaptive(init.options.captive) : null;
    this.#network.on('changed', (c) => this.#networkChanged(c));
    this.observe(init.upstream);
  }

  /** The round trip: answers from the chosen resolver on a connection that was already open. */
  answered(r: AnsweredQuery): void {
    if (r.source === 'upstream' && r.reused === true && !r.route && r.resolverId === this.#upstream.resolver.id) this.#network.answered(r.upstreamUs);
  }

  /** The state a user is shown (the takeover's `off` included), and since when it is that state. */
  get state(): { readonly state: PrivacyState; readonly reason: string; readonly since: number } {
    const shown = shownPrivacy(this.#privacy);
    return { state: shown.state, reason: shown.reason, since: this.#stateSince };
  }

  /**
   * The system-DNS takeover this run manages changed (app.ts feeds the
   * manager's changes here), with the user's choice that made it when it was
   * one; null: no takeover is managed (any more). A change the user sees is
   * one 'state' event, like any other, carrying that choice.
   */
  takeover(change: TakeoverChange | null): void {
    this.#onPrivacyEvent({ type: 'takeover', takeover: change }, change?.cause);
  }

  /** When the active resolver was last known good: now while a connection is open, else when the last one closed. */
  get lastVerifiedAt(): number | null {
    return this.#upstream.snapshot().open ? Date.now() : this.#lastVerifiedAt;
  }

  /** The last connect failure of the active resolver, classified; null since that transport's last success. */
  get network(): NetworkView | null {
    return this.#lastFailure;
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

  started(): void {
    this.#running = true;
    this.#networkSince = Date.now();
    this.#upstream.prefer(this.#hint());
    this.#onPrivacyEvent({ type: 'started', resolver: this.#upstream.resolver.label });
  }

  /** Stopping: no more decisions; the captive session and degraded mode end. */
  stopping(): void {
    this.#running = false;
    this.#flaps.stop();
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
   * The network moved: its failure, its portal and degraded mode belonged
   * to the old one; the upstream starts over, where the new network's memory
   * says (DoH at once where 853 was blocked). Its key became known for sure
   * (the gateway's MAC came): the upstream prefers what the memory says.
   */
  #networkChanged(c: NetworkChanged): void {
    if (!this.#running) return;
    if (c.why === 'known') this.#upstream.prefer(this.#hint());
    if (c.why !== 'moved') return;
    this.#flaps.changed();
    this.#lastFailure = null;
    this.#networkSince = Date.now();
    this.captivePortal?.networkChanged();
    this.#endDegraded('the network changed: trying encrypted DNS first again');
    this.#upstream.networkChanged(this.#hint());
  }

  /** Settings changed: degraded mode ends when it is no longer allowed. */
  settingsChanged(): void {
    if (!this.#options.allowDegraded() || this.#options.mode() === 'strict') this.#endDegraded('cleartext fallback is off now');
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
      this.emit('connection', { type: 'open', at: Date.now(), resolverId: resolver.id, ...e });
      if (!active()) return;
      // A transport that opens clears its own failure only: while DoH carries the
      // queries, the status still says what the network did to DoT (and why DoH).
      if (this.#lastFailure?.transport === e.transport) this.#lastFailure = null;
      if (e.verified) this.captivePortal?.authenticated();
      if (e.verified) this.#network.opened(e.transport);
      if (e.classicalOnly === 'retried') this.#network.pqHelloLost();
      this.#endDegraded();
      const name = resolver.authName && !resolver.label.includes(resolver.authName) ? `${resolver.label} (${resolver.authName})` : resolver.label;
      const who = e.transport === 'doh' ? `${name} via DNS-over-HTTPS` : name;
      this.#onPrivacyEvent({ type: 'connected', resolver: who, verified: e.verified, tlsVersion: e.tlsVersion, authError: e.authError ?? undefined });
    });
    upstream.on('burst', (e) => {
      if (active()) this.#network.burstSeen(e.windows);
    });
    upstream.on('close', (e) => {
      this.emit('connection', {
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
      this.emit('connection', { type: 'keepalive', at: Date.now(), resolverId: resolver.id, ...k }),
    );
    upstream.on('connect-failed', (f) => {
      const classified = classify(f.error, f.transport, resolver);
      if (active()) {
        const attempts = attemptViews(f.attempts, f.transport, resolver);
        this.#lastFailure = { at: Date.now(), transport: f.transport, address: f.address, ...classified, detail: f.error.message, afterMs: f.afterMs, attempts };
      }
      this.emit('connection', {
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
      if (f.transport === 'dot') this.#network.dotFailed(classified.kind, classified.classification);
      this.#maybeCheckPortal();
      if (!f.speaks) return;
      this.#onPrivacyEvent({ type: 'connect-failed', message: f.message, retryInMs: f.retryInMs, offline: f.offline, nat64Prefix: f.nat64Prefix });
    });
    upstream.on('transport', (change) => {
      if (active()) this.emit('transport', change);
    });
  }

  /** Where the upstream should start on the network we're on. */
  #hint(): NetworkHint {
    return this.#network.hint();
  }

  /**
   * The network's hint changed while we're on it (its NAT64 prefix was
   * found: nat64-check.ts): the upstream starts over with it, at once.
   */
  networkHintChanged(): void {
    if (this.#running) this.#upstream.networkChanged(this.#hint());
  }

  /** A flapping link's episode is under way: its state lines are told as one (flap-episode.ts). */
  get flapping(): boolean {
    return this.#flaps.quiet;
  }

  /** One line of a flapping link's episode, in the state's place: the same state, the episode's words before its reason. */
  #tellEpisode(episode: 'start' | 'end', words: string): void {
    if (!this.#running) return;
    const shown = shownPrivacy(this.#privacy);
    this.emit('state', { state: shown.state, previous: shown.state, reason: `${words}; now ${shown.state}: ${shown.reason}`, at: Date.now(), resolverId: this.#upstream.resolver.id, episode });
  }

  #onPrivacyEvent(event: PrivacyEvent, cause?: TakeoverCause): void {
    const before = this.#privacy;
    const reduced = nextPrivacyState(before, event, { mode: this.#options.mode() });
    this.#privacy = reduced;
    const previous = shownPrivacy(before);
    const next = shownPrivacy(reduced);
    if (next.state !== previous.state || next.reason !== previous.reason) {
      if (next.state !== previous.state) this.#stateSince = Date.now();
      this.emit('state', { state: next.state, previous: previous.state, reason: next.reason, at: Date.now(), resolverId: this.#upstream.resolver.id, ...(cause ? { takeover: cause } : {}) });
    }
    // The ladder's last step follows the connections, shown or not (under a paused takeover the upstream can still be blocked).
    const c = reduced.connection;
    if (c.state === 'blocked' && (c.state !== before.connection.state || c.reason !== before.connection.reason)) this.#maybeDegrade(c.reason);
  }

  /**
   * The ladder's last step (docs/networks.md#the-fallback-ladder): encrypted DNS is blocked, the user
   * chose opportunistic mode and allowed cleartext: the network's own
   * resolver answers, in state `degraded`, until an encrypted connection
   * opens again (the pools keep re-probing with their back-off).
   */
  #maybeDegrade(why: string): void {
    const o = this.#options;
    if (!this.degraded.mayStart() || !this.#running || !o.allowDegraded() || o.mode() !== 'opportunistic') return;
    if (this.captivePortal?.active || this.captivePortal?.checking) return;
    const captiveDns = o.captive ? o.captiveNetworkDns() : [];
    const found = discoverNetworkResolver(captiveDns.length ? captiveDns : o.networkDns(), o.captive?.paths);
    if (!found) {
      this.emit('warning', "cleartext fallback is allowed, but this network's own resolver isn't known: set network DNS in Settings");
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

  #makeCaptive(c: CaptiveConfig): CaptivePortal {
    const portal = new CaptivePortal({
      probes: c.probes,
      networkDns: this.#options.captiveNetworkDns,
      network: this.#network,
      mode: this.#options.mode,
      retryEncrypted: () => {
        if (this.#running) this.#upstream.networkChanged();
      },
      encryptedWorks: () => this.#upstream.snapshot().verified,
      ...(c.paths ? { paths: c.paths } : {}),
      ...(c.exceptionMs !== undefined ? { exceptionMs: c.exceptionMs } : {}),
      ...(c.reprobeMs !== undefined ? { reprobeMs: c.reprobeMs } : {}),
    });
    portal.on('event', (e) => {
      if (!this.#running) return;
      this.emit('captive', e);
      if (e.type === 'detected') this.#network.portalSeen();
      if (e.type === 'signed-in' || (e.type === 'left' && e.how === 'private')) this.#network.portalSignedIn();
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
