/**
 * Authenticating a resolver's TLS server, shared by DoT and DoH: the same
 * decision for both, so neither transport is a weaker path than the other
 * (NETWORK.md: one identity across DoT and DoH only when each endpoint is
 * authenticated on its own).
 *
 * Order (RFC 8310 §8, RFC 7858 §4.2): a resumed session was authenticated
 * when its ticket was issued; else SPKI pins, when configured, decide alone;
 * else the CA chain plus the authentication name. Strict mode refuses
 * anything else; opportunistic mode proceeds, recorded as unverified.
 */
import type tls from 'node:tls';
import { CertificateError, ConnectFailedError, ConnectionClosedError, PinMismatchError, type DotstubError } from '../errors.js';
import type { CloseReason } from './connection.js';
import { chainPins, describeCertError, describeConnectError, type AuthMode } from './dot/tls.js';

export interface PeerIdentity {
  readonly mode: AuthMode;
  readonly pins: readonly string[];
  /** The name the certificate must be valid for (DoT: the auth name; DoH: the URL host); undefined: none configured. */
  readonly authName: string | undefined;
  /** The address connected to, for messages. */
  readonly address: string;
  /** The resolver's label, for messages. */
  readonly label: string;
}

export type PeerAuthentication =
  | { readonly ok: true; readonly verified: boolean; readonly authError: string | undefined }
  | { readonly ok: false; readonly error: DotstubError };

/**
 * Decides, on 'secureConnect' of a socket made with rejectUnauthorized:
 * false (so that opportunistic mode can go on and strict mode can say why it
 * refused), whether the connection may carry queries. Nothing may be written
 * before this returns ok.
 */
export function authenticatePeer(socket: tls.TLSSocket, who: PeerIdentity, resumed: boolean): PeerAuthentication {
  // The ticket came from a connection that passed authentication; the PSK proves this server holds it.
  if (resumed) return { ok: true, verified: true, authError: undefined };
  if (who.pins.length > 0) {
    const presented = chainPins(socket);
    if (presented.some((p) => who.pins.includes(p))) return { ok: true, verified: true, authError: undefined };
    const authError = `no certificate from ${who.address} matches the SPKI pins for ${who.label}: TLS interception or a changed key? (presented ${presented.join(', ') || 'none'})`;
    const details = { issuer: issuerOf(socket), trustedChain: socket.authorized };
    return who.mode === 'strict' ? { ok: false, error: new PinMismatchError(authError, details) } : { ok: true, verified: false, authError };
  }
  if (socket.authorized && who.authName !== undefined) return { ok: true, verified: true, authError: undefined };
  const code = who.authName === undefined ? 'NO_AUTH_NAME' : String(socket.authorizationError ?? 'UNKNOWN');
  const authError =
    code === 'NO_AUTH_NAME'
      ? `no authentication name or SPKI pin is configured for ${who.address}`
      : describeCertError(code, who.authName, who.address);
  if (who.mode === 'strict') return { ok: false, error: new CertificateError(`refused ${who.address}: ${authError}`, code, { issuer: issuerOf(socket) }) };
  return { ok: true, verified: false, authError };
}

/** The presented certificate's issuer, as people know it (organisation, else common name). */
function issuerOf(socket: tls.TLSSocket): string | undefined {
  const issuer = socket.getPeerCertificate()?.issuer as { O?: string | string[]; CN?: string | string[] } | undefined;
  const pick = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
  return pick(issuer?.O) ?? pick(issuer?.CN);
}

/**
 * What a socket error means for a DoT or DoH connection: before it opened,
 * a connect failure in the phase it reached (TCP, or the TLS handshake after
 * it: the classification tells a filter that resets ClientHellos from a
 * closed port); after, a reset or error that ends the queries in flight.
 */
export function socketFailure(
  err: NodeJS.ErrnoException,
  where: { readonly connecting: boolean; readonly tcpConnected: boolean; readonly address: string; readonly port: number },
): { readonly reason: CloseReason; readonly error: DotstubError } {
  if (where.connecting) {
    const phase = where.tcpConnected ? 'handshake' : 'connect';
    return { reason: 'error', error: new ConnectFailedError(describeConnectError(err, where.address, where.port), { cause: err }, phase) };
  }
  return {
    reason: err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'reset' : 'error',
    error: new ConnectionClosedError(`connection to ${where.address} failed: ${err.code ?? err.message}`, { cause: err }),
  };
}
