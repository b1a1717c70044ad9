/**
 * What a network did to an encrypted-DNS connection, from the typed error
 * the connection failed with (docs/networks.md#middleboxes): a
 * stable code for programs, a sentence for people. Pure: no I/O.
 */
import { CertificateError, ConnectFailedError, ConnectTimeoutError, PinMismatchError, UNKNOWN_ISSUER_CODES, type DotstubError } from '../errors.js';

export type FailureKind =
  | 'dropped'
  | 'refused'
  | 'unreachable'
  | 'reset-after-hello'
  | 'handshake-stall'
  | 'intercepted'
  | 'name-mismatch'
  | 'resigned'
  | 'not-tls'
  | 'other';

export interface Classification {
  readonly kind: FailureKind;
  /** Stable, for programs: `NET_DROPPED`, `NET_INTERCEPTED`, … */
  readonly code: string;
  /** For people: what happened, in words a non-expert understands. */
  readonly sentence: string;
  /** Interception (a certificate or pin failure): never a reason to fall back to a weaker path. */
  readonly interception: boolean;
}


function of(kind: FailureKind, sentence: string, interception = false): Classification {
  return { kind, code: `NET_${kind.toUpperCase().replace(/-/g, '_')}`, sentence, interception };
}

function errnoOf(err: DotstubError): string | undefined {
  return (err.cause as NodeJS.ErrnoException | undefined)?.code;
}

/** `port` is the port the connection went to (853 for DoT, 443 for DoH), `what` the resolver as users know it. */
export function classifyFailure(err: DotstubError, port: number, what: string): Classification {
  if (err instanceof ConnectTimeoutError) {
    return err.phase === 'handshake'
      ? of('handshake-stall', `Encrypted DNS stalls on this network: the connection to ${what} opened, but the secure handshake never finished.`)
      : of('dropped', `Port ${port} gets no answer here: this network probably blocks encrypted DNS to ${what}.`);
  }
  if (err instanceof ConnectFailedError) {
    const errno = errnoOf(err);
    if (errno === 'ECONNREFUSED') return of('refused', `This network refuses encrypted DNS connections to ${what} (port ${port}).`);
    if (errno === 'EHOSTUNREACH' || errno === 'ENETUNREACH') return of('unreachable', `${what} can't be reached from here: no route (offline, or the network blocks it).`);
    if (errno === 'ECONNRESET' || errno === 'EPIPE') {
      return err.phase === 'handshake'
        ? of('reset-after-hello', `This network cuts encrypted DNS connections to ${what} as they start (filtering by name).`)
        : of('refused', `This network resets connections to ${what} (port ${port}).`);
    }
    if (errno?.startsWith('ERR_SSL_')) return of('not-tls', `Something at ${what}'s address answered, but not as an encrypted DNS server would.`);
    return of('other', `Couldn't connect to ${what}: ${err.message}`);
  }
  if (err instanceof CertificateError) {
    if (UNKNOWN_ISSUER_CODES.has(err.tlsCode)) {
      const by = err.issuer ? `, issued by ${err.issuer}` : '';
      return of('intercepted', `Someone is intercepting encrypted DNS: the certificate presented for ${what} isn't from a trusted authority${by}.`, true);
    }
    if (err.tlsCode === 'ERR_TLS_CERT_ALTNAME_INVALID' || err.tlsCode === 'HOSTNAME_MISMATCH') {
      return of('name-mismatch', `The server that answered is not ${what}: its certificate is for another name (a wrong address, or interception).`, true);
    }
    return of('other', `${what}'s certificate did not verify (${err.tlsCode}).`, true);
  }
  if (err instanceof PinMismatchError) {
    return err.trustedChain
      ? of('resigned', `A security product on this machine or network re-signs encrypted connections${err.issuer ? ` (issuer ${err.issuer})` : ''}: ${what}'s pinned key was replaced.`, true)
      : of('intercepted', `The key presented for ${what} doesn't match its pin${err.issuer ? ` (issued by ${err.issuer})` : ''}: interception, or the resolver changed its key.`, true);
  }
  return of('other', err.message);
}
