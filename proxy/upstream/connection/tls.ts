/**
 * TLS for a resolver's connection, shared by DoT and DoH so that neither
 * transport is a weaker path than the other (docs/networks.md#the-fallback-ladder: one identity across
 * DoT and DoH only when each endpoint is authenticated on its own):
 * authenticating the server (CA and name, or SPKI pins, RFC 7858 §4.2 /
 * RFC 8310), the TLS context per set of trust anchors, and TLS and connect
 * failures put in words a user can act on.
 *
 * Authentication order (RFC 8310 §8, RFC 7858 §4.2): a resumed session was
 * authenticated when its ticket was issued; else SPKI pins, when configured,
 * decide alone; else the CA chain plus the authentication name. Strict mode
 * refuses anything else; opportunistic mode proceeds, recorded as unverified.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { formatHostPort } from '../../runtime/host-port.js';
import { CertificateError, ConnectFailedError, ConnectionClosedError, PinMismatchError, UNKNOWN_ISSUER_CODES, type DotstubError } from '../../errors.js';
import type { AuthMode, AuthPolicy } from '../auth-policy.js';
import type { CloseReason } from './contract.js';
import { CLASSICAL_GROUPS } from './key-agreement.js';
import { hasDefaultRoute } from '../../runtime/default-route.js';

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

/**
 * The TLS context for a policy's trust anchors, built once and shared by
 * every connection (and every pool) with the same `ca` list. Building one
 * per connection parsed all ~140 system roots each time: ~20 ms of CPU and
 * 0.6–0.9 MB of native memory per reconnect that OpenSSL never gave back.
 * Undefined without extra anchors: Node's default context already holds the
 * system roots and is shared. The groups offered are the context's
 * (tls.connect ignores `ecdhCurve` beside a `secureContext`), so a
 * connection that offers classical key agreement only (key-agreement.ts) has
 * a context of its own, shared the same way.
 */
const contexts = new WeakMap<readonly (string | Buffer)[], tls.SecureContext>();
const classicalContexts = new WeakMap<readonly (string | Buffer)[], tls.SecureContext>();
let classicalDefault: tls.SecureContext | undefined;

export function secureContextFor(auth: AuthPolicy, classical = false): tls.SecureContext | undefined {
  if (auth.ca.length === 0) {
    if (!classical) return undefined;
    classicalDefault ??= tls.createSecureContext({ minVersion: 'TLSv1.2', ecdhCurve: CLASSICAL_GROUPS });
    return classicalDefault;
  }
  const cache = classical ? classicalContexts : contexts;
  let ctx = cache.get(auth.ca);
  if (!ctx) {
    ctx = tls.createSecureContext({ ca: [...tls.rootCertificates, ...auth.ca], minVersion: 'TLSv1.2', ...(classical ? { ecdhCurve: CLASSICAL_GROUPS } : {}) });
    cache.set(auth.ca, ctx);
  }
  return ctx;
}


/** A reason a user can read for a certificate that failed to verify. */
function describeCertError(code: string, authName: string | undefined, address: string): string {
  const who = authName ?? address;
  if (UNKNOWN_ISSUER_CODES.has(code)) return `certificate for ${who} was issued by an unknown CA: TLS interception? (${code})`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') {
    return `certificate presented at ${address} is not valid for ${who}: wrong server or TLS interception? (${code})`;
  }
  if (code === 'CERT_HAS_EXPIRED') return `certificate for ${who} has expired (${code})`;
  if (code === 'CERT_NOT_YET_VALID') return `certificate for ${who} is not valid yet: check the clock (${code})`;
  return `certificate for ${who} did not verify (${code})`;
}

/** A reason a user can read for a TCP connect that failed. */
function describeConnectError(err: NodeJS.ErrnoException, address: string, port: number): string {
  const where = formatHostPort(address, port);
  switch (err.code) {
    case 'ECONNREFUSED':
      return `cannot connect to ${where}: connection refused (nothing listening, or this network rejects port ${port}) (ECONNREFUSED)`;
    case 'ECONNRESET':
      return `cannot connect to ${where}: the connection was reset during the TLS handshake (ECONNRESET)`;
    case 'ENETUNREACH':
      // No default route of that family: this machine is offline (or the family is missing here: an IPv4-only network).
      if (!hasDefaultRoute(net.isIPv6(address) ? 6 : 4)) {
        if (net.isIPv6(address)) return `cannot connect to ${where}: this network has no IPv6 route (offline, or an IPv4-only network) (${err.code})`;
        // No IPv4 route but IPv6: an IPv6-only network, and no NAT64 prefix is known to reach IPv4 through.
        if (hasDefaultRoute(6)) return `cannot connect to ${where}: this network has no IPv4 (IPv6 only): give your resolver's IPv6 address (${err.code})`;
        return `cannot connect to ${where}: this machine is offline (no route beyond its own network) (${err.code})`;
      }
      return `cannot connect to ${where}: no route to the resolver from this network (${err.code})`;
    case 'EHOSTUNREACH':
      return `cannot connect to ${where}: no route to the resolver: offline? (${err.code})`;
    case 'ETIMEDOUT':
      return `cannot connect to ${where}: port ${port} timed out from this network (ETIMEDOUT)`;
    default:
      if (err.code?.startsWith('ERR_SSL_')) {
        const alert = err.code.replace(/^ERR_SSL_(TLSV1_ALERT_|SSLV3_ALERT_)?/, '').toLowerCase().replace(/_/g, ' ');
        return `the TLS handshake with ${where} failed (${alert}): not a DNS-over-TLS server, or a middlebox interfering? (${err.code})`;
      }
      return `cannot connect to ${where}: ${err.code ?? err.message}`;
  }
}

function spkiPin(cert: tls.PeerCertificate): string | undefined {
  // `cert.pubkey` is the bare key for EC certificates; the pin is over the DER
  // SubjectPublicKeyInfo (RFC 7469 §2.4), so derive it from the certificate.
  if (!cert.raw) return undefined;
  const spki = new crypto.X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' });
  return crypto.createHash('sha256').update(spki).digest('base64');
}

function chainPins(socket: tls.TLSSocket): string[] {
  const pins: string[] = [];
  let cert: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  const seen = new Set<tls.DetailedPeerCertificate>();
  while (cert && Object.keys(cert).length > 0 && !seen.has(cert)) {
    seen.add(cert);
    const pin = spkiPin(cert);
    if (pin) pins.push(pin);
    cert = cert.issuerCertificate;
  }
  return pins;
}
