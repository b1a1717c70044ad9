/**
 * A pool of connections to one resolver, implementing the Upstream
 * contract. Policy only: what a connection is comes from the factory (DoT
 * today, DoH sessions next), so warm-up, pick, back-off, address rotation
 * and resumption tickets are tested with fake connections.
 *
 *   resolve(req) ─► pick: the first open connection whose window has room ─► send
 *        │          (none: the least-loaded, and open extra ones for bursts)
 *        │                                                               │
 *        │   deadline (SRTT + 2 × RTO, 25 ms slots) ◄── armed ───────────┘
 *        ▼
 *   answer ─► RTT sample ─► done(req, null, answer)
 *   deadline, connection still delivering answers ─► wait one more RTO (up to queryTimeoutMaxMs), never a retry
 *   closed / deadline on a silent connection ─► retry once on another connection ─► … ─► done(req, error)
 *   unreachable (backing off) / every connection full / closed pool ─► done(req, error) at once
 *
 * Opening a connection is a race across the resolver's address families
 * (Happy Eyeballs, RFC 8305 §5; issue 8): IPv6 first, IPv4 `attemptDelayMs`
 * later or at once when IPv6 fails, both in flight; the first to
 * authenticate wins and the others close. Queries held by a loser (or by
 * an address that failed while another is still trying) are re-sent there
 * without using up their retry. The race fails only
 * when every address failed: one 'connect-failed', carrying each address's
 * outcome and timing.
 *
 * Bursts (issue 12): after an idle moment a server may send only TCP's
 * initial window (ten segments, ~13 KB of answers) before it hears back, so a page's
 * worth of padded answers (468-octet blocks) arrives over three or four
 * round trips on one connection. A connection is given only as many
 * queries as its answers fit in that window (measured answer sizes); the
 * rest go to the next open connection. When every open connection is full,
 * the pool opens up to `burstConnections` extra ones for the bursts this
 * machine makes. They are not re-opened after the server or the idle timer
 * closes them, so they cost handshakes only while bursts keep needing them.
 * An extra that is still connecting takes no queries while an open
 * connection exists: its handshake takes longer than the open one's next
 * round trips.
 *
 * Invariants:
 * - At most `size` + `burstConnections` connections exist at once
 *   (connecting or open), `size` outside bursts; draining ones (server asked
 *   to close) don't count against new work.
 * - A ticket is kept only from an authenticated connection, so resumption
 *   never bypasses authentication.
 * - While connecting fails, queries fail at once with the reason (no pile-up
 *   behind a dead network); a timer keeps trying so the pool recovers by itself.
 * - Every request gets exactly one callback (`Flight.settled` guards it).
 * - One query must not take others down with it (issue: meta types closed the
 *   shared connection, and every retry with it). When a connection dies with
 *   queries in flight, the oldest unanswered one is the prime suspect and
 *   uses up its retry; the others are collateral and are retried without
 *   using theirs (at most MAX_COLLATERAL_RETRIES times). A question that is
 *   the suspect of two deaths within KILL_WINDOW_MS is quarantined: it gets
 *   a typed error at once, without being sent, for QUARANTINE_MS.
 */
import { EventEmitter } from 'node:events';
import type { ResolverSpec } from '../config/resolvers.js';
import { InFlightCapError, isDotstubError, PoolClosedError, QuarantinedError, QueryTimeoutError, type DotstubError } from '../errors.js';
import type { AnswerHandler, CloseInfo, ConnectionFactory, HandshakeInfo, PoolConnection, SendInfo } from './connection/contract.js';
import { DeadlineSlots } from './deadlines.js';
import { validatePoolOptions, type PoolOptions } from './pool/options.js';
import { newUpstreamCounters, type UpstreamCounters } from './counters.js';
import { RttEstimator } from './rtt.js';
import type { Upstream, UpstreamCallback, UpstreamRequest } from './upstream.js';

/** What "Retry now" did: started an attempt (now, or within the second), or why not. */
export type RetryOutcome = 'started' | 'scheduled' | 'connected' | 'connecting' | 'closed';

