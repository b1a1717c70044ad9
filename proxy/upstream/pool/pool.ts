/**
 * A pool of connections to one resolver over one transport, implementing
 * the ManagedUpstream contract (../managed.ts) itself. Policy only: what a
 * connection is comes from the factory (DoT and DoH alike, made by
 * connection/lifecycle.ts), so the pool and each of its parts are tested
 * with fakes (test-support/fake-connection.ts): connections.ts opens the
 * connections (races, tickets, back-off) and hears them close, window.ts picks a connection
 * and sizes bursts, race.ts races address families, backoff.ts paces failed
 * attempts, quarantine.ts blames a connection's death, flight.ts holds a
 * request's deadline and retry rules, hedge.ts when a silent connection's
 * queries are sent again. Here: the flights, from resolve() to their one
 * callback.
 *
 *   resolve(req) ─► quarantined? ─► typed error at once
 *        ▼ pick ─► send ─► deadline (SRTT + 2 × RTO, 25 ms slots) ─► answer ─► RTT sample ─► done(req, null, answer)
 *   deadline, connection still delivering answers or its peer acknowledging the query ─► wait one more RTO (up to queryTimeoutMaxMs), never a retry
 *   closed / deadline on a connection whose peer acknowledged nothing ─► retry once on another connection ─► … ─► done(req, error)
 *   nothing read from its connection for an ACK wait and the query unacknowledged ─► sent again on a second one, first answer wins (hedge.ts)
 *   every connection full (the server's limits, the caps) ─► waits for room, up to queryTimeoutMaxMs, then done(req, error)
 *   unreachable (backing off) / closed pool ─► done(req, error) at once; no route ─► waits for the network (offline.ts)
 *
 * Invariants:
 * - Every request gets exactly one callback, from resolve() itself when it fails at once.
 * - At most `size` + `burstConnections` connections exist at once, and never
 *   more than options.ts's BURST_CONNECTIONS (4) or what the resolver showed
 *   it takes, whoever opens them (a query, a burst, a retry, the hedge):
 *   connecting, open and draining alike (the server holds them all). Once a
 *   burst is over they are drained down to STEADY_CONNECTIONS (2). Burst
 *   extras are not re-opened after they close, and their failure to connect
 *   is no resolver failure; nor is a connection the server refused as it was
 *   made while another is up (its cap on connections, learnt).
 * - A connection carries at most `maxInFlight` queries at once (100), fewer
 *   when the server showed it takes fewer, and no more than a server's
 *   queries per connection, learnt (limits.ts; in memory for the run).
 * - A ticket is kept only from an authenticated connection (connections
 *   emit 'session' only then), so resumption never bypasses authentication.
 * - While connecting fails, queries fail at once with the reason; unless
 *   `selfRetry` is off, a timer keeps trying so the pool recovers by itself.
 */
import { EventEmitter } from 'node:events';
import type { ResolverSpec } from '../../config/resolvers.js';
import { withoutAuthenticData, type UpstreamAnswer } from '../../dns/upstream-answer.js';
import { InFlightCapError, isDotstubError, PoolClosedError, QueryTimeoutError, type DotstubError } from '../../errors.js';
import type { AnswerHandler, ConnectionFactory, PoolConnection, SendInfo } from '../connection/contract.js';
import { newUpstreamCounters, type UpstreamCounters } from '../counters.js';
import { DeadlineSlots } from '../deadlines.js';
import type { ManagedUpstream, ManagedUpstreamEvents, NetworkHint, RetryOutcome, Transport, TransportChange, UpstreamSnapshot } from '../managed.js';
import { RttEstimator } from '../rtt.js';
import type { UpstreamCallback, UpstreamRequest } from '../upstream.js';
import { Backoff } from './backoff.js';
import { deadlinePassed, newFlight, ownRetryLeft, settle, type DeadlineAction, type Flight } from './flight.js';
import { dropFirst, hedgeAfterMs, ownStall, resumeFirst, sentAgain, silentSince, stayedSilent } from './hedge.js';
import { PoolConnections } from './connections.js';
import { limitsFor, type LearntLimits } from './limits.js';
import { OfflineHold } from './offline.js';
import { validatePoolOptions, type PoolOptions } from './options.js';
import { Quarantine } from './quarantine.js';
import { snapshotOf } from './snapshot.js';
import { AnswerWindow, pick } from './window.js';

