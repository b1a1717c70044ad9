/**
 * TLS for DoT: how a connection authenticates its server (CA and name, or
 * SPKI pins, RFC 7858 §4.2 / RFC 8310) and how TLS and connect failures are
 * put in words a user can act on.
 */
import crypto from 'node:crypto';
import tls from 'node:tls';
import { formatHostPort } from '../../host-port.js';

export type AuthMode = 'strict' | 'opportunistic';

export interface AuthPolicy {
  readonly mode: AuthMode;
  /** Extra trust anchors (PEM), added to the system store. */
  readonly ca: readonly (string | Buffer)[];
}

/**
 * The TLS context for a policy's trust anchors, built once and shared by
 * every connection (and every pool) with the same `ca` list. Building one
 * per connection parsed all ~140 system roots each time: ~20 ms of CPU and
 * 0.6–0.9 MB of native memory per reconnect that OpenSSL never gave back.
 * Undefined without extra anchors: Node's default context already holds the
 * system roots and is shared.
 */
const contexts = new WeakMap<readonly (string | Buffer)[], tls.SecureContext>();

export function secureContextFor(auth: AuthPolicy): tls.SecureContext | undefined {
  if (auth.ca.length === 0) return undefined;
  let ctx = contexts.get(auth.ca);
  if (!ctx) {
    ctx = tls.createSecureContext({ ca: [...tls.rootCertificates, ...auth.ca], minVersion: 'TLSv1.2' });
    contexts.set(auth.ca, ctx);
  }
  return ctx;
}

const UNKNOWN_CA = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
]);

/** A reason a user can read for a certificate that failed to verify. */
export function describeCertError(code: string, authName: string | undefined, address: string): string {
  const who = authName ?? address;
  if (UNKNOWN_CA.has(code)) return `certificate for ${who} was issued by an unknown CA: TLS interception? (${code})`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') {
    return `certificate presented at ${address} is not valid for ${who}: wrong server or TLS interception? (${code})`;
  }
  if (code === 'CERT_HAS_EXPIRED') return `certificate for ${who} has expired (${code})`;
  if (code === 'CERT_NOT_YET_VALID') return `certificate for ${who} is not valid yet: check the clock (${code})`;
  return `certificate for ${who} did not verify (${code})`;
}

/** A reason a user can read for a TCP connect that failed. */
export function describeConnectError(err: NodeJS.ErrnoException, address: string, port: number): string {
  const where = formatHostPort(address, port);
  switch (err.code) {
    case 'ECONNREFUSED':
      return `cannot connect to ${where}: connection refused (nothing listening, or this network rejects port ${port}) (ECONNREFUSED)`;
    case 'ECONNRESET':
      return `cannot connect to ${where}: the connection was reset during the TLS handshake: a middlebox blocking DNS over TLS? (ECONNRESET)`;
    case 'ENETUNREACH':
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

export function chainPins(socket: tls.TLSSocket): string[] {
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
