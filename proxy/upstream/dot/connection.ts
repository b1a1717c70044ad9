/**
 * The DNS-over-TLS half of a connection (RFC 7858): pipelined queries on one
 * TLS stream, each framed with a two-octet length, answered in any order and
 * matched by the message ID. The connection's life (socket, authentication,
 * deadlines, idle, drain, close) is ../connection/lifecycle.ts.
 *
 *   write ──► cork for this turn ──► socket
 *   socket ──► FrameReader ──► InFlightMap.match ──► answered
 *                                 │ unknown ID / question not echoed
 *                                 ▼
 *                            dropped ('mismatch' counted)
 *
 * Invariants:
 * - IDs on the wire are the connection's own, unique among its in-flight
 *   queries; the client's IDs never reach the resolver.
 * - A stream that stops looking like DNS answers is closed at once
 *   ('desync'): nothing after lost framing can be trusted.
 */
import type { ResolverSpec } from '../../config/resolvers.js';
import { FrameReader } from '../../dns/framing.js';
import { ConnectionClosedError } from '../../errors.js';
import type { AuthPolicy } from '../auth-policy.js';
import type { CloseReason, ConnectionFactory } from '../connection/contract.js';
import { connectionFactory } from '../connection/lifecycle.js';
import type { Link, Protocol, ProtocolHalf, Query } from '../connection/protocol.js';
import type { PoolOptions } from '../pool/options.js';
import { ackNow } from '../quick-ack.js';

/** The pool's factory for DoT connections to `resolver`. */
export function dotConnectionFactory(
  resolver: ResolverSpec,
  auth: AuthPolicy,
  options: Pick<PoolOptions, 'maxInFlight' | 'idleTimeoutMs' | 'connectTimeoutMs' | 'handshakeTimeoutMs' | 'quickAck'>,
): ConnectionFactory {
  const quickAck = options.quickAck ?? true;
  const protocol: Protocol<never> = {
    port: resolver.port,
    authName: resolver.authName,
    // SNI carries the authentication name (RFC 8310 §8.1); never an IP literal.
    // No ALPN: RFC 7858 doesn't use it, and a server that configures ALPN
    // for other protocols answers an unknown "dot" with a fatal alert.
    tls: { servername: resolver.authName },
    closedWhat: 'the connection',
    wireId: (upstreamId) => upstreamId,
    attach: (link) => new DotHalf(link, quickAck),
  };
  return connectionFactory(resolver, auth, options, protocol);
}

class DotHalf implements ProtocolHalf<never> {
  readonly #link: Link<never>;
  readonly #quickAck: boolean;
  readonly #reader = new FrameReader();
  #corked = false;
  /** Bytes written this tick, reported once per tick. */
  #bytesOut = 0;

  constructor(link: Link<never>, quickAck: boolean) {
    this.#link = link;
    this.#quickAck = quickAck;
  }

  /** Reads from the socket the connection authenticated (a classical retry replaced the first one: connection/key-agreement.ts). */
  start(): undefined {
    const link = this.#link;
    link.socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    link.socket.on('end', () => {
      // The server closed its side (RFC 7766 §6.2.4): nothing more will be answered.
      if (link.state() !== 'closed') link.fail('server-close');
    });
    return undefined;
  }

  write(_id: number, query: Query<never>): void {
    const socket = this.#link.socket;
    if (!this.#corked) {
      // Batch every query of this turn of the event loop into one write: a
      // burst of datagrams read together (each its own callback, so each its
      // own tick) leaves in a few full segments rather than one segment per
      // query. That matters after an idle moment, when TCP may send only ten
      // segments before it hears back (issue 12); setImmediate runs right
      // after the I/O of this turn, so a lone query isn't held.
      this.#corked = true;
      socket.cork();
      setImmediate(() => {
        this.#corked = false;
        socket.uncork();
        this.#link.bytes(this.#bytesOut, 0);
        this.#bytesOut = 0;
      });
    }
    socket.write(query.framed);
    this.#bytesOut += query.framed.length;
  }

  abandon(): void {
    // A cancelled query's answer is dropped as 'unknown' when it comes.
  }

  shutdown(reason: CloseReason): void {
    if (reason === 'idle' || reason === 'local' || reason === 'keepalive-zero') this.#link.socket.end();
    else this.#link.socket.destroy();
  }

  #onData(chunk: Buffer): void {
    const link = this.#link;
    link.bytes(0, chunk.length);
    let messages: Buffer[];
    try {
      messages = this.#reader.push(chunk);
    } catch (err) {
      link.fail('desync', new ConnectionClosedError(`resolver at ${link.address} broke DNS framing`, { cause: err }));
      return;
    }
    for (const raw of messages) {
      if (link.state() === 'closed') return;
      this.#onMessage(raw);
    }
    // ACK what was read now, not with our next query, while more answers are
    // due: a resolver using Nagle holds its next answer (or the rest of this
    // one) until this is acknowledged (quick-ack.ts). After the answers were
    // passed on, so that the clients are not kept waiting for a syscall; and
    // not when queries are already corked for this turn (under load, most
    // reads): their segment leaves within the turn and carries the ACK.
    if (this.#quickAck && link.queries.size > 0 && !this.#corked) ackNow(link.socket);
    // An incomplete frame can already show it isn't DNS: two octets of length,
    // two of ID, then flags whose top bit (QR) every answer sets. Text from a
    // broken server or a middlebox ("HTTP/1.1 400") fails this at once instead
    // of holding the stream until a deadline.
    if (link.state() !== 'closed' && this.#reader.buffered >= 5 && (this.#reader.peek()[4] as number) < 0x80) {
      link.fail('desync', new ConnectionClosedError(`resolver at ${link.address} sent bytes that are not a DNS answer: framing lost`));
    }
  }

  #onMessage(raw: Buffer): void {
    const link = this.#link;
    // A frame too short for a DNS header, or a query where an answer belongs,
    // means the stream lost its framing (a broken server, or a middlebox
    // writing into it): nothing after it can be trusted. Replace the connection;
    // its queries are retried on the next one.
    if (raw.length < 12 || (raw[2] as number) < 0x80) {
      link.fail('desync', new ConnectionClosedError(`resolver at ${link.address} sent bytes that are not a DNS answer: framing lost`));
      return;
    }
    const m = link.queries.match(raw);
    if (m.kind === 'unknown') return; // late answer to a cancelled query, or a bogus ID
    if (m.kind === 'mismatch') {
      // RFC 7858 §3.3 / RFC 5452: an answer must echo the question. Drop it
      // and leave the query pending: its deadline decides what happens next.
      link.mismatch(m.asked, m.got);
      return;
    }
    if (m.answer.keepaliveMs !== undefined) link.keepalive(m.answer.keepaliveMs);
    link.answered(m.answer.id, m.entry, m.answer, m.outOfOrder);
  }
}
