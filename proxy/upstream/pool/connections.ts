/**
 * The pool's connections, pool.ts's other half: the pool sends queries and
 * follows their flights; this opens the connections they go on and hears
 * each one's end.
 *
 *   open()        a race across the resolver's address families (race.ts), each racer with its address's last
 *                 session ticket, after the back-off allows it (backoff.ts); `race([address])` opens to one address
 *   'ready'       the racer that authenticated first wins; the rest are losers, closed, their held queries re-sent
 *   'close'       quarantine.ts hears first; a burst extra that never came up is no failure; a race whose every
 *                 racer failed is: the next one tries each family's next address after a back-off, and keeps trying
 *   bursts        openForBurst(): the connections a burst's windows need, to the address that answers;
 *                 prepareWhenOpen(): the same on the first lookup after a quiet spell, before the page's burst
 *                 comes: now, or once that lookup's own connection is up (after a start, a switch, a move);
 *                 settle(): once the burst is over, down to the steady number
 *   caps          (limits.ts) at most maxConnections() at once, whoever opens them (a query, a burst, the
 *                 hedge), draining ones included: the server still holds them; keptSize() outside bursts
 *   'close'       a connection the server closed as it was made while another one is up: its cap on
 *                 connections from this machine, learnt, and no failure; one it closed with queries
 *                 unanswered: its queries per connection, or what it takes in flight, learnt
 *
 * The events the pool emits about its connections ('open', 'race',
 * 'keepalive', 'close', 'connect-failed') come from here, through `emit`.
 */
import type { EventEmitter } from 'node:events';
import type { ResolverSpec } from '../../config/resolvers.js';
import { ConnectFailedError, type DotstubError } from '../../errors.js';
import type { CloseInfo, ConnectionFactory, PoolConnection } from '../connection/contract.js';
import { countConnection, type UpstreamCounters } from '../counters.js';
import type { ManagedUpstreamEvents, Transport } from '../managed.js';
import type { Backoff } from './backoff.js';
import { BURST_CONNECTIONS, STEADY_CONNECTIONS, type PoolOptions } from './options.js';
import type { Quarantine } from './quarantine.js';
import { isOffline, OFFLINE_RETRY_MS } from './offline.js';
import { hasDefaultRoute } from '../../runtime/default-route.js';
import { synthesizeNat64 } from '../../runtime/nat64-address.js';
import { ConnectionRace, lostRace, raceAddresses } from './race.js';
import { lower, STALL_MS, type LearntLimits } from './limits.js';

let connectionCounter = 0;
/** The process's one sequence of connection numbers (what logs and the Connections page show). */
const nextConnectionId = (): number => ++connectionCounter;

export interface PoolConnectionsInit {
  readonly transport: Transport;
  readonly resolver: ResolverSpec;
  readonly options: PoolOptions;
  readonly factory: ConnectionFactory;
  /** Numbers each new connection; absent: the process's one sequence. */
  readonly connectionIds?: (() => number) | undefined;
  readonly counters: UpstreamCounters;
  readonly backoff: Backoff;
  readonly quarantine: Quarantine;
  /** The pool's own emitter: the connections' events are the pool's. */
  readonly emit: EventEmitter<ManagedUpstreamEvents>['emit'];
  /** After a failed race, the pool's warm(), once the back-off allows; absent: the owner re-probes (selfRetry off). */
  readonly retry: (() => void) | undefined;
  /** What this resolver showed it takes (limits.ts), shared with its other pools. */
  readonly limits: LearntLimits;
}