/** A query waiting for room on a connection, since performance.now() `since`. */
interface Waiting {
  readonly flight: Flight;
  readonly since: number;
}

/** A lookup after this long without one may be a click: a page's burst may follow (connections.ts prepareWhenOpen). */
const QUIET_MS = 1_000;

export interface PoolInit {
  /** What its connections speak; names it too: `dot` gives `DoT(quad9)`. */
  readonly transport: Transport;
  readonly resolver: ResolverSpec;
  readonly options: PoolOptions;
  readonly factory: ConnectionFactory;
  /** Shared with the engine; the pool is the only writer of these fields. */
  readonly counters?: UpstreamCounters;
  /**
   * Reconnect by itself while the resolver is unreachable (default true).
   * False: the owner re-probes with warm() on its own schedule (the fallback
   * does, 5 s → 60 s); queries still fail at once during the back-off.
   */
  readonly selfRetry?: boolean;
  /** Numbers its connections (default: the process's one sequence, as users see them); the start's warm-up has its own. */
  readonly connectionIds?: () => number;
  /** What the resolver showed it takes (default: this run's memory for its address and port, limits.ts); tests give their own. */
  readonly limits?: LearntLimits;
}

export class Pool extends EventEmitter<ManagedUpstreamEvents> implements ManagedUpstream {
  readonly name: string;
  readonly resolver: ResolverSpec;
  readonly options: PoolOptions;
  readonly counters: UpstreamCounters;
  /** One transport only: no change of transport to tell, and nothing for prefer() to choose. */
  readonly lastChange: TransportChange | null = null;
  readonly #transport: Transport;
  readonly #selfRetry: boolean;
  readonly #rtt: RttEstimator;
  readonly #deadlines = new DeadlineSlots<Flight>((f) => this.#onTimeout(f));
  readonly #window = new AnswerWindow();
  /** The windows the last burst wanted (0: no burst seen in this run): what a lookup after a quiet spell prepares for. */
  #burstWindows = 0;
  /** The windows last announced in a 'burst' event (announced only when they change). */
  #announcedWindows = 0;
  /** The most windows the burst under way needed so far, and the timer that announces it once the burst is over (QUIET_MS). */
  #burstPeak = 0;
  #burstTimer: NodeJS.Timeout | undefined;
  /** performance.now() of the last lookup; none yet: the first lookup comes after a quiet spell. */
  #lastResolveAt = Number.NEGATIVE_INFINITY;
  readonly #backoff: Backoff;
  readonly #quarantine: Quarantine;
  /** Its connections: opened in races, counted, heard closing (connections.ts). */
  readonly #c: PoolConnections;
  #closed = false;
  /** Queries that met "no route": they wait for the next network change (offline.ts). */
  readonly #offline: OfflineHold;
  readonly #limits: LearntLimits;
  /** Queries waiting for room on a connection (every one full, no other may be opened), oldest first, with when each began to wait. */
  #waiting: Waiting[] = [];
  #waitTimer: NodeJS.Timeout | undefined;
  #pumpQueued = false;
  /** Drains the connections a burst opened once lookups have been quiet for QUIET_MS. */
  #settleTimer: NodeJS.Timeout | undefined;

