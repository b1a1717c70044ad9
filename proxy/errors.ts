/**
 * Typed errors with stable codes. Code branches on `err.code`, never on the
 * message text; messages are written for the user who reads them in the CLI
 * or the dashboard.
 */

export type ErrorCode =
  | 'DOTSTUB_CONFIG'
  | 'DOTSTUB_BAD_RESOLVER'
  | 'DOTSTUB_BAD_PIN'
  | 'DOTSTUB_LISTEN'
  | 'DOTSTUB_CONNECT_TIMEOUT'
  | 'DOTSTUB_CONNECT_FAILED'
  | 'DOTSTUB_CERTIFICATE'
  | 'DOTSTUB_PIN_MISMATCH'
  | 'DOTSTUB_CONNECTION_CLOSED'
  | 'DOTSTUB_QUERY_TIMEOUT'
  | 'DOTSTUB_IN_FLIGHT_CAP'
  | 'DOTSTUB_POOL_CLOSED'
  | 'DOTSTUB_QUARANTINED'
  | 'DOTSTUB_MALFORMED'
  | 'DOTSTUB_QUESTION_MISMATCH'
  | 'DOTSTUB_HTTP_STATUS'
  | 'DOTSTUB_HTTP_STREAM'
  | 'DOTSTUB_CAPTIVE_HELD'
  | 'DOTSTUB_CLEARTEXT_FAILED';

export class DotstubError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Invalid configuration or command-line input; the message says what to do. */
export class ConfigError extends DotstubError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('DOTSTUB_CONFIG', message, options);
  }
}

export class ResolverSpecError extends DotstubError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('DOTSTUB_BAD_RESOLVER', message, options);
  }
}

export class PinFormatError extends DotstubError {
  constructor(message: string) {
    super('DOTSTUB_BAD_PIN', message);
  }
}

export class ListenError extends DotstubError {
  readonly address: string;
  readonly port: number;
  constructor(message: string, address: string, port: number, options?: { cause?: unknown }) {
    super('DOTSTUB_LISTEN', message, options);
    this.address = address;
    this.port = port;
  }
}

/** The TCP connect plus TLS handshake did not finish within the deadline. */
/** Where a connection attempt was when it failed: the TCP connect, or the TLS handshake after it. */
export type ConnectPhase = 'connect' | 'handshake';

export class ConnectTimeoutError extends DotstubError {
  readonly phase: ConnectPhase;
  constructor(message: string, phase: ConnectPhase = 'connect') {
    super('DOTSTUB_CONNECT_TIMEOUT', message);
    this.phase = phase;
  }
}

export class ConnectFailedError extends DotstubError {
  readonly phase: ConnectPhase;
  constructor(message: string, options?: { cause?: unknown }, phase: ConnectPhase = 'connect') {
    super('DOTSTUB_CONNECT_FAILED', message, options);
    this.phase = phase;
  }
}

/** OpenSSL's codes for a chain that ends at no trusted root: an unknown CA issued the certificate (TLS interception?). */
export const UNKNOWN_ISSUER_CODES: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
]);

/** Strict authentication failed: the server's certificate did not verify. */
export class CertificateError extends DotstubError {
  /** OpenSSL/Node code, e.g. SELF_SIGNED_CERT_IN_CHAIN or ERR_TLS_CERT_ALTNAME_INVALID. */
  readonly tlsCode: string;
  /** Who issued the certificate presented (its issuer's O or CN), to name an interceptor. */
  readonly issuer: string | undefined;
  constructor(message: string, tlsCode: string, options?: { cause?: unknown; issuer?: string | undefined }) {
    super('DOTSTUB_CERTIFICATE', message, options);
    this.tlsCode = tlsCode;
    this.issuer = options?.issuer;
  }
}