export class PoolConnections {
  /** Live connections (connecting, open or draining); closed ones are removed at once. */
  readonly list: PoolConnection[] = [];
  /** Connections closed because another address won, or failed while another still raced: their held queries are re-sent without using a retry. */
  readonly losers = new WeakSet<PoolConnection>();
  /** Connections opened for a burst: not re-opened, and their failure to connect is no resolver failure. */
  readonly extras = new WeakSet<PoolConnection>();
  /** An authenticated connection opened since the last connect failure. */
  up = false;
  /**
   * New connections offer classical key agreement only: a post-quantum
   * ClientHello got no answer on this network, here or (the network's
   * memory, through the pool's hint) before. The pool sets it per network.
   */
  classical = false;
  /**
   * The network's NAT64 prefix (the pool's hint): with no IPv4 route here, the
   * resolver's IPv4 addresses are raced at the IPv6 addresses it synthesizes.
   */
  nat64: string | null = null;
  readonly #o: PoolConnectionsInit;
  /** Latest session ticket per address. */
  readonly #tickets = new Map<string, Buffer>();
  /** Which address of each family the next race tries; moves on when a race fails. */
  #addressIndex = 0;
  /** The NAT64 prefix the last race's addresses were synthesized with; null: the resolver's own addresses. */
  #viaNat64: string | null = null;
  /** The connection race started last, while it runs. */
  #race: ConnectionRace | undefined;
  #closed = false;
  /** Windows to prepare for when the next connection comes up (prepareWhenOpen); 0: none. */
  #prepareOnOpen = 0;
  /** The most queries each connection had in flight at once (what a stall is measured against). */
  readonly #peak = new WeakMap<PoolConnection, number>();

  constructor(init: PoolConnectionsInit) {
    this.#o = init;
  }

  /** Connecting or open: what counts against the pool's size (draining ones don't). */
  liveCount(): number {
    let n = 0;
    for (const c of this.list) if (c.state === 'connecting' || c.state === 'open') n++;
    return n;
  }

