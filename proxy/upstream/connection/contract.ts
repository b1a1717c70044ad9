/**
 * What the pool needs of one connection, whatever protocol it speaks. Both
 * DoT (../dot/connection.ts) and DoH (../doh/connection.ts) are made by
 * lifecycle.ts with their protocol half plugged in; the pool's tests use
 * fakes of this contract (test-support/fake-connection.ts). The pool holds
 * policy (warm-up, pick, back-off, address rotation, tickets); a connection
 * holds a socket and its in-flight map. Nothing in proxy/ outside upstream/
 * imports this folder (eslint.config.js).
 *
 * Invariants every connection keeps:
 * - Every query accepted by send() gets exactly one handler call: an answer
 *   or an error (its own, as a DoH stream's, or the connection's when it
 *   closes), unless cancel() took it back.
 * - Nothing is written before the server is authenticated as the policy requires.
 * - 'close' is emitted once, before the handlers of the queries it failed run.
 */
import type { EventEmitter } from 'node:events';
import type { QuestionKey } from '../../dns/client-query.js';
import type { UpstreamAnswer } from '../../dns/upstream-answer.js';
import type { UpstreamQuestion } from '../../dns/upstream-query.js';
import type { DotstubError } from '../../errors.js';
import type { AckEvidence, PeerVerdict } from './peer-acks.js';

export type { AckEvidence, PeerVerdict };

export type ConnectionState = 'connecting' | 'open' | 'draining' | 'closed';

export type CloseReason = 'idle' | 'server-close' | 'reset' | 'error' | 'local' | 'unresponsive' | 'keepalive-zero' | 'desync' | 'network-change';

/**
 * A connection's handshake, declared once: the pool's 'open' event and the
 * proxy's 'connection' event of type 'open' (../managed.ts, ../../events.ts)
 * extend it, and the control API sends it as it is.
 */
export interface HandshakeInfo {
  readonly connectionId: number;
  readonly address: string;
  readonly resumed: boolean;
  /** Authenticated: CA + name, or SPKI pin, or resumed from an authenticated session. */
  readonly verified: boolean;
  /** Why the certificate didn't verify (opportunistic mode only); null when it did. */
  readonly authError: string | null;
  readonly tlsVersion: string;
  readonly cipher: string;
  /**
   * The key-agreement group the handshake agreed, as OpenSSL names it:
   * 'X25519MLKEM768' (post-quantum hybrid), 'X25519', 'prime256v1' (classical);
   * null when the TLS library doesn't say.
   */
  readonly keyGroup: string | null;
  /**
   * Why only classical groups were offered (key-agreement.ts): 'retried', this
   * connection's post-quantum ClientHello got no answer; 'network', one did
   * on this network before. null: the TLS library's own offer.
   */
  readonly classicalOnly: 'retried' | 'network' | null;
  readonly handshakeMs: number;
}

export interface CloseInfo {
  readonly connectionId: number;
  readonly reason: CloseReason;
  /** Why a connection that never opened failed (connect, TLS, authentication). */
  readonly error: DotstubError | undefined;
  /** Queries that were in flight and got an error. */
  readonly failed: number;
  readonly queriesCarried: number;
  readonly wasOpen: boolean;
}

/**
 * Called once per query with its context: an answer, or the error that ended
 * it. `writtenAt` is performance.now() when the query left for the resolver
 * (after any handshake wait; 0 if it never did).
 */
export type AnswerHandler<T> = (
  ctx: T,
  conn: PoolConnection,
  upstreamId: number,
  err: DotstubError | null,
  answer: UpstreamAnswer | undefined,
  writtenAt: number,
) => void;

export interface SendInfo {
  readonly connection: PoolConnection;
  /** This connection's ID for the query on the wire. */
  readonly upstreamId: number;
  /** The connection was already authenticated and open: no handshake wait (the T-DNS "hit"). */
  readonly reused: boolean;
  /** Queries in flight on this connection, this one included. */
  readonly depth: number;
}

export interface PoolConnectionEvents {
  ready: [HandshakeInfo];
  /** A TLS session ticket, only from an authenticated, verified connection that is not closed. */
  session: [Buffer];
  /** The server's RFC 7828 idle timeout changed (ms). */
  keepalive: [number];
  mismatch: [QuestionKey, QuestionKey | undefined];
  'out-of-order': [];
  /** Bytes written, bytes read. */
  bytes: [number, number];
  close: [CloseInfo];
}

export interface PoolConnection extends EventEmitter<PoolConnectionEvents> {
  readonly id: number;
  readonly address: string;
  /** Date.now() at creation. */
  readonly createdAt: number;
  readonly state: ConnectionState;
  readonly inFlight: number;
  readonly queriesCarried: number;
  readonly handshake: HandshakeInfo | undefined;
  readonly keepaliveMs: number | undefined;
  readonly idleTimeoutMs: number;
  /** Accepts new queries: connecting or open, not draining, below its cap. */
  readonly available: boolean;
  /** performance.now() of the last answer matched to a query (0 if none); bytes that aren't answers don't count. */
  readonly lastAnswerAt: number;
  /** Sends a framed query (its ID octets are the connection's to write); null when it can't take it. */
  send<T>(framed: Buffer, question: UpstreamQuestion, handler: AnswerHandler<T>, ctx: T): SendInfo | null;
  /** Takes a query back; a late answer is then ignored and the handler is not called. */
  cancel(upstreamId: number): void;
  /** performance.now() when the query was written (0 while held for the handshake, or unknown). */
  writtenAt(upstreamId: number): number;
  /** Where peerSilence() gets its evidence: TCP's acknowledgements, or only the bytes read (peer-acks.ts). */
  readonly ackEvidence: AckEvidence;
  /**
   * Whether the peer still acknowledges what it is sent (peer-acks.ts):
   * 'silent' when nothing from the latest query written at least `ackWaitMs`
   * ago on has been acknowledged (without TCP's view: nothing read since),
   * 'acking' when it has, or when no query has waited that long. Decided when
   * called (the queries looked at), told when the kernel's view is read.
   */
  peerSilence(ackWaitMs: number): Promise<PeerVerdict>;
  /** Stop taking queries; close once the in-flight ones are answered. */
  drain(): void;
  /** Close now; in-flight queries fail. */
  close(reason?: CloseReason): void;
}

/** What the pool decides for each new connection. */
export interface ConnectionSpec {
  readonly id: number;
  readonly address: string;
  /** The latest session ticket from an authenticated connection to this address. */
  readonly session: Buffer | undefined;
  /** Offer classical key agreement only: a post-quantum ClientHello got no answer on this network (key-agreement.ts). */
  readonly classical?: boolean;
}

export type ConnectionFactory = (spec: ConnectionSpec) => PoolConnection;
