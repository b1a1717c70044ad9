/**
 * The fallback ladder's core (docs/networks.md#the-fallback-ladder): an
 * Upstream composing two managed upstreams, a primary (a DoT pool) and a
 * secondary (a DoH pool to the same resolver), printed as `Fallback(DoT(quad9); DoH(quad9))` (routedns's
 * FailRotate(a;b) shape).
 *
 *   primary ──connect-failed (refused, reset, timeout, unreachable)──► secondary carries queries
 *      ▲                                                                  │
 *      └──── primary's first authenticated open (probed 5 s → 60 s) ◄─────┘
 *
 *   an open DoT connection that went silent (closed 'unresponsive': no answer to
 *   anything since a query's deadline) counts as a failure too: a block that
 *   starts mid-session moves to DoH after one query deadline, not after that
 *   plus a reconnect's 2.5 s connect timer (found in the network lab).
 *
 *   connect-failed with DOTSTUB_CERTIFICATE / DOTSTUB_PIN_MISMATCH: interception;
 *   stay on the primary (its queries fail, typed) — never a weaker path around it.
 *
 *   a hint from the network's memory (`prefer` / `networkChanged({ startOn: 'doh' })`,
 *   given where 853 was blocked and DoH worked): the secondary carries queries from
 *   the start, no connect timer first; the primary is probed on the usual schedule
 *   (5 s → 60 s) and taken back as soon as it authenticates. Should DoH fail before
 *   the primary has failed on this network, the ladder runs from DoT as without a hint.
 *
 * Invariants:
 * - Every request gets exactly one callback: the one from the pool that
 *   settles it. A request that the primary failed for want of a connection
 *   after the switch is handed to the secondary once (and vice versa), never
 *   more, so it is answered rather than lost in the switch.
 * - Each pool authenticates on its own (DoT: auth name or pin; DoH: the URL
 *   host's certificate); the fallback never relaxes either.
 * - Switches are at least `minSwitchIntervalMs` apart (no flapping); a
 *   switch that comes due sooner is deferred to that moment and re-checked then.
 * - While the primary is down (the secondary carrying queries, or held on
 *   the primary after interception) it is re-probed by warming it, with
 *   back-off from `probeMinMs` doubling to `probeMaxMs`. The primary pool
 *   must be made with `selfRetry: false` so this schedule is the only one.
 */
import { EventEmitter } from 'node:events';
import { isInterception, QueryTimeoutError, type DotstubError } from '../errors.js';
import type { ResolverSpec } from '../config/resolvers.js';
import type { ManagedUpstream, ManagedUpstreamEvents, NetworkHint, RetryOutcome, Transport, TransportChange, UpstreamSnapshot } from './managed.js';
import type { UpstreamCallback, UpstreamRequest } from './upstream.js';

export interface FallbackOptions {
  /** Never switch transports more often than this (docs/networks.md#the-fallback-ladder: no flapping faster than 10 s). */
  readonly minSwitchIntervalMs: number;
  /** Re-probe the primary from this interval … */
  readonly probeMinMs: number;
  /** … doubling up to this one. */
  readonly probeMaxMs: number;
}

const DEFAULT_FALLBACK_OPTIONS: FallbackOptions = { minSwitchIntervalMs: 10_000, probeMinMs: 5_000, probeMaxMs: 60_000 };

export interface FallbackInit {
  /** Each side is a managed upstream of one transport (a pool): the fallback hears its events, warms it to probe, and joins their snapshots. */
  readonly primary: ManagedUpstream;
  readonly secondary: ManagedUpstream;
  /** Ports, for the sentences: the DoT port and the DoH URL's port. */
  readonly primaryPort: number;
  readonly secondaryPort: number;
  readonly options?: FallbackOptions;
}

/** A request failed for want of a connection, not because of its own answer: safe to hand to the other side. */
const NO_CONNECTION = new Set(['DOTSTUB_CONNECT_FAILED', 'DOTSTUB_CONNECT_TIMEOUT']);