  constructor(init: PoolInit) {
    super();
    if (init.resolver.addresses.length === 0) throw new RangeError(`resolver ${init.resolver.label} has no addresses`);
    validatePoolOptions(init.options);
    this.resolver = init.resolver;
    this.options = init.options;
    this.#selfRetry = init.selfRetry ?? true;
    this.counters = init.counters ?? newUpstreamCounters();
    this.#transport = init.transport;
    this.name = `${init.transport === 'dot' ? 'DoT' : 'DoH'}(${init.resolver.id})`;
    this.#rtt = new RttEstimator(init.options.queryTimeoutMinMs, init.options.queryTimeoutMaxMs);
    this.#backoff = new Backoff(init.options.maxBackoffMs);
    this.#quarantine = new Quarantine(init.resolver.label);
    this.#limits = init.limits ?? limitsFor(init.resolver);
    this.#c = new PoolConnections({
      ...init,
      counters: this.counters,
      backoff: this.#backoff,
      quarantine: this.#quarantine,
      limits: this.#limits,
      emit: (event, ...args) => {
        // Room may have come (a connection up) or gone with queries to re-send (one closed): the waiting queries are tried again.
        if (event === 'open' || event === 'close') this.#pumpSoon();
        return this.emit(event, ...args);
      },
      retry: this.#selfRetry ? () => this.warm() : undefined,
    });
    this.#offline = new OfflineHold(init.options.queryTimeoutMaxMs, (flight, err) => this.#settle(flight, err, null));
  }

  /**
   * The network changed (new route or address, resume from sleep): the
   * connections can't be trusted to have survived, and the back-off measured
   * the old network. Close them (their queries are retried on new ones),
   * forget the back-off, and connect again at once.
   */
  networkChanged(hint: NetworkHint = {}): void {
    if (this.#closed) return;
    this.#backoff.reset();
    // A new network offers post-quantum key agreement again, unless its memory says its paths lose that ClientHello.
    this.#c.classical = hint.classicalOnly === true;
    this.#c.nat64 = hint.nat64Prefix ?? null;
    this.#rememberedBursts(hint);
    for (const c of [...this.#c.list]) c.close('network-change');
    if (this.#selfRetry) this.warm();
    // Waiting for a route: the network is back (or changed), try them now.
    for (const flight of this.#offline.release()) this.#attempt(flight);
  }

  /**
   * The user asked to try again now ("Retry now"): the attempt a query
   * arriving with no connection up makes, under the same limits (only while
   * no connection is connecting or open, at most one a second: sooner than
   * that, it starts when the second is up), whatever the back-off says.
   */
  retryNow(): RetryOutcome {
    if (this.#closed) return 'closed';
    if (this.#c.list.some((c) => c.state === 'open')) return 'connected';
    if (this.#c.liveCount() > 0) return 'connecting';
    const wait = this.#backoff.untilNextAttempt();
    if (wait <= 0) {
      this.#c.open();
      return 'started';
    }
    this.#backoff.schedule(() => {
      if (!this.#closed && this.#c.liveCount() === 0) this.#c.open();
    }, wait);
    return 'scheduled';
  }

  /** Opens the pool's connections now instead of on the first query. */
  warm(): void {
    while (!this.#closed && this.#c.list.length < this.#c.keptSize() && !this.#backoff.backingOff()) this.#c.open();
  }

  /** Before its first connection (start, a switch): the network's memory on key agreement. */
  prefer(hint: NetworkHint): void {
    if (hint.classicalOnly === true) this.#c.classical = true;
    if (hint.nat64Prefix !== undefined) this.#c.nat64 = hint.nat64Prefix;
    this.#rememberedBursts(hint);
  }

  /**
   * Bursts seen here before (the network's memory): until this run sees
   * one, the first lookup after a quiet spell prepares the connections the
   * last one needed, the first lookup of all included.
   */
  #rememberedBursts(hint: NetworkHint): void {
    const windows = hint.burstWindows ?? 0;
    if (this.#burstWindows === 0 && Number.isInteger(windows) && windows > 0) this.#burstWindows = windows;
  }

  get transport(): Transport | null {
    return this.#c.up ? this.#transport : null;
  }

  get connections(): readonly PoolConnection[] {
    return this.#c.list;
  }

  snapshot(): UpstreamSnapshot {
    return snapshotOf(this.#c.list, this.#c.extras, this.resolver.id);
  }

  resolve<R extends UpstreamRequest>(req: R, done: UpstreamCallback<R>): void {
    const flight = newFlight(req, done as UpstreamCallback<UpstreamRequest>);
    req.trace.resolverId = this.resolver.id;
    const now = performance.now();
    if (this.#burstWindows > 0 && now - this.#lastResolveAt >= QUIET_MS && !this.#backoff.backingOff()) this.#c.prepareWhenOpen(this.#burstWindows);
    this.#lastResolveAt = now;
    this.#settleTimer ??= setTimeout(() => this.#settleAfterQuiet(), QUIET_MS).unref();
    const quarantined = this.#quarantine.check(req);
    if (quarantined) {
      this.#settle(flight, quarantined, null);
      return;
    }
    this.#attempt(flight);
  }

  /** The burst is over: the connections it needed, when that differs from the last burst's (the network's memory keeps it). */
  #announceBurst(): void {
    this.#burstTimer = undefined;
    const windows = this.#burstPeak;
    this.#burstPeak = 0;
    if (this.#closed || windows === this.#announcedWindows) return;
    this.#announcedWindows = windows;
    this.emit('burst', { windows });
  }

  /** Lookups have been quiet for QUIET_MS: the connections beyond the steady number are drained (else: checks again then). */
  #settleAfterQuiet(): void {
    this.#settleTimer = undefined;
    if (this.#closed) return;
    const quietFor = performance.now() - this.#lastResolveAt;
    if (quietFor < QUIET_MS) {
      this.#settleTimer = setTimeout(() => this.#settleAfterQuiet(), QUIET_MS - quietFor).unref();
      return;
    }
    this.#c.settle();
  }

  /** Stops taking queries; resolves once every in-flight query is settled and the connections are closed. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopTimers();
    this.#backoff.cancel();
    this.#c.close();
    for (const flight of this.#offline.release()) this.#settle(flight, new PoolClosedError(`resolver ${this.resolver.label} is no longer in use`), null);
    this.#failWaiting(() => new PoolClosedError(`resolver ${this.resolver.label} is no longer in use`));
    const waits = this.#c.list.map(
      (c) => new Promise<void>((resolve) => (c.state === 'closed' ? resolve() : c.once('close', () => resolve()))),
    );
    for (const c of [...this.#c.list]) c.drain();
    await Promise.all(waits);
  }

  destroy(): void {
    this.#closed = true;
    this.#stopTimers();
    for (const flight of this.#offline.release()) this.#settle(flight, new PoolClosedError(`resolver ${this.resolver.label} is no longer in use`), null);
    this.#failWaiting(() => new PoolClosedError(`resolver ${this.resolver.label} is no longer in use`));
    this.#backoff.cancel();
    this.#c.close();
    for (const c of [...this.#c.list]) c.close('local');
  }

  #stopTimers(): void {
    clearTimeout(this.#burstTimer);
    clearTimeout(this.#settleTimer);
    clearTimeout(this.#waitTimer);
  }

  /** Whether `c` may take one more query: below the in-flight cap (the options', or less as the server showed), and below its queries per connection. */
  readonly #takes = (c: PoolConnection): boolean => {
    const l = this.#limits;
    if (c.inFlight >= Math.min(this.options.maxInFlight, l.inFlight ?? Infinity)) return false;
    return l.queriesPerConnection === undefined || c.queriesCarried < l.queriesPerConnection;
  };

  /** `flight` found no room: it waits for some (the pump), up to queryTimeoutMaxMs from when it began to wait. */
  #wait(flight: Flight, err: DotstubError): void {
    const now = performance.now();
    const since = flight.waitingSince || now;
    if (now - since >= this.options.queryTimeoutMaxMs) {
      this.#settle(flight, err, null);
      return;
    }
    this.#waiting.push({ flight, since });
    this.#waitTimer ??= setTimeout(() => this.#expireWaiting(), Math.max(1, since + this.options.queryTimeoutMaxMs - now)).unref();
  }

  /** Fails the queries that waited queryTimeoutMaxMs for room; re-arms for the next. */
  #expireWaiting(): void {
    this.#waitTimer = undefined;
    const now = performance.now();
    const max = this.options.queryTimeoutMaxMs;
    const keep: Waiting[] = [];
    for (const w of this.#waiting) {
      if (w.flight.settled) continue;
      if (now - w.since < max) keep.push(w);
      else this.#settle(w.flight, new InFlightCapError(`every connection to ${this.resolver.label} was full for ${max} ms (${this.#c.list.length} connection(s), at most ${this.#inFlightCap()} queries in flight on each)`), null);
    }
    this.#waiting = keep;
    const next = keep[0];
    if (next) this.#waitTimer = setTimeout(() => this.#expireWaiting(), Math.max(1, next.since + max - now)).unref();
  }

  #inFlightCap(): number {
    return Math.min(this.options.maxInFlight, this.#limits.inFlight ?? Infinity);
  }

  #failWaiting(err: () => DotstubError): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const w of waiting) this.#settle(w.flight, err(), null);
  }

  /** Tries the waiting queries again soon (once per turn of the event loop, however many answers came). */
  #pumpSoon(): void {
    if (this.#pumpQueued || this.#waiting.length === 0 || this.#closed) return;
    this.#pumpQueued = true;
    setImmediate(() => {
      this.#pumpQueued = false;
      this.#pump();
    });
  }

  /** Sends the waiting queries, oldest first, while there is room; one that finds none goes back to wait, and the rest with it. */
  #pump(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    let i = 0;
    for (; i < waiting.length; i++) {
      const w = waiting[i] as Waiting;
      if (w.flight.settled) continue;
      w.flight.waitingSince = w.since;
      this.#attempt(w.flight);
      if (this.#waiting.length > 0) break;
    }
    this.#waiting.push(...waiting.slice(i + 1));
  }

  #attempt(flight: Flight): void {
    dropFirst(flight);
    const trace = flight.req.trace;
    trace.attempts++;
    let sent: SendInfo;
    try {
      // A retry gets its own copy: the first may still sit in a socket's write queue.
      const wire = trace.attempts === 1 ? flight.req.wire : Buffer.from(flight.req.wire);
      sent = this.#send(wire, flight, flight.conn);
    } catch (err) {
      if (isDotstubError(err) && err.code === 'DOTSTUB_IN_FLIGHT_CAP' && !this.#closed) {
        // Full, not failed: the attempt waits for room instead (and is no attempt yet).
        this.counters.inFlightCapHits++;
        trace.attempts--;
        this.#wait(flight, err);
        return;
      }
      if (isDotstubError(err) && !this.#closed && this.#offline.park(flight, err)) return;
      this.#settle(flight, isDotstubError(err) ? err : new PoolClosedError(String(err)), null);
      return;
    }
    flight.conn = sent.connection;
    flight.upstreamId = sent.upstreamId;
    this.#window.sent(sent.connection, sent.depth);
    this.#c.sentOn(sent.connection, sent.depth);
    const perConnection = this.#limits.queriesPerConnection;
    // Its last query before the server closes it: it takes no more, and a new one may open beside it.
    if (perConnection !== undefined && sent.connection.queriesCarried >= perConnection && sent.connection.state === 'open') sent.connection.drain();
    trace.connectionId = sent.connection.id;
    trace.reused = sent.reused;
    trace.depth = sent.depth;
    trace.sentAt = performance.now();
    trace.writtenAt = 0;
    flight.armedAt = trace.sentAt;
    const timeout = this.#rtt.timeoutMs();
    flight.deadlineAt = trace.sentAt + timeout;
    // Sent again at most once: a retry after a hedge waits out its deadline.
    const hedge = trace.hedge === null && this.options.hedge !== false ? hedgeAfterMs(this.#rtt, sent.connection.ackEvidence) : Infinity;
    flight.hedgeAt = hedge < timeout ? trace.sentAt + hedge : 0;
    this.#deadlines.arm(flight, flight.hedgeAt || flight.deadlineAt);
  }

  /**
   * Sends where window.ts picks, opening extras for a burst; with no
   * connection to take it, opens one (a race). Throws InFlightCapError when
   * every connection is full, the connect error while the resolver is
   * unreachable, PoolClosedError after close(). `avoid` is skipped when
   * another connection can take the query (retries).
   */
  #send(wire: Buffer, flight: Flight, avoid: PoolConnection | undefined): SendInfo {
    if (this.#closed) throw new PoolClosedError(`resolver ${this.resolver.label} is no longer in use`);
    const picked = pick(this.#c.list, avoid, this.#window.queries(), this.#takes);
    let best = picked.conn;
    if (best && picked.burstWindows > 0) {
      this.#burstWindows = picked.burstWindows;
      this.#c.openForBurst(best, picked.burstWindows);
      // Its windows grow query by query as the burst fills them: what it needed is said once, when it is over.
      this.#burstPeak = Math.max(this.#burstPeak, picked.burstWindows);
      this.#burstTimer ??= setTimeout(() => this.#announceBurst(), QUIET_MS).unref();
    }
    if (!best) {
      if (this.#c.liveCount() < this.#c.keptSize() && this.#c.roomForAnother()) {
        // Backing off after failed connects: a query may still start one attempt
        // (one at a time, at most once a second), so the first query after the
        // path comes back is answered instead of waiting out the back-off.
        const lastError = this.#backoff.lastError;
        if (this.#backoff.backingOff() && lastError && !this.#queryMayConnect()) throw lastError;
        best = this.#c.open();
      } else if (avoid?.available && this.#takes(avoid)) {
        best = avoid;
      } else {
        // Every connection is full: one more for the burst, if the caps allow; the query waits for it (or for room).
        const answering = this.#c.list.find((c) => c.state === 'open');
        if (answering && this.#c.roomForAnother() && !this.#backoff.backingOff()) {
          this.#c.openForBurst(answering, this.#c.list.length + 1);
          best = pick(this.#c.list, avoid, this.#window.queries(), this.#takes).conn;
        }
      }
    }
    if (!best) {
      throw new InFlightCapError(
        `all ${this.#c.list.length} connection(s) to ${this.resolver.label} have ${this.#inFlightCap()} queries in flight`,
      );
    }
    const info = best.send(wire, flight.req.question, this.#onAnswer, flight);
    if (!info) throw new InFlightCapError(`connection ${best.id} cannot take more queries`);
    return info;
  }

  /** The one handler for every connection's results; the flight is the context. */
  readonly #onAnswer: AnswerHandler<Flight> = (flight, conn, upstreamId, err, answer, writtenAt) => {
    if (flight.settled) return;
    if (flight.conn !== conn || flight.upstreamId !== upstreamId) {
      const earlier = flight.first;
      // A late result for an attempt that was already given up on.
      if (earlier?.conn !== conn || earlier.upstreamId !== upstreamId) return;
      flight.first = undefined;
      // The first attempt failed (its connection retired or died): the second carries on.
      if (err || !answer) return;
      // It answered before the copy after all: the copy is taken back, its answer will be dropped by ID.
      this.counters.hedgesUnneeded++;
      flight.conn?.cancel(flight.upstreamId);
      resumeFirst(flight, earlier);
    }
    this.#deadlines.clear(flight);
    const trace = flight.req.trace;
    trace.writtenAt = writtenAt || trace.sentAt;
    const first = flight.first;
    flight.first = undefined;
    if ((err || !answer) && first && !this.#closed) {
      // The copy failed while the first attempt still listens: wait on it again, one more RTO.
      resumeFirst(flight, first);
      this.#deadlines.arm(flight, performance.now() + this.#rtt.rtoMs());
      return;
    }
    // The copy is answering: whether the first connection's peer acknowledged anything is asked before its attempt is taken back.
    const firstPeer = first && !err && answer && stayedSilent(first) ? first.conn.peerSilence(hedgeAfterMs(this.#rtt, first.conn.ackEvidence)) : undefined;
    if (first) first.conn.cancel(first.upstreamId);
    if (err || !answer) {
      if (this.#c.losers.has(conn) && !this.#closed) {
        // Held by an address that lost the race: never sent, so not this query's retry.
        flight.collateral++;
        this.#attempt(flight);
        return;
      }
      const verdict = err ? this.#quarantine.judge(conn, flight.req, flight.collateral) : undefined;
      if (verdict?.kind === 'quarantined') {
        this.#settle(flight, verdict.error, null);
        return;
      }
      if (verdict?.kind === 'collateral' && !this.#closed) {
        flight.collateral++;
        this.counters.retries++;
        this.#attempt(flight);
        return;
      }
      this.#onError(flight, err ?? new PoolClosedError('connection gave no answer'));
      return;
    }
    const now = performance.now();
    this.#rtt.observe(now - trace.writtenAt);
    this.#window.observe(answer.raw.length);
    this.#window.answered(conn, now, this.#rtt.srttMs ?? 0);
    if (trace.reused === false && conn.handshake) trace.handshake = conn.handshake.resumed ? 'resumed' : 'full';
    // Opportunistic mode's unverified TLS: its "validated" is no one's word (upstream-answer.ts).
    this.#settle(flight, null, conn.handshake?.verified === true ? answer : withoutAuthenticData(answer));
    // The copy answered, the first connection read nothing meanwhile and its peer acknowledged nothing: the path is gone; its other queries are retried.
    if (first && firstPeer) {
      void firstPeer.then((verdict) => {
        if (verdict !== 'silent' || first.conn.state === 'closed' || !stayedSilent(first)) return;
        this.#c.extras.delete(conn);
        first.conn.close('unresponsive');
      });
    }
  };

  /**
   * The hedge check of a flight came due (hedge.ts): sends it again when its
   * connection has been silent long enough, or checks again when it may
   * still be before its deadline. False: nothing to do, arm the deadline.
   */
  #hedgeCheck(flight: Flight, conn: PoolConnection, dueAt: number): boolean {
    const since = silentSince(conn, conn.writtenAt(flight.upstreamId));
    if (since === 0) return false;
    const now = performance.now();
    const wait = hedgeAfterMs(this.#rtt, conn.ackEvidence);
    if (now - since < wait - 1 || ownStall(dueAt, now)) {
      // Answers came meanwhile: the silence, if any, began at the last one.
      // Or this process didn't run: the silence may be ours; give the connection one more wait.
      const at = Math.max(since, ownStall(dueAt, now) ? now : 0) + wait;
      if (at >= flight.deadlineAt) return false;
      flight.hedgeAt = at;
      this.#deadlines.arm(flight, flight.hedgeAt);
      return true;
    }
    // Nothing read for an ACK wait: sent again only if the peer acknowledged nothing of it either (a resolver that is thinking did).
    // The deadline stays armed meanwhile; the answer, if it is 'silent', moves it.
    this.#deadlines.arm(flight, flight.deadlineAt);
    const id = flight.upstreamId;
    void conn.peerSilence(wait).then((verdict) => {
      if (verdict !== 'silent' || flight.settled || flight.conn !== conn || flight.upstreamId !== id || flight.first) return;
      this.#hedge(flight, conn, since, performance.now());
    });
    return true;
  }

  /** Sends the flight again on another connection (an idle one, else a new one to the same address); keeps the first attempt listening. */
  #hedge(flight: Flight, first: PoolConnection, since: number, now: number): boolean {
    if (this.#closed || this.#backoff.backingOff()) return false;
    let to = pick(this.#c.list, first, this.#window.queries(), this.#takes).conn;
    // The silent one is still there: a new one beside it stays within the caps.
    if (!to && (this.#c.roomForAnother() || this.#c.list.length < 2)) {
      to = this.#c.race([first.address]).start();
      // Beyond the kept size it is an extra, until it replaces the silent one.
      if (to && this.#c.liveCount() > this.#c.keptSize()) this.#c.extras.add(to);
    }
    const sent = to?.send(Buffer.from(flight.req.wire), flight.req.question, this.#onAnswer, flight);
    if (!sent) return false;
    sentAgain(flight, sent, since, now);
    this.counters.hedges++;
    flight.armedAt = now;
    flight.deadlineAt = now + this.#rtt.timeoutMs();
    this.#deadlines.arm(flight, flight.deadlineAt);
    return true;
  }

  #onTimeout(flight: Flight): void {
    const conn = flight.conn;
    if (flight.settled || !conn) return;
    if (flight.hedgeAt !== 0) {
      const dueAt = flight.hedgeAt;
      flight.hedgeAt = 0;
      if (!this.#hedgeCheck(flight, conn, dueAt)) this.#deadlines.arm(flight, flight.deadlineAt);
      return;
    }
    const writtenAt = conn.writtenAt(flight.upstreamId);
    const now = performance.now();
    const action = deadlinePassed(flight, conn, writtenAt, now, this.options.queryTimeoutMaxMs, this.#rtt.rtoMs());
    if (action.kind === 'wait') {
      flight.armedAt = now;
      this.#deadlines.arm(flight, action.until);
      return;
    }
    if (action.kind === 'silent' && writtenAt !== 0 && (conn.state === 'open' || conn.state === 'draining')) {
      // No answer since it was written: a dead path, or a resolver still looking the name up? Its peer's TCP says.
      const id = flight.upstreamId;
      void conn.peerSilence(Math.min(now - writtenAt, hedgeAfterMs(this.#rtt, conn.ackEvidence))).then((verdict) => {
        if (flight.settled || flight.conn !== conn || flight.upstreamId !== id) return;
        const at = performance.now();
        if (verdict === 'silent') {
          this.#timedOut(flight, conn, writtenAt, action);
          return;
        }
        // It has the query and is working on it: wait one more RTO, up to the attempt's upper bound, then give up without a retry.
        const limit = flight.req.trace.sentAt + this.options.queryTimeoutMaxMs;
        if (at + 1 < limit) {
          flight.armedAt = at;
          this.#deadlines.arm(flight, Math.min(limit, at + this.#rtt.rtoMs()));
          return;
        }
        this.#timedOut(flight, conn, writtenAt, { kind: 'give-up' }, 'though its TCP acknowledged the query');
      });
      return;
    }
    this.#timedOut(flight, conn, writtenAt, action);
  }

  /** The attempt's deadline passed for good (`action`): a timeout, given up or retried, its connection closed when dead. */
  #timedOut(flight: Flight, conn: PoolConnection, writtenAt: number, action: Exclude<DeadlineAction, { kind: 'wait' }>, alive = 'though it answered other queries meanwhile'): void {
    this.counters.timeouts++;
    flight.req.trace.writtenAt = writtenAt;
    conn.cancel(flight.upstreamId);
    // The copy's deadline passed: the first attempt, silent for longer, goes with it.
    dropFirst(flight);
    if (action.kind === 'give-up') {
      this.#settle(flight, new QueryTimeoutError(`no answer from ${conn.address} within ${this.options.queryTimeoutMaxMs} ms, ${alive}`), null);
      return;
    }
    if (action.closeConnection) conn.close('unresponsive');
    this.#onError(flight, new QueryTimeoutError(`no answer from ${conn.address} within the deadline`));
  }

  #onError(flight: Flight, err: DotstubError): void {
    if (flight.settled || (!this.#closed && this.#offline.park(flight, err))) return;
    if (ownRetryLeft(flight, err) && !this.#closed) {
      this.counters.retries++;
      this.#attempt(flight);
      return;
    }
    this.#settle(flight, err, null);
  }

  #settle(flight: Flight, err: DotstubError | null, answer: UpstreamAnswer | null): void {
    this.#deadlines.clear(flight);
    dropFirst(flight);
    settle(flight, err, answer);
    // Its place on a connection is free: a query waiting for room may take it.
    this.#pumpSoon();
  }

  #queryMayConnect(): boolean {
    return this.#selfRetry && this.#c.liveCount() === 0 && this.#backoff.untilNextAttempt() <= 0;
  }
}