  /** Connections kept outside bursts: the options' size, at most STEADY_CONNECTIONS and what the resolver takes. */
  keptSize(): number {
    return Math.max(1, Math.min(this.#o.options.size, STEADY_CONNECTIONS, this.#o.limits.connections ?? Infinity));
  }

  /** Connections at once in a burst (connecting, open or draining): kept plus burst extras, at most BURST_CONNECTIONS and what the resolver takes. */
  maxConnections(): number {
    const { size, burstConnections } = this.#o.options;
    return Math.max(1, Math.min(size + (burstConnections ?? 0), BURST_CONNECTIONS, this.#o.limits.connections ?? Infinity));
  }

  /** Another connection may be opened now without passing the cap. */
  roomForAnother(): boolean {
    return this.list.length < this.maxConnections();
  }

  /** A query was written on `conn`, `depth` in flight with it. */
  sentOn(conn: PoolConnection, depth: number): void {
    if (depth > (this.#peak.get(conn) ?? 0)) this.#peak.set(conn, depth);
  }

  /**
   * The burst is over: connections beyond the steady number (kept size, at
   * least STEADY_CONNECTIONS' worth when the options keep fewer) are drained,
   * newest first: they close once their queries are answered.
   */
  settle(): void {
    const steady = Math.min(STEADY_CONNECTIONS, this.maxConnections());
    let n = this.liveCount();
    for (const c of [...this.list].reverse()) {
      if (n <= steady) return;
      if (c.state !== 'open') continue;
      c.drain();
      n--;
    }
  }

  /** Starts a connection race; returns its first racer (queries sent now are held there until one authenticates). */
  open(): PoolConnection {
    this.#o.backoff.attempted();
    const addresses = throughNat64(this.#o.resolver.addresses, this.nat64);
    this.#viaNat64 = addresses !== this.#o.resolver.addresses ? this.nat64 : null;
    const race = this.race(raceAddresses(addresses, this.#addressIndex));
    this.#race = race;
    return race.start() as PoolConnection;
  }

  /** A race over `addresses`, not started; its racers are opened only while the pool is open. */
  race(addresses: readonly string[]): ConnectionRace {
    const race: ConnectionRace = new ConnectionRace(addresses, this.#o.options.attemptDelayMs ?? 250, (address) =>
      this.#closed ? undefined : this.#openAddress(race, address),
    );
    return race;
  }

  /**
   * Every open connection's window is full: open connections up to the
   * `windows` the queries in flight need (one window each), up to `size` kept plus
   * `burstConnections` extra, to the address that is answering. They take
   * queries once open: the rest of this burst, and the next ones.
   */
  openForBurst(answering: PoolConnection, windows: number): void {
    const size = this.keptSize();
    const want = Math.min(this.maxConnections(), windows);
    // Connections already on their way count, and draining ones (the server holds them): one burst opens each extra once.
    for (let n = this.list.length; n < want; n++) {
      const conn = this.race([answering.address]).start();
      if (!conn) return;
      if (n >= size) {
        this.extras.add(conn);
        this.#o.counters.burstConnections++;
      }
    }
  }

  /**
   * The first lookup after a quiet spell, once bursts have been seen (in
   * this run, or remembered for this network): a page's own name comes two
   * or three round trips before its subresources, so the connections the
   * last burst needed (`windows`) are opened before it (those still open
   * count), instead of a handshake into the burst. They follow the open
   * connection's address; with none open yet, the lookup's own race decides
   * the address first, and they are opened when its connection comes up.
   */
  prepareWhenOpen(windows: number): void {
    const answering = this.list.find((c) => c.state === 'open');
    if (!answering) this.#prepareOnOpen = windows;
    else if (!this.#closed) this.openForBurst(answering, windows);
  }

  /** The pool closed: no racer opens any more. */
  close(): void {
    this.#closed = true;
    this.#race?.cancel();
  }

  #openAddress(race: ConnectionRace, address: string): PoolConnection {
    const o = this.#o;
    const conn = o.factory({ id: (o.connectionIds ?? nextConnectionId)(), address, session: this.#tickets.get(address), classical: this.classical });
    this.list.push(conn);
    const counters = o.counters;
    conn.on('ready', (info) => {
      o.quarantine.opened(conn);
      o.backoff.connected();
      if (info.resumed) counters.handshakesResumed++;
      else counters.handshakesFull++;
      // The classical retry worked where the post-quantum ClientHello got no answer: the next connections here skip the wait.
      if (info.classicalOnly === 'retried') this.classical = true;
      const won = race.won(conn, (rival) => {
        this.losers.add(rival);
        rival.close('local');
      });
      if (this.#race === race) this.#race = undefined;
      this.up = true;
      const prepare = this.#prepareOnOpen;
      this.#prepareOnOpen = 0;
      if (prepare > 0 && !this.#closed) this.openForBurst(conn, prepare);
      if (won) o.emit('race', { ...won, transport: o.transport });
      o.emit('open', { ...info, transport: o.transport, burst: this.extras.has(conn) });
    });
    conn.on('session', (ticket) => this.#tickets.set(address, ticket));
    conn.on('keepalive', (ms) => o.emit('keepalive', { connectionId: conn.id, timeoutMs: ms }));
    countConnection(conn, counters);
    conn.on('close', (info) => this.#onClose(conn, info));
    return conn;
  }

  #onClose(conn: PoolConnection, info: CloseInfo): void {
    const idx = this.list.indexOf(conn);
    if (idx >= 0) this.list.splice(idx, 1);
    // Before the connection's failed queries are handed back (after this event, oldest first).
    this.#o.quarantine.closed(conn, info);
    if (info.wasOpen) this.#learnFromClose(conn, info);
    if (!info.wasOpen && !this.#closed && !this.losers.has(conn) && closedAsMade(info.error) && this.list.some((c) => c.state === 'open')) {
      // Refused beyond the server's cap on connections from this machine,
      // while another one is up: it takes as many as are up now (draining
      // ones too: it holds them). What this one held goes to those, without
      // using a retry; no back-off, no failure to report.
      const race = this.#race?.has(conn) ? this.#race : undefined;
      // Another address of its race goes on (as below), or the race is over: either way no failure.
      if (race && !race.failed(conn, info.error)) this.#race = undefined;
      // Those connecting count: refused too, each lowers it again when it closes.
      if (!race || this.#race === undefined) lower(this.#o.limits, 'connections', this.list.length);
      this.#o.counters.burstConnectFailures++;
      this.losers.add(conn);
      this.#emitClose(conn, info);
      return;
    }
    if (!info.wasOpen && this.extras.has(conn)) {
      // An extra for a burst that didn't come up: the connection that is
      // answering carries on; no back-off, no failure to report.
      this.#o.counters.burstConnectFailures++;
    } else if (!info.wasOpen && !this.#closed && !this.losers.has(conn)) {
      const race = this.#race?.has(conn) ? this.#race : undefined;
      if (race) {
        if (race.failed(conn, info.error)) {
          // The race goes on: what this address held moves to the others, as a loser's would.
          this.losers.add(conn);
          this.#emitClose(conn, info);
          return;
        }
        this.#race = undefined;
      }
      this.#connectFailed(conn, info, race);
    }
    this.#emitClose(conn, info);
  }

  /**
   * The server closed an open connection with queries unanswered (two at
   * least: one is the race of an idle close): right after an answer, it
   * closes after that many queries; after a silence, it stopped answering
   * with more in flight than it takes.
   */
  #learnFromClose(conn: PoolConnection, info: CloseInfo): void {
    if (info.reason !== 'server-close' || info.failed < 2 || conn.lastAnswerAt === 0) return;
    const answered = info.queriesCarried - info.failed;
    if (answered < 2) return;
    if (performance.now() - conn.lastAnswerAt < STALL_MS) {
      lower(this.#o.limits, 'queriesPerConnection', answered);
      return;
    }
    const peak = this.#peak.get(conn) ?? 0;
    // It answered what it had read and then nothing, with `failed` still in flight: it takes fewer than it answered of the peak.
    if (peak > info.failed + 1) lower(this.#o.limits, 'inFlight', peak - info.failed - 1);
  }

  /** After `conn` left the list: lastClosed when it had opened and nothing is open or connecting now. */
  #emitClose(conn: PoolConnection, info: CloseInfo): void {
    this.#o.emit('close', { ...info, transport: this.#o.transport, address: conn.address, lastClosed: info.wasOpen && this.liveCount() === 0 });
  }

  /**
   * The connection (every address of its race) never came up: the next
   * race tries each family's next address, after a back-off; the pool keeps
   * trying in the background so it comes back by itself.
   */
  #connectFailed(conn: PoolConnection, info: CloseInfo, race: ConnectionRace | undefined): void {
    const o = this.#o;
    this.#addressIndex++;
    const { error, ...lost } = lostRace(race, conn, info.error);
    const { consecutive, backoffMs } = o.backoff.failed(bannedWords(error, o.limits.connections));
    const offline = error !== undefined && isOffline(error);
    const retryInMs = offline ? OFFLINE_RETRY_MS : backoffMs;
    if (error) {
      o.counters.connectFailures++;
      this.up = false;
      const failure = { resolverId: o.resolver.id, ...lost, error, consecutive, retryInMs, offline, nat64Prefix: this.#viaNat64, transport: o.transport };
      const said = bannedWords(error, o.limits.connections);
      o.emit('connect-failed', { ...failure, error: said, speaks: true, message: said.message });
    }
    const retry = o.retry;
    if (retry) o.backoff.schedule(retry, retryInMs + 5);
  }
}

/**
 * The addresses to race: as given, unless this network has no IPv4 route and
 * a NAT64 prefix is known, then each IPv4 address is reached at its
 * synthesized IPv6 address (RFC 6052), the IPv6 ones as they are. Read at
 * each race (a route may come or go between them).
 */
function throughNat64(addresses: readonly string[], prefix: string | null, v4Route: () => boolean = () => hasDefaultRoute(4)): readonly string[] {
  if (prefix === null || !addresses.some((a) => !a.includes(':')) || v4Route()) return addresses;
  const out = addresses.map((a) => (a.includes(':') ? a : (synthesizeNat64(prefix, a) ?? a)));
  return [...new Set(out)];
}

/**
 * The server accepted the TCP connection and closed or reset it before TLS
 * was done: what a server does to a client beyond its cap on connections
 * (dnsdist's setMaxTCPConnectionsPerClient) or to one it has banned; not a
 * closed port, a timeout, a TLS alert or a certificate.
 */
function closedAsMade(err: DotstubError | undefined): boolean {
  if (!(err instanceof ConnectFailedError) || /ECONNREFUSED|ERR_SSL_/.test(err.message)) return false;
  return err.phase === 'handshake' || /ECONNRESET|EPIPE/.test(err.message);
}

/**
 * A connection closed as it was made, from a resolver that showed it limits
 * the connections from this machine (`cap`): said in those words, as the
 * error queries and the privacy state get. Otherwise the error as it is.
 */
function bannedWords<E extends DotstubError | undefined>(err: E, cap: number | undefined): E | ConnectFailedError {
  if (!closedAsMade(err) || cap === undefined) return err;
  const message = `${(err as ConnectFailedError).message}: the resolver refuses more connections from this machine (it limits clients to ${cap}): dotstub keeps to ${cap} and backs off`;
  return new ConnectFailedError(message, { cause: err }, (err as ConnectFailedError).phase);
}
