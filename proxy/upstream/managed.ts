/**
 * ManagedUpstream: the Upstream contract (upstream.ts) plus what the proxy's
 * root and its observers need from the upstream that carries queries for the
 * active resolver, whether that is one pool (DoT) or Fallback(DoT; DoH):
 *
 *   warm() retryNow() networkChanged()   what the root asks of it
 *   prefer()                             where to start (the network's memory)
 *   transport                            which transport carries queries
 *   snapshot()                           its connections, for the status API
 *   events                               connection life, tagged with the transport
 *
 * Outside upstream/, nothing looks past this contract at a pool, a
 * fallback or a connection (for-resolver.ts builds one for a resolver).
 * A pool implements it itself (pool/pool.ts); a fallback composes two.
 *
 * Each event's payload is declared once, where its facts are made: a
 * connection's (connection/contract.ts: the handshake, the close), a race's
 * (pool/race.ts). The events here extend those with the upstream's own tags,
 * and the proxy's 'connection' events (events.ts) extend these in turn with
 * when and for which resolver; nothing copies a fact field by field, so a
 * fact added to HandshakeInfo reaches the control API as it is.
 */
import type { ResolverSpec } from '../config/resolvers.js';
import type { CloseInfo, HandshakeInfo } from './connection/contract.js';
import type { AddressAttempt, ConnectFailure, RaceResult } from './pool/race.js';
import type { Upstream } from './upstream.js';

export type { AddressAttempt };

/** What "Retry now" did: started an attempt (now, or within the second), or why not. */
export type RetryOutcome = 'started' | 'scheduled' | 'connected' | 'connecting' | 'closed';

export type Transport = 'dot' | 'doh';

/**
 * What the layer above knows about the network we're on (its memory,
 * network/network-memory.ts): `startOn: 'doh'` where port 853 was blocked
 * and DNS-over-HTTPS worked, so the first query doesn't wait out DoT's
 * connect timer. Only a fallback acts on it; DoT is still re-probed in the
 * background on the ladder's schedule.
 */
export interface NetworkHint {
  readonly startOn?: Transport;
  /**
   * A post-quantum ClientHello got no answer on this network: connections
   * offer classical key agreement at once (connection/key-agreement.ts).
   */
  readonly classicalOnly?: boolean;
  /**
   * Pages' bursts were seen from here lately: the connections the last one
   * needed (window.ts windows). The first lookup on this network (after a
   * start, a switch or a move) prepares them, as a lookup after a quiet
   * spell does once this run has seen a burst (pool.ts).
   */
  readonly burstWindows?: number;
  /**
   * This network has no IPv4 route and reaches IPv4 through a NAT64 at this
   * prefix ("2001:db8:64::/96"): a resolver's IPv4 addresses are reached at
   * the addresses it synthesizes (runtime/nat64-address.ts).
   */
  readonly nat64Prefix?: string;
}

/** A burst filled every open connection's window: the connections it needs (one window each). */
interface ManagedBurst {
  readonly windows: number;
}

export interface TransportChange {
  /** Which transport carries queries now; null: none can (both failing, or not yet connected). */
  readonly transport: Transport | null;
  /** The side queries are sent to, connected or not. */
  readonly active: Transport;
  /** A sentence a user can read, e.g. "port 853 is blocked here; using DNS-over-HTTPS on 443". */
  readonly reason: string;
  /** The failure behind it, when there is one (the pool's message). */
  readonly detail: string | null;
  readonly at: number;
}

/** One live connection, as the status API shows it. */
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
  readonly keyGroup: HandshakeInfo['keyGroup'];
  readonly classicalOnly: HandshakeInfo['classicalOnly'];
  readonly keepaliveMs: number | null;
  readonly idleTimeoutMs: number;
  /** Opened for a burst of queries: closes when idle and isn't re-opened. */
  readonly burst: boolean;
}

export interface UpstreamSnapshot {
  readonly connections: readonly ConnectionSnapshot[];
  /** At least one connection is open. */
  readonly open: boolean;
  /** At least one open connection authenticated its server. */
  readonly verified: boolean;
}

/** A connection authenticated (or, opportunistic, didn't) and carries queries. */
export interface ManagedOpen extends HandshakeInfo {
  readonly transport: Transport;
  /** Opened for a burst of queries (issue 12): closes when idle and isn't re-opened. */
  readonly burst: boolean;
}

export interface ManagedClose extends CloseInfo {
  readonly transport: Transport;
  readonly address: string;
  /**
   * The side carrying queries has no connection open or connecting any more,
   * and this one had opened: nothing is connected until something warms it.
   */
  readonly lastClosed: boolean;
}

/** The server's RFC 7828 idle timeout for a connection changed. */
export interface ManagedKeepalive {
  readonly connectionId: number;
  readonly timeoutMs: number;
}

export interface ManagedConnectFailure extends ConnectFailure {
  readonly transport: Transport;
  /** The side that failed carries queries (a fallback's other side doesn't speak for the privacy state). */
  readonly speaks: boolean;
  /** What failed, in words: with DoH failing too, DoT's failure first (ladder step 4). */
  readonly message: string;
}

/** A race across addresses, won after more than one address was tried. */
interface ManagedRace extends RaceResult {
  readonly transport: Transport;
}

export interface ManagedUpstreamEvents {
  open: [ManagedOpen];
  close: [ManagedClose];
  keepalive: [ManagedKeepalive];
  'connect-failed': [ManagedConnectFailure];
  race: [ManagedRace];
  /** A burst needed more connections than were open, and how many (announced when that number changes). */
  burst: [ManagedBurst];
  /** Which transport carries queries changed (a fallback: DoT ⇄ DoH), and why. */
  transport: [TransportChange];
}

export interface ManagedUpstream extends Upstream {
  /** The resolver it reaches (for a fallback, the spec that carries the DoH URL). */
  readonly resolver: ResolverSpec;
  /** The transport carrying queries: set by an authenticated open, cleared by a connect failure; null before the first. */
  readonly transport: Transport | null;
  /** Why the transport is what it is (a fallback's latest decision); null: one transport only, or nothing decided yet. */
  readonly lastChange: TransportChange | null;
  /** Opens the carrying side's connections now. */
  warm(): void;
  /** "Retry now": an attempt at once instead of after the back-off. */
  retryNow(): RetryOutcome;
  /** The network changed: drop connections, forget back-off, reconnect at once (on the hinted transport). */
  networkChanged(hint?: NetworkHint): void;
  /** Before its first connection (start, a switch): start on the hinted transport. */
  prefer(hint: NetworkHint): void;
  snapshot(): UpstreamSnapshot;
  on<K extends keyof ManagedUpstreamEvents>(event: K, listener: (...args: ManagedUpstreamEvents[K]) => void): this;
  off<K extends keyof ManagedUpstreamEvents>(event: K, listener: (...args: ManagedUpstreamEvents[K]) => void): this;
}