/** One address's part in a connection race: when it was tried and how it ended. */
export interface AddressAttempt {
  readonly address: string;
  /** ms after the race began that this address was tried. */
  readonly startMs: number;
  /** ms from this address's start to its outcome; null while still connecting when the race ended. */
  readonly afterMs: number | null;
  readonly outcome: 'won' | 'failed' | 'abandoned';
  readonly error: DotstubError | undefined;
}

/** A connection race that ended with a winner after more than one address was tried. */
export interface RaceResult {
  readonly winner: string;
  readonly attempts: readonly AddressAttempt[];
  /** ms from the race's start to the winner's authentication. */
  readonly afterMs: number;
}

interface Race {
  readonly startedAt: number;
  /** Addresses not tried yet, in order. */
  readonly pending: string[];
  /** Per racer: the address and when it started (ms after startedAt). */
  readonly racers: Map<PoolConnection, { readonly address: string; readonly startMs: number }>;
  readonly attempts: AddressAttempt[];
  timer: NodeJS.Timeout | undefined;
  done: boolean;
}

interface ConnectFailure {
  readonly resolverId: string;
  readonly address: string;
  readonly error: DotstubError;
  readonly consecutive: number;
  readonly retryInMs: number;
  /** How long the attempt took to fail, ms (the whole race, when more than one address was tried). */
  readonly afterMs: number;
  /** Each address tried and how it ended, in the order they started. */
  readonly attempts: readonly AddressAttempt[];
}

export interface PoolEvents {
  open: [PoolConnection, HandshakeInfo];
  close: [PoolConnection, CloseInfo];
  'connect-failed': [ConnectFailure];
  /** A race across addresses was won after another address was tried too (the losers and why). */
  race: [RaceResult];
  keepalive: [PoolConnection, number];
}

export interface PoolInit {
  /** The protocol, for the readable name: `DoT` gives `DoT(quad9)`. */
  readonly protocol: string;
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
}

/** One request's travel through the pool: the context of the shared answer handler. */
interface Flight {
  readonly req: UpstreamRequest;
  readonly done: UpstreamCallback<UpstreamRequest>;
  conn: PoolConnection | undefined;
  upstreamId: number;
  deadlineKey: number;
  /** performance.now() when the current deadline period began (the send, or the last extension). */
  armedAt: number;
  settled: boolean;
  /** Retries after deaths another query was blamed for; they don't use up the query's own retry. */
  collateral: number;
}

const MAX_COLLATERAL_RETRIES = 3;
/** While backing off, queries may start a connection attempt this often (issue 8: recovery in seconds). */
const QUERY_CONNECT_INTERVAL_MS = 1_000;
const KILL_WINDOW_MS = 30_000;
/** Connections that die this close together died of the same cause (a reset path, a restarting server). */
const TOGETHER_MS = 1_000;
const QUARANTINE_MS = 60_000;
/** Bound on remembered questions (kills and quarantine). */
const MAX_SUSPECTS = 1024;
/** Closes that say the server (or the path) ended the connection, not us. */
const ABNORMAL = new Set(['reset', 'server-close', 'desync']);

function questionKey(req: UpstreamRequest): string {
  const k = req.question.key;
  return `${k.name.toLowerCase()}/${k.type}/${k.class}`;
}

const RETRIABLE = new Set(['DOTSTUB_CONNECTION_CLOSED', 'DOTSTUB_QUERY_TIMEOUT']);

/**
 * What a server sends in its first round trip after an idle moment: TCP's
 * initial window (RFC 6928: ten segments). Measured from unbound as Debian
 * ships it (Nagle on): a first small segment with one answer, then full
 * ones — about 13,500 octets; the last partial segment of a burst waits for
 * an ACK whatever the client does, so a little under that.
 */
const INITIAL_WINDOW_BYTES = 10 * 1_300;
/** Per answer beyond its DNS octets: DoT's length prefix and a TLS record's header and tag (HTTP/2's frame headers are in the same range). */
const ANSWER_OVERHEAD_BYTES = 2 + 22;
/** Until answers are seen, assume they are padded (RFC 8467's 468-octet blocks): the smaller budget. */
const FIRST_ANSWER_BYTES_GUESS = 468;
/** A window's budget is never below this many queries (huge answers still pipeline). */
const MIN_WINDOW_QUERIES = 4;

