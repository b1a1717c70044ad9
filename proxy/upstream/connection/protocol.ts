/**
 * What a protocol half (dot/connection.ts, doh/connection.ts) and the
 * connection's lifecycle (lifecycle.ts) offer each other: the lifecycle owns
 * the socket, the state and the in-flight map; a half writes queries and
 * reads answers through the Link it is given.
 */
import type tls from 'node:tls';
import type { QuestionKey } from '../../dns/client-query.js';
import type { UpstreamAnswer } from '../../dns/upstream-answer.js';
import type { UpstreamQuestion } from '../../dns/upstream-query.js';
import type { DotstubError } from '../../errors.js';
import type { AnswerHandler, CloseReason, ConnectionState } from './contract.js';
import type { InFlightMap } from './in-flight.js';
import type { StreamMark } from './peer-acks.js';

/** One query in flight; `own` is the protocol half's state for it (DoH: its stream). */
export interface Query<S> {
  readonly question: UpstreamQuestion;
  readonly handler: AnswerHandler<unknown>;
  readonly ctx: unknown;
  /** The query as the engine framed it (two-octet length first), its ID octets written. */
  readonly framed: Buffer;
  /** performance.now() when it was handed to the protocol half (0 while held for the handshake). */
  writtenAt: number;
  /** Where the socket's byte streams stood when it was written (peer-acks.ts); undefined until then. */
  mark: StreamMark | undefined;
  own: S | undefined;
}

/** What a connection offers the protocol half plugged into it. */
export interface Link<S> {
  readonly address: string;
  readonly socket: tls.TLSSocket;
  state(): ConnectionState;
  readonly queries: InFlightMap<Query<S>>;
  /** A query's answer, its entry already taken out of the map (match or take). */
  answered(id: number, query: Query<S>, answer: UpstreamAnswer, outOfOrder: boolean): void;
  /** A query ended with an error of its own (DoH: its stream's); the connection carries on. */
  settle(id: number, err: DotstubError): void;
  /** The connection is broken: close it now, failing what is in flight. */
  fail(reason: CloseReason, error?: DotstubError): void;
  /** The server ends the session (DoH: GOAWAY): take no more queries, close once the in-flight ones settled. */
  goAway(reason: CloseReason): void;
  /** The session closed under us: the reason goAway() gave, else 'server-close'. */
  serverClosed(): void;
  /** RFC 7828: the server's idle timeout (DoT); 0 asks us to close once the in-flight queries are answered. */
  keepalive(ms: number): void;
  bytes(written: number, read: number): void;
  mismatch(asked: QuestionKey, got: QuestionKey | undefined): void;
}

/** What is particular to one protocol, for every connection a factory makes. */
export interface Protocol<S> {
  /** The port dialled (853, or the DoH URL's). */
  readonly port: number;
  /** The name the certificate must be valid for (DoT: the auth name; DoH: the URL host); undefined: none configured. */
  readonly authName: string | undefined;
  /** Its own part of tls.connect's options: SNI, ALPN, identity check. */
  readonly tls: Pick<tls.ConnectionOptions, 'servername' | 'ALPNProtocols' | 'checkServerIdentity'>;
  /** What the server closed, in "resolver at … closed …". */
  readonly closedWhat: string;
  /** The message ID written on the wire for a query this connection numbered `upstreamId`. */
  wireId(upstreamId: number): number;
  /** Plugs a new half into a connection; called once, as its socket is created. */
  attach(link: Link<S>): ProtocolHalf<S>;
}

/** One connection's protocol half. */
export interface ProtocolHalf<S> {
  /** The server is authenticated; nothing written yet. An error refuses the connection; else get ready to write. */
  start(): DotstubError | undefined;
  /** Writes a query (only once started). */
  write(id: number, query: Query<S>): void;
  /** A query taken back or failed by close: stop working on it (DoH: RST_STREAM). */
  abandon(query: Query<S>): void;
  /** Closes the transport, gracefully or at once as `reason` wants. */
  shutdown(reason: CloseReason): void;
}