export class Fallback extends EventEmitter<ManagedUpstreamEvents> implements ManagedUpstream {
  readonly name: string;
  readonly #primary: ManagedUpstream;
  readonly #secondary: ManagedUpstream;
  readonly #opts: FallbackOptions;
  readonly #primaryPort: number;
  readonly #secondaryPort: number;
  /** The side new requests go to. */
  #active: Transport = 'dot';
  /** Per side: an authenticated connection opened since its last connect failure. */
  readonly #up: Record<Transport, boolean> = { dot: false, doh: false };
  /** Date.now() of the last switch; -Infinity before the first. */
  #switchedAt = -Infinity;
  #switchTimer: NodeJS.Timeout | undefined;
  #probeTimer: NodeJS.Timeout | undefined;
  #probeDelayMs: number;
  #closed = false;
  /** The last failure of the primary, for the sentence when switching. */
  #primaryError: DotstubError | undefined;
  #lastEvent: TransportChange | undefined;
  /** On the secondary because of a hint, and the primary hasn't failed on this network yet. */
  #hinted = false;

  constructor(init: FallbackInit) {
    super();
    this.#primary = init.primary;
    this.#secondary = init.secondary;
    this.#opts = init.options ?? DEFAULT_FALLBACK_OPTIONS;
    if (!(this.#opts.probeMinMs > 0 && this.#opts.probeMaxMs >= this.#opts.probeMinMs)) {
      throw new RangeError(`fallback probe interval must be positive and at most its maximum, got ${this.#opts.probeMinMs}–${this.#opts.probeMaxMs} ms`);
    }
    this.#primaryPort = init.primaryPort;
    this.#secondaryPort = init.secondaryPort;
    this.#probeDelayMs = this.#opts.probeMinMs;
    this.name = `Fallback(${init.primary.name}; ${init.secondary.name})`;
    init.primary.on('open', () => this.#onOpen('dot'));
    init.secondary.on('open', () => this.#onOpen('doh'));
    init.primary.on('connect-failed', (f) => this.#onPrimaryFailed(f.error));
    init.primary.on('close', (e) => {
      if (e.reason !== 'unresponsive' || init.primary.snapshot().open) return;
      this.#onPrimaryFailed(e.error ?? new QueryTimeoutError(`${e.address} went silent: no answer on port ${this.#primaryPort} within the deadline`));
    });
    init.secondary.on('connect-failed', (f) => this.#onSecondaryFailed(f.error));
    // After the fallback's own listeners, so what observers hear has its decision made.
    this.#relay(init.primary, 'dot');
    this.#relay(init.secondary, 'doh');
  }

  /** Re-emits a side's events as they are, but for what only the fallback knows: whether that side carries queries, and the ladder's words. */
  #relay(side: ManagedUpstream, t: Transport): void {
    side.on('open', (e) => this.emit('open', e));
    side.on('close', (e) => this.emit('close', { ...e, lastClosed: e.lastClosed && this.#active === t }));
    side.on('keepalive', (e) => this.emit('keepalive', e));
    side.on('race', (e) => this.emit('race', e));
    side.on('burst', (e) => this.emit('burst', e));
    side.on('connect-failed', (e) => {
      // Ladder step 4: when DoH fails too, the reason names the first failure (DoT's) as well.
      const message = t === 'doh' && this.#primaryError ? `${this.#primaryError.message}; DNS-over-HTTPS failed too: ${e.error.message}` : e.error.message;
      this.emit('connect-failed', { ...e, speaks: this.#active === t, message });
    });
  }

  /** The transport carrying queries now; null while the active side has no authenticated connection. */
  get transport(): Transport | null {
    return this.#up[this.#active] ? this.#active : null;
  }

  /** The side requests go to, connected or not. */
  get active(): Transport {
    return this.#active;
  }

  /** The latest transport event, for a status view that starts late. */
  get lastChange(): TransportChange | null {
    return this.#lastEvent ?? null;
  }

  /** The resolver both sides reach (the primary's spec, which carries the DoH URL). */
  get resolver(): ResolverSpec {
    return this.#primary.resolver;
  }

  /** Both sides' live connections. */
  snapshot(): UpstreamSnapshot {
    const [dot, doh] = [this.#primary.snapshot(), this.#secondary.snapshot()];
    return { connections: [...dot.connections, ...doh.connections], open: dot.open || doh.open, verified: dot.verified || doh.verified };
  }

  get primary(): ManagedUpstream {
    return this.#primary;
  }

  get secondary(): ManagedUpstream {
    return this.#secondary;
  }

  /**
   * The network changed: both sides start over, and the ladder runs again
   * from DoT at once — or, hinted `startOn: 'doh'` (853 was blocked on this
   * network), from DoH at once with DoT probed on the usual schedule.
   */
  networkChanged(hint: NetworkHint = {}): void {
    if (this.#closed) return;
    this.#primary.networkChanged(hint);
    this.#secondary.networkChanged(hint);
    this.#stopProbing();
    // What was up belonged to the old network's connections; its switches too (no
    // flapping is a rule per network: a block found on the new one is acted on at once).
    this.#up.dot = false;
    this.#up.doh = false;
    this.#hinted = false;
    this.#switchedAt = -Infinity;
    clearTimeout(this.#switchTimer);
    this.#switchTimer = undefined;
    if (hint.startOn === 'doh') {
      this.#startOnSecondary();
      this.#secondary.warm();
      return;
    }
    this.#primary.warm();
    if (this.#active === 'doh') this.#secondary.warm();
    this.#scheduleProbe();
  }

  /** Before the first connection (start, a resolver switch): hinted `startOn: 'doh'`, DoH carries queries from the start. */
  prefer(hint: NetworkHint): void {
    this.#primary.prefer(hint);
    this.#secondary.prefer(hint);
    if (this.#closed || hint.startOn !== 'doh' || this.#active === 'doh' || this.#up.dot) return;
    this.#startOnSecondary();
  }

  /**
   * "Retry now": probes DoT at once (as the probe timer would), and the
   * active side too when that is DoH and it is down. The DoT side's outcome wins when it tries.
   */
  retryNow(): RetryOutcome {
    if (this.#closed) return 'closed';
    const dot = this.#primary.retryNow();
    if (this.#active === 'dot') return dot;
    const doh = this.#secondary.retryNow();
    return dot === 'started' || dot === 'scheduled' ? dot : doh;
  }

  /** Opens the active side's connections now. */
  warm(): void {
    this.#side(this.#active).warm();
  }

  resolve<R extends UpstreamRequest>(req: R, done: UpstreamCallback<R>): void {
    const first = this.#active;
    this.#side(first).resolve(req, (r, err, answer) => {
      // Failed for want of a connection, and the other side has taken over
      // meanwhile (the failure that made us switch, usually): hand it over once.
      if (err && !this.#closed && this.#active !== first && NO_CONNECTION.has(err.code)) {
        this.#side(this.#active).resolve(r, done);
        return;
      }
      done(r, err, answer);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#clearTimers();
    await Promise.all([this.#primary.close(), this.#secondary.close()]);
  }

  destroy(): void {
    this.#closed = true;
    this.#clearTimers();
    this.#primary.destroy();
    this.#secondary.destroy();
  }

  /** The hint's start: DoH carries queries; DoT is probed from the first interval on (not a switch: DoT may come back at once). */
  #startOnSecondary(): void {
    this.#active = 'doh';
    this.#hinted = true;
    clearTimeout(this.#switchTimer);
    this.#switchTimer = undefined;
    this.#scheduleProbe();
    this.#announce(this.#dohSentence(), null);
  }

  #side(t: Transport): ManagedUpstream {
    return t === 'dot' ? this.#primary : this.#secondary;
  }

  #onOpen(t: Transport): void {
    if (this.#closed) return;
    const wasUp = this.#up[t];
    this.#up[t] = true;
    if (t === 'dot') {
      this.#primaryError = undefined;
      this.#stopProbing();
      if (this.#active === 'doh') {
        this.#switchWhenAllowed('dot');
        return;
      }
    }
    if (t === this.#active && !wasUp) {
      if (t === 'dot') this.#announce('DNS-over-TLS is up', null);
      else this.#announce(this.#dohSentence(), this.#primaryError?.message ?? null);
    }
  }

  #onPrimaryFailed(error: DotstubError): void {
    if (this.#closed) return;
    this.#hinted = false;
    this.#up.dot = false;
    this.#primaryError = error;
    if (isInterception(error)) {
      // Ladder step 2: interception is never routed around. Queries stay on
      // the primary and fail, typed, until it authenticates again.
      this.#scheduleProbe();
      // Already on DoH (its own authentication passed): stay there.
      if (this.#active === 'doh') return;
      clearTimeout(this.#switchTimer);
      this.#switchTimer = undefined;
      this.#announce(`the DNS-over-TLS connection looks intercepted; not falling back to another transport`, error.message);
      return;
    }
    this.#scheduleProbe();
    if (this.#active === 'dot') this.#switchWhenAllowed('doh');
  }

  #onSecondaryFailed(error: DotstubError): void {
    if (this.#closed) return;
    const wasUp = this.#up.doh;
    this.#up.doh = false;
    if (this.#active === 'doh' && this.#hinted) {
      // The hint was wrong (DoH fails here now) and DoT hasn't failed here: run the ladder from DoT.
      this.#hinted = false;
      this.#active = 'dot';
      this.#stopProbing();
      this.#primary.warm();
      this.#announce(`DNS-over-HTTPS on ${this.#secondaryPort} failed on this network; trying DNS-over-TLS on ${this.#primaryPort}`, error.message);
      return;
    }
    if (this.#active === 'doh' && wasUp) {
      this.#announce(`DNS-over-HTTPS on ${this.#secondaryPort} failed too; no encrypted transport works here`, error.message);
    }
  }

  /** Switches to `to` now, or when the last switch is `minSwitchIntervalMs` old, if it is still wanted then. */
  #switchWhenAllowed(to: Transport): void {
    const wait = this.#switchedAt + this.#opts.minSwitchIntervalMs - Date.now();
    if (wait <= 0) {
      this.#switchTo(to);
      return;
    }
    if (this.#switchTimer) return;
    this.#switchTimer = setTimeout(() => {
      this.#switchTimer = undefined;
      if (this.#closed || this.#active === to) return;
      // Still wanted? Back to DoT only while it is up; to DoH only while DoT is down.
      if (to === 'dot' ? this.#up.dot : !this.#up.dot && !isInterception(this.#primaryError)) this.#switchTo(to);
      else if (to === 'dot') this.#scheduleProbe();
    }, wait);
    this.#switchTimer.unref();
  }

  #switchTo(to: Transport): void {
    this.#active = to;
    this.#switchedAt = Date.now();
    if (to === 'doh') {
      this.#secondary.warm();
      this.#announce(this.#dohSentence(), this.#primaryError?.message ?? null);
    } else {
      this.#stopProbing();
      this.#announce(`port ${this.#primaryPort} works again; back to DNS-over-TLS`, null);
    }
  }

  /** Re-probes the primary by warming it: 5 s, 10 s, 20 s, … at most 60 s apart (ladder step 5). */
  #scheduleProbe(): void {
    if (this.#probeTimer || this.#closed) return;
    const delay = this.#probeDelayMs;
    this.#probeDelayMs = Math.min(this.#opts.probeMaxMs, this.#probeDelayMs * 2);
    this.#probeTimer = setTimeout(() => {
      this.#probeTimer = undefined;
      if (this.#closed || this.#up.dot) return;
      this.#primary.warm();
      // The next probe is armed now; a success stops it (#onOpen).
      this.#scheduleProbe();
    }, delay);
    this.#probeTimer.unref();
  }

  #stopProbing(): void {
    clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
    this.#probeDelayMs = this.#opts.probeMinMs;
  }

  #clearTimers(): void {
    clearTimeout(this.#switchTimer);
    this.#switchTimer = undefined;
    this.#stopProbing();
  }

  /** "using" once DoH has an authenticated connection, "trying" until then. */
  #dohSentence(): string {
    const using = `${this.#up.doh ? 'using' : 'trying'} DNS-over-HTTPS on ${this.#secondaryPort}`;
    if (this.#hinted) return `port ${this.#primaryPort} was blocked on this network before; ${using} first, and trying ${this.#primaryPort} again in the background`;
    return `port ${this.#primaryPort} is blocked here; ${using}`;
  }

  #announce(reason: string, detail: string | null): void {
    const change: TransportChange = { transport: this.transport, active: this.#active, reason, detail, at: Date.now() };
    this.#lastEvent = change;
    this.emit('transport', change);
  }
}