let connectionCounter = 0;

export class Pool extends EventEmitter<PoolEvents> implements Upstream {
  readonly name: string;
  readonly resolver: ResolverSpec;
  readonly options: PoolOptions;
  readonly counters: UpstreamCounters;
  readonly #factory: ConnectionFactory;
  readonly #selfRetry: boolean;
  /** Live connections (connecting, open or draining); closed ones are removed at once. */
  readonly #connections: PoolConnection[] = [];
  /** Latest session ticket per address. */
  readonly #tickets = new Map<string, Buffer>();
  readonly #rtt: RttEstimator;
  readonly #deadlines = new DeadlineSlots<Flight>((f) => this.#onTimeout(f));
  #addressIndex = 0;
  /** The connection race under way, if any. */
  #race: Race | undefined;
  /** Connections closed because another address won: their held queries are re-sent without using a retry. */
  readonly #losers = new WeakSet<PoolConnection>();
  #failures = 0;
  #retryAt = 0;
  /** Date.now() when the last connection attempt started. */
  #lastAttemptAt = 0;
  #lastError: DotstubError | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;
  /** Connections that died abnormally with queries in flight: the first failed query handed back (the oldest) is blamed, the rest are collateral. */
  readonly #deaths = new WeakMap<PoolConnection, 'unblamed' | 'blamed' | 'together'>();
  /** Question → when it was blamed for a connection's death (Date.now()). */
  readonly #kills = new Map<string, number>();
  /** Question → quarantined until (Date.now()). */
  readonly #quarantine = new Map<string, number>();
  /** performance.now() of the last abnormal close of an open connection. */
  #lastDeathAt = -Infinity;
  /** performance.now() when each connection came up (finer than Date.now(): the order of a death and an open within one millisecond matters). */
  readonly #openedAt = new WeakMap<PoolConnection, number>();
  /** Connections opened for a burst: not re-opened, and their failure to connect is no resolver failure. */
  readonly #extras = new WeakSet<PoolConnection>();
  /** Smoothed size of an answer in octets (1/16 gain), for the window budget. */
  #answerBytes = FIRST_ANSWER_BYTES_GUESS;

  constructor(init: PoolInit) {
    super();
    if (init.resolver.addresses.length === 0) throw new RangeError(`resolver ${init.resolver.label} has no addresses`);
    validatePoolOptions(init.options);
    this.resolver = init.resolver;
    this.options = init.options;
    this.#factory = init.factory;
    this.#selfRetry = init.selfRetry ?? true;
    this.counters = init.counters ?? newUpstreamCounters();
    this.name = `${init.protocol}(${init.resolver.id})`;
    this.#rtt = new RttEstimator(init.options.queryTimeoutMinMs, init.options.queryTimeoutMaxMs);
  }

