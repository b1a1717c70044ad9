/**
 * How long a connection may stay idle once the server announced its own
 * idle timeout (RFC 7828 edns-tcp-keepalive). A client that closes exactly
 * at the server's timeout races the server's own close: unbound 1.17 and
 * BIND 9.18 close at the very moment they announced, so our idle close
 * and theirs cross, and a query written in that moment meets a closed
 * connection (a retry and a new handshake). RFC 7766 §6.2.3 asks the
 * client to close idle connections; so close a little before the server
 * would: a tenth of its timeout, at least 100 ms (its unit) and at most a
 * second, never more than half of it.
 */

/** The idle time to keep a connection whose server announced `announcedMs` (> 0), never more than `ownMs`. */
export function idleWithinKeepalive(announcedMs: number, ownMs: number): number {
  const margin = Math.min(Math.max(announcedMs / 10, 100), 1000, announcedMs / 2);
  return Math.min(ownMs, announcedMs - margin);
}