/** No certificate in the server's chain matched the configured SPKI pins. */
export class PinMismatchError extends DotstubError {
  readonly issuer: string | undefined;
  /** The chain presented was valid for a root this machine trusts: a re-signing proxy, not a stranger. */
  readonly trustedChain: boolean;
  constructor(message: string, details: { issuer?: string | undefined; trustedChain?: boolean } = {}) {
    super('DOTSTUB_PIN_MISMATCH', message);
    this.issuer = details.issuer;
    this.trustedChain = details.trustedChain ?? false;
  }
}

/**
 * The server failed authentication (its certificate, or the pin): someone may
 * be intercepting TLS. Never routed around (docs/networks.md#the-fallback-ladder,
 * step 2), and the most telling failure of a connection race.
 */
export function isInterception(err: DotstubError | undefined): boolean {
  return err?.code === 'DOTSTUB_CERTIFICATE' || err?.code === 'DOTSTUB_PIN_MISMATCH';
}

/** The connection closed (reset, idle close, server close) with the query pending. */
export class ConnectionClosedError extends DotstubError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('DOTSTUB_CONNECTION_CLOSED', message, options);
  }
}

export class QueryTimeoutError extends DotstubError {
  constructor(message: string) {
    super('DOTSTUB_QUERY_TIMEOUT', message);
  }
}

/** Backpressure: every connection is at its in-flight cap. */
export class InFlightCapError extends DotstubError {
  constructor(message: string) {
    super('DOTSTUB_IN_FLIGHT_CAP', message);
  }
}

export class PoolClosedError extends DotstubError {
  constructor(message: string) {
    super('DOTSTUB_POOL_CLOSED', message);
  }
}

/** A question the resolver closed the connection over twice: answered SERVFAIL here for a while, so it can't take other queries down with it. */
export class QuarantinedError extends DotstubError {
  constructor(message: string) {
    super('DOTSTUB_QUARANTINED', message);
  }
}

export class MalformedMessageError extends DotstubError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('DOTSTUB_MALFORMED', message, options);
  }
}

/** An answer that doesn't echo the question asked (RFC 7858 §3.3): dropped, never relayed. */
export class QuestionMismatchError extends DotstubError {
  readonly asked: { readonly name: string; readonly type: string; readonly class: string };
  readonly got: { readonly name: string; readonly type: string; readonly class: string } | undefined;
  constructor(asked: QuestionMismatchError['asked'], got: QuestionMismatchError['got']) {
    super('DOTSTUB_QUESTION_MISMATCH', `answer for ${got ? `${got.name} ${got.type}` : 'no question'} does not match the query for ${asked.name} ${asked.type}`);
    this.asked = asked;
    this.got = got;
  }
}

/** A DoH server answered with an HTTP status other than 200 (RFC 8484 §4.2.1). */
export class HttpStatusError extends DotstubError {
  readonly status: number;
  constructor(message: string, status: number) {
    super('DOTSTUB_HTTP_STATUS', message);
    this.status = status;
  }
}

/** A DoH request's HTTP/2 stream was reset or broke off (RFC 9113 §5.4.2) while the connection stayed up. */
export class HttpStreamError extends DotstubError {
  /** The RST_STREAM error code (RFC 9113 §7), 0 when unknown. */
  readonly h2Code: number;
  constructor(message: string, h2Code: number, options?: { cause?: unknown }) {
    super('DOTSTUB_HTTP_STREAM', message, options);
    this.h2Code = h2Code;
  }
}

/**
 * Signing in to a captive portal: only the names the sign-in needs are looked
 * up (in cleartext, at the network's resolver); this one isn't one of them.
 */
export class CaptiveHeldError extends DotstubError {
  constructor(message: string) {
    super('DOTSTUB_CAPTIVE_HELD', message);
  }
}

/** The network's own resolver (cleartext, captive sign-in or degraded mode) didn't answer usably. */
export class CleartextFailedError extends DotstubError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('DOTSTUB_CLEARTEXT_FAILED', message, options);
  }
}

export function isDotstubError(err: unknown): err is DotstubError {
  return err instanceof DotstubError;
}