  /**
   * The network changed (new route or address, resume from sleep): the
   * connections can't be trusted to have survived, and the back-off measured
   * the old network. Close them (their queries are retried on new ones),
   * forget the back-off, and connect again at once.
   */
  networkChanged(): void {
    if (this.#closed) return;
    this.#failures = 0;
    this.#retryAt = 0;
    this.#lastError = undefined;
    clearTimeout(this.#retryTimer);
    for (const c of [...this.#connections]) c.close('network-change');
    if (this.#selfRetry) this.warm();
  }

  /**
   * The user asked to try again now ("Retry now"): the attempt a query
   * arriving with no connection up makes, under the same limits (only while
   * no connection is connecting or open, at most one a second: sooner than
   * that, it starts when the second is up), whatever the back-off says.
   */
  retryNow(): RetryOutcome {
    if (this.#closed) return 'closed';
    if (this.#connections.some((c) => c.state === 'open')) return 'connected';
    if (this.#liveCount() > 0) return 'connecting';
    const wait = this.#lastAttemptAt + QUERY_CONNECT_INTERVAL_MS - Date.now();
    if (wait <= 0) {
      this.#open();
      return 'started';
    }
    clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => {
      if (!this.#closed && this.#liveCount() === 0) this.#open();
    }, wait);
    this.#retryTimer.unref();
    return 'scheduled';
  }

  /** Opens the pool's connections now instead of on the first query. */
  warm(): void {
    while (!this.#closed && this.#connections.length < this.options.size && !this.#inBackoff()) this.#open();
  }

  get connections(): readonly PoolConnection[] {
    return this.#connections;
  }

  /** Whether `conn` was opened for a burst (it closes when idle and isn't re-opened). */
  isBurstConnection(conn: PoolConnection): boolean {
    return this.#extras.has(conn);
  }

  resolve<R extends UpstreamRequest>(req: R, done: UpstreamCallback<R>): void {
    const flight: Flight = {
      req,
      done: done as UpstreamCallback<UpstreamRequest>,
      conn: undefined,
      upstreamId: -1,
      deadlineKey: -1,
      armedAt: 0,
      settled: false,
      collateral: 0,
    };
    req.trace.resolverId = this.resolver.id;
    if (this.#quarantine.size > 0) {
      const key = questionKey(req);
      const until = this.#quarantine.get(key);
      if (until !== undefined && until > Date.now()) {
        this.#settle(
          flight,
          new QuarantinedError(`${this.resolver.label} closed the connection over ${req.question.key.name} ${req.question.key.type} twice; not sent again for ${Math.ceil((until - Date.now()) / 1000)} s`),
          null,
        );
        return;
      }
      if (until !== undefined) this.#quarantine.delete(key);
    }
    this.#attempt(flight);
  }

  /** Stops taking queries; resolves once every in-flight query is settled and the connections are closed. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#race?.timer);
    const waits = this.#connections.map(
      (c) => new Promise<void>((resolve) => (c.state === 'closed' ? resolve() : c.once('close', () => resolve()))),
    );
    for (const c of [...this.#connections]) c.drain();
    await Promise.all(waits);
  }

  destroy(): void {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#race?.timer);
    for (const c of [...this.#connections]) c.close('local');
  }

  #attempt(flight: Flight): void {
    const trace = flight.req.trace;
    trace.attempts++;
    let sent: SendInfo;
    try {
      // A retry gets its own copy: the first may still sit in a socket's write queue.
      const wire = trace.attempts === 1 ? flight.req.wire : Buffer.from(flight.req.wire);
      sent = this.#send(wire, flight, flight.conn);
    } catch (err) {
      if (isDotstubError(err) && err.code === 'DOTSTUB_IN_FLIGHT_CAP') this.counters.inFlightCapHits++;
      this.#settle(flight, isDotstubError(err) ? err : new PoolClosedError(String(err)), null);
      return;
    }
    flight.conn = sent.connection;
    flight.upstreamId = sent.upstreamId;
    trace.connectionId = sent.connection.id;
    trace.reused = sent.reused;
    trace.depth = sent.depth;
    trace.sentAt = performance.now();
    trace.writtenAt = 0;
    flight.armedAt = trace.sentAt;
    this.#deadlines.arm(flight, trace.sentAt + this.#rtt.timeoutMs());
  }

  /**
   * Sends on the first open connection (oldest first) whose initial window
   * has room for this query's answer; when every open one is full, on the
   * least-loaded of them, and extra connections are opened for the burst.
   * With no open connection, the query is held by one that is connecting
   * (or opens one). Throws InFlightCapError when every connection is full,
   * the connect error while the resolver is unreachable, PoolClosedError
   * after close(). `avoid` is skipped when another connection can take the
   * query (retries).
   */
  #send(wire: Buffer, flight: Flight, avoid: PoolConnection | undefined): SendInfo {
    if (this.#closed) throw new PoolClosedError(`resolver ${this.resolver.label} is no longer in use`);
    let best: PoolConnection | undefined;
    let leastLoaded: PoolConnection | undefined;
    let connecting: PoolConnection | undefined;
    let openInFlight = 0;
    const window = windowQueries(this.#answerBytes);
    for (const c of this.#connections) {
      if (c.state === 'open') openInFlight += c.inFlight;
      if (!c.available || c === avoid) continue;
      if (c.state !== 'open') {
        if (!connecting || c.inFlight < connecting.inFlight) connecting = c;
      } else if (c.inFlight < window) {
        best ??= c;
      } else if (!leastLoaded || c.inFlight < leastLoaded.inFlight) {
        leastLoaded = c;
      }
    }
    if (!best && leastLoaded) {
      best = leastLoaded;
      this.#openForBurst(best, Math.ceil((openInFlight + 1) / window));
    }
    if (!best) best = connecting;
    if (!best) {
      if (this.#liveCount() < this.options.size) {
        // Backing off after failed connects: a query may still start one attempt
        // (one at a time, at most once a second), so the first query after the
        // path comes back is answered instead of waiting out the back-off.
        if (this.#inBackoff() && this.#lastError && !this.#queryMayConnect()) throw this.#lastError;
        best = this.#open();
      } else if (avoid?.available) {
        best = avoid;
      }
    }
    if (!best) {
      throw new InFlightCapError(
        `all ${this.options.size} connection(s) to ${this.resolver.label} have ${this.options.maxInFlight} queries in flight`,
      );
    }
    const info = best.send(wire, flight.req.question, this.#onAnswer, flight);
    if (!info) throw new InFlightCapError(`connection ${best.id} cannot take more queries`);
    return info;
  }

  /**
   * Every open connection's window is full: open connections up to the
   * `windows` the queries in flight need (one window each), up to `size` kept plus
   * `burstConnections` extra, to the address that is answering. They take
   * queries once open: the rest of this burst, and the next ones.
   */
  #openForBurst(answering: PoolConnection, windows: number): void {
    const want = Math.min(this.options.size + (this.options.burstConnections ?? 0), windows);
    // Connections already on their way count: one burst opens each extra once.
    for (let n = this.#liveCount(); n < want; n++) {
      const kept = n < this.options.size;
      const conn = this.#openAddress(newRace([]), answering.address);
      if (!kept) {
        this.#extras.add(conn);
        this.counters.burstConnections++;
      }
    }
  }

  /** The one handler for every connection's results; the flight is the context. */
  readonly #onAnswer: AnswerHandler<Flight> = (flight, conn, upstreamId, err, answer, writtenAt) => {
    // A late result for an attempt that was already given up on.
    if (flight.settled || flight.conn !== conn || flight.upstreamId !== upstreamId) return;
    this.#deadlines.clear(flight);
    const trace = flight.req.trace;
    trace.writtenAt = writtenAt || trace.sentAt;
    if (err || !answer) {
      if (this.#losers.has(conn) && !this.#closed) {
        // Held by an address that lost the race: never sent, so not this query's retry.
        flight.collateral++;
        this.#attempt(flight);
        return;
      }
      const death = err ? this.#deaths.get(conn) : undefined;
      if (death === 'unblamed') {
        this.#deaths.set(conn, 'blamed');
        if (this.#blame(flight.req)) {
          this.#settle(flight, new QuarantinedError(`${this.resolver.label} closed the connection over ${flight.req.question.key.name} ${flight.req.question.key.type} twice; not sent again for ${QUARANTINE_MS / 1000} s`), null);
          return;
        }
      } else if (((death === 'blamed' && flight.collateral < MAX_COLLATERAL_RETRIES) || death === 'together') && !this.#closed) {
        // Another query was blamed for this death: retry without using up this query's own retry.
        flight.collateral++;
        this.counters.retries++;
        this.#attempt(flight);
        return;
      }
      this.#onError(flight, err ?? new PoolClosedError('connection gave no answer'));
      return;
    }
    this.#rtt.observe(performance.now() - trace.writtenAt);
    this.#observeAnswerSize(answer.raw.length);
    if (trace.reused === false && conn.handshake) trace.handshake = conn.handshake.resumed ? 'resumed' : 'full';
    this.#settle(flight, null, answer);
  };

  #observeAnswerSize(bytes: number): void {
    this.#answerBytes += (bytes - this.#answerBytes) / 16;
  }

  #onTimeout(flight: Flight): void {
    const conn = flight.conn;
    if (flight.settled || !conn) return;
    const writtenAt = conn.writtenAt(flight.upstreamId);
    if (writtenAt !== 0 && conn.lastAnswerAt > Math.max(writtenAt, flight.armedAt) && conn.state !== 'closed') {
      // The connection answered others during this wait: it is alive, and this
      // query is behind TCP's recovery of a lost segment or a slow name at the
      // resolver. A retry would queue behind the same bytes (or cost a new
      // handshake), so wait another RTO, up to the attempt's upper bound.
      const now = performance.now();
      const limit = flight.req.trace.sentAt + this.options.queryTimeoutMaxMs;
      if (now + 1 < limit) {
        flight.armedAt = now;
        this.#deadlines.arm(flight, Math.min(limit, now + this.#rtt.rtoMs()));
        return;
      }
      this.counters.timeouts++;
      flight.req.trace.writtenAt = writtenAt;
      conn.cancel(flight.upstreamId);
      this.#settle(flight, new QueryTimeoutError(`no answer from ${conn.address} within ${this.options.queryTimeoutMaxMs} ms, though it answered other queries meanwhile`), null);
      return;
    }
    this.counters.timeouts++;
    flight.req.trace.writtenAt = writtenAt;
    conn.cancel(flight.upstreamId);
    // No answer at all came back since this query was written: the connection
    // is dead (black-holed path, silent middlebox) or lost its framing (bytes
    // that are never a whole answer). Close it so the others move on.
    if (writtenAt !== 0 && conn.lastAnswerAt < writtenAt && conn.state === 'open') conn.close('unresponsive');
    this.#onError(flight, new QueryTimeoutError(`no answer from ${conn.address} within the deadline`));
  }

  #onError(flight: Flight, err: DotstubError): void {
    if (flight.settled) return;
    if (flight.req.trace.attempts - flight.collateral < 2 && RETRIABLE.has(err.code) && !this.#closed) {
      this.counters.retries++;
      this.#attempt(flight);
      return;
    }
    this.#settle(flight, err, null);
  }

  #settle(flight: Flight, err: DotstubError | null, answer: Parameters<UpstreamCallback<UpstreamRequest>>[2]): void {
    if (flight.settled) return;
    flight.settled = true;
    this.#deadlines.clear(flight);
    if (err && flight.conn?.handshake === undefined) {
      // Held by a connection that never came up: no resolver was reached, so
      // the query names none (the log says why instead of "connection #3").
      const trace = flight.req.trace;
      trace.connectionId = null;
      trace.reused = null;
      trace.depth = 0;
    }
    flight.done(flight.req, err, answer);
  }

  /** Records that `req` was the prime suspect of a connection's death; true when that makes it quarantined. */
  #blame(req: UpstreamRequest): boolean {
    const key = questionKey(req);
    const now = Date.now();
    const before = this.#kills.get(key);
    this.#kills.delete(key);
    if (before !== undefined && now - before < KILL_WINDOW_MS) {
      if (this.#quarantine.size >= MAX_SUSPECTS) this.#quarantine.delete(this.#quarantine.keys().next().value as string);
      this.#quarantine.set(key, now + QUARANTINE_MS);
      return true;
    }
    if (this.#kills.size >= MAX_SUSPECTS) this.#kills.delete(this.#kills.keys().next().value as string);
    this.#kills.set(key, now);
    return false;
  }

  #liveCount(): number {
    let n = 0;
    for (const c of this.#connections) if (c.state === 'connecting' || c.state === 'open') n++;
    return n;
  }

  #queryMayConnect(): boolean {
    return this.#selfRetry && this.#liveCount() === 0 && Date.now() - this.#lastAttemptAt >= QUERY_CONNECT_INTERVAL_MS;
  }

  #inBackoff(): boolean {
    return this.#failures > 0 && Date.now() < this.#retryAt;
  }

  /**
   * The addresses one race tries: IPv6 first, then IPv4 (RFC 8305 §4 would
   * interleave more; one per family keeps the decision within the connect
   * timer plus one delay). A failed race moves on to each family's next address.
   */
  #raceAddresses(): string[] {
    const all = this.resolver.addresses;
    const v6 = all.filter((a) => a.includes(':'));
    const v4 = all.filter((a) => !a.includes(':'));
    const i = this.#addressIndex;
    if (v6.length === 0 || v4.length === 0) return [all[i % all.length] as string];
    return [v6[i % v6.length] as string, v4[i % v4.length] as string];
  }

  /** Starts a connection race; returns its first racer (queries sent now are held there until one authenticates). */
  #open(): PoolConnection {
    this.#lastAttemptAt = Date.now();
    const [first, ...rest] = this.#raceAddresses();
    const race = newRace(rest);
    this.#race = race;
    const conn = this.#openAddress(race, first as string);
    this.#armNextRacer(race);
    return conn;
  }

  #armNextRacer(race: Race): void {
    clearTimeout(race.timer);
    race.timer = undefined;
    if (race.pending.length === 0 || race.done) return;
    race.timer = setTimeout(() => {
      race.timer = undefined;
      this.#startNextRacer(race);
    }, this.options.attemptDelayMs ?? 250);
    race.timer.unref();
  }

  #startNextRacer(race: Race): void {
    const next = race.pending.shift();
    if (next === undefined || race.done || this.#closed) return;
    this.#openAddress(race, next);
    this.#armNextRacer(race);
  }

  #openAddress(race: Race, address: string): PoolConnection {
    const conn = this.#factory({ id: ++connectionCounter, address, session: this.#tickets.get(address) });
    race.racers.set(conn, { address, startMs: Date.now() - race.startedAt });
    this.#connections.push(conn);
    const counters = this.counters;
    conn.on('ready', (info) => {
      this.#openedAt.set(conn, performance.now());
      this.#failures = 0;
      this.#lastError = undefined;
      if (info.resumed) counters.handshakesResumed++;
      else counters.handshakesFull++;
      this.#wonRace(race, conn);
      this.emit('open', conn, info);
    });
    conn.on('session', (ticket) => this.#tickets.set(address, ticket));
    conn.on('keepalive', (ms) => this.emit('keepalive', conn, ms));
    conn.on('mismatch', () => counters.mismatches++);
    conn.on('out-of-order', () => counters.outOfOrder++);
    conn.on('bytes', (out, inn) => {
      counters.bytesToResolver += out;
      counters.bytesFromResolver += inn;
    });
    conn.on('close', (info) => this.#onClose(conn, info));
    return conn;
  }

  /** `conn` authenticated first: the others close, their held queries move to it. */
  #wonRace(race: Race, conn: PoolConnection): void {
    if (race.done) return;
    race.done = true;
    clearTimeout(race.timer);
    if (this.#race === race) this.#race = undefined;
    const now = Date.now() - race.startedAt;
    const me = race.racers.get(conn);
    if (me) race.attempts.push({ address: me.address, startMs: me.startMs, afterMs: now - me.startMs, outcome: 'won', error: undefined });
    for (const [other, r] of race.racers) {
      if (other === conn || other.state === 'closed') continue;
      race.attempts.push({ address: r.address, startMs: r.startMs, afterMs: null, outcome: 'abandoned', error: undefined });
      this.#losers.add(other);
      other.close('local');
    }
    race.attempts.sort((a, b) => a.startMs - b.startMs);
    if (race.attempts.length > 1 && me) this.emit('race', { winner: me.address, attempts: race.attempts, afterMs: now });
  }

  #onClose(conn: PoolConnection, info: CloseInfo): void {
    const idx = this.#connections.indexOf(conn);
    if (idx >= 0) this.#connections.splice(idx, 1);
    // The connection's failed queries are handed back after this event, oldest first.
    // A connection that was already up (open, not still connecting) when
    // another died, and dies within TOGETHER_MS of it, died of the same cause
    // (the path reset, the server restarted), not of a query: no one is blamed, and its queries are
    // retried without using up a try (else a query retried onto a connection
    // dying in the same reset would be blamed twice and quarantined, or run
    // out of tries across five connections). Bounded: only connections that
    // were open before the previous death qualify; one that came up after it
    // (a burst extra that was connecting) dies of its own cause.
    if (info.wasOpen && ABNORMAL.has(info.reason)) {
      const now = performance.now();
      const together = (this.#openedAt.get(conn) ?? now) < this.#lastDeathAt && now - this.#lastDeathAt < TOGETHER_MS;
      this.#lastDeathAt = now;
      if (info.failed > 0) this.#deaths.set(conn, together ? 'together' : 'unblamed');
    }
    if (!info.wasOpen && this.#extras.has(conn)) {
      // An extra for a burst that didn't come up: the connection that is
      // answering carries on; no back-off, no failure to report.
      this.counters.burstConnectFailures++;
    } else if (!info.wasOpen && !this.#closed && !this.#losers.has(conn)) {
      const race = this.#raceOf(conn);
      if (race && !race.done) {
        const r = race.racers.get(conn);
        if (r) race.attempts.push({ address: r.address, startMs: r.startMs, afterMs: Date.now() - race.startedAt - r.startMs, outcome: 'failed', error: info.error });
        race.racers.delete(conn);
        // RFC 8305 §5: a failure starts the next address at once.
        if (race.pending.length > 0) this.#startNextRacer(race);
        if (race.racers.size > 0) {
          // The race goes on: what this address held moves to the others, as a loser's would.
          this.#losers.add(conn);
          this.emit('close', conn, info);
          return;
        }
        race.done = true;
        clearTimeout(race.timer);
        if (this.#race === race) this.#race = undefined;
      }
      // The connection (every address of the race) never came up: try the next
      // addresses, back off, and keep trying in the background so the pool comes back by itself.
      this.#failures++;
      this.#addressIndex++;
      const backoff = Math.min(this.options.maxBackoffMs, 250 * 2 ** Math.min(this.#failures - 1, 16));
      this.#retryAt = Date.now() + backoff;
      const attempts = race ? [...race.attempts].sort((a, b) => a.startMs - b.startMs) : [];
      const error = mostTelling(attempts) ?? info.error;
      this.#lastError = error;
      if (error) {
        this.counters.connectFailures++;
        this.emit('connect-failed', {
          resolverId: this.resolver.id,
          address: attempts.find((a) => a.error === error)?.address ?? conn.address,
          error,
          consecutive: this.#failures,
          retryInMs: backoff,
          afterMs: race ? Date.now() - race.startedAt : Date.now() - conn.createdAt,
          attempts,
        });
      }
      if (this.#selfRetry) {
        clearTimeout(this.#retryTimer);
        this.#retryTimer = setTimeout(() => this.warm(), backoff + 5);
        this.#retryTimer.unref();
      }
    }
    this.emit('close', conn, info);
  }

  #raceOf(conn: PoolConnection): Race | undefined {
    return this.#race?.racers.has(conn) ? this.#race : undefined;
  }
}

function newRace(pending: string[]): Race {
  return { startedAt: Date.now(), pending, racers: new Map(), attempts: [], timer: undefined, done: false };
}

/** How many answers of this size one initial window carries. */
function windowQueries(answerBytes: number): number {
  return Math.max(MIN_WINDOW_QUERIES, Math.floor(INITIAL_WINDOW_BYTES / (answerBytes + ANSWER_OVERHEAD_BYTES)));
}

/** Codes that mean someone is intercepting: the most telling failure of a race. */
const INTERCEPTION = new Set(['DOTSTUB_CERTIFICATE', 'DOTSTUB_PIN_MISMATCH']);
/** No route: common for one family on a network that lacks it, so the least telling. */
const NO_ROUTE = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

/** Which failure of a race to report: interception first, then the first other than "no route", then the first. */
function mostTelling(attempts: readonly AddressAttempt[]): DotstubError | undefined {
  const failed = attempts.filter((a) => a.error !== undefined).map((a) => a.error as DotstubError);
  return (
    failed.find((e) => INTERCEPTION.has(e.code)) ??
    failed.find((e) => !NO_ROUTE.has((e.cause as NodeJS.ErrnoException | undefined)?.code ?? '')) ??
    failed[0]
  );
}
