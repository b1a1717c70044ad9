/**
 * Which key agreement a connection offers, and the one retry when a
 * post-quantum ClientHello gets no answer (issue 33, item 4).
 *
 * The packaged runtime's OpenSSL (3.5) offers the post-quantum hybrid
 * X25519MLKEM768 first: its key share alone is 1,216 bytes, so the
 * ClientHello is ~1.6 KB and leaves in two TCP segments. Some paths lose
 * that first flight (a tunnel whose MTU is below what it announces, a
 * middlebox that drops what doesn't fit one packet, IPv4 fragments
 * dropped): TCP connects, the ClientHello goes, and nothing comes back.
 * A classical ClientHello (~0.4 KB) fits one packet of any path's minimum
 * size (1,280 bytes), so on such a path it gets through.
 *
 *   TCP connected, offered post-quantum ──► nothing read from the server within firstFlightWaitMs()
 *        ──► the connection dials again (same address, same held queries) offering only CLASSICAL_GROUPS,
 *            with what is left of the handshake deadline: a port that stalls every handshake fails no later
 *            than it did without the retry
 *   the server answered something ──► no retry: the ClientHello arrived, and the handshake deadline runs on
 *
 * A dropped TCP connect is not a dropped ClientHello: nothing is retried
 * before TCP connected (the connect deadline says "blocked" as it did).
 */
import tls from 'node:tls';

/**
 * Groups both OpenSSL 3.0 (Node 20) and 3.5 (Node 24) know; X25519 first,
 * as every resolver tested takes it without a HelloRetryRequest.
 */
export const CLASSICAL_GROUPS = 'X25519:P-256';

let offers: boolean | undefined;

/**
 * Whether the runtime's TLS library offers a post-quantum group by default.
 * OpenSSL offers X25519MLKEM768 by default from the release that knows it
 * (3.5); 3.0 refuses a context naming it. Asked once.
 */
export function offersPostQuantum(): boolean {
  if (offers === undefined) {
    try {
      tls.createSecureContext({ ecdhCurve: 'X25519MLKEM768' });
      offers = true;
    } catch {
      offers = false;
    }
  }
  return offers;
}

/**
 * How long a post-quantum ClientHello may go unanswered before the
 * classical one is tried: half the handshake deadline (1.5 s by default).
 * The server's first flight comes one round trip after the ClientHello; a
 * segment of it lost on an ordinary path is sent again by TCP after its
 * retransmission timeout (200 ms plus the round trip on Linux), so a
 * ClientHello that merely lost a segment, even twice, is answered well within
 * it, and the classical retry keeps the other half.
 */
export function firstFlightWaitMs(handshakeTimeoutMs: number): number {
  return Math.floor(handshakeTimeoutMs / 2);
}

/** The group the handshake agreed, as OpenSSL names it ('X25519MLKEM768', 'X25519', 'prime256v1'); null when it doesn't say. */
export function agreedGroup(socket: tls.TLSSocket): string | null {
  // Node reports a hybrid group as { type: 'TLSGroup', name }, an elliptic curve as { type: 'ECDH', name, size }.
  const info = socket.getEphemeralKeyInfo() as { name?: unknown } | null;
  return info && typeof info.name === 'string' && info.name !== '' ? info.name : null;
}
