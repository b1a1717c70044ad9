/** PUT /api/system-dns: its body checked, and the system-DNS layer's typed errors as API failures. */
import { isSystemDnsError } from '../system-dns/errors.js';
import { ApiFailure, validationFailure } from './errors.js';

export const NOT_MANAGED = "this dotstub does not manage the system's DNS: start it with --system-dns (the dotstub service does), or use \"dotstub system-dns enable\"";

const PAUSE_MIN_SECONDS = 1;

/** The system-DNS layer's typed errors as API failures: code for scripts, the message for the user. */
export function systemDnsFailure(err: unknown): unknown {
  if (!isSystemDnsError(err)) return err;
  switch (err.code) {
    case 'SYSDNS_NEEDS_ROOT':
      return new ApiFailure(403, 'needs_root', err.message);
    case 'SYSDNS_ALREADY_ENABLED':
    case 'SYSDNS_NOT_ENABLED':
    case 'SYSDNS_BACKEND_UNAVAILABLE':
      return new ApiFailure(409, 'conflict', err.message);
    case 'SYSDNS_BAD_INPUT':
      return new ApiFailure(400, 'bad_request', err.message);
    default:
      return new ApiFailure(500, 'system_dns_failed', err.message);
  }
}

/** `{ enabled: boolean, pauseSeconds?: N }`, checked field by field (a validation failure otherwise). */
export function parseSystemDnsBody(raw: unknown): { enabled: boolean; pauseSeconds?: number } {
  if (typeof raw !== 'object' || raw === null || typeof (raw as { enabled?: unknown }).enabled !== 'boolean') {
    throw validationFailure({ enabled: 'send {"enabled": true} to point this machine\'s DNS at dotstub, {"enabled": false} to give the old DNS back' });
  }
  const extra = Object.keys(raw).filter((k) => k !== 'enabled' && k !== 'pauseSeconds');
  if (extra.length > 0) throw validationFailure(Object.fromEntries(extra.map((k) => [k, `unknown field "${k}"`])));
  const body = raw as { enabled: boolean; pauseSeconds?: unknown };
  if (body.pauseSeconds !== undefined) {
    const n = body.pauseSeconds;
    if (body.enabled || typeof n !== 'number' || !Number.isInteger(n) || n < PAUSE_MIN_SECONDS || n > 86_400) {
      throw validationFailure({ pauseSeconds: `a pause is {"enabled": false, "pauseSeconds": N} with N a whole number of seconds from ${PAUSE_MIN_SECONDS} to 86,400` });
    }
    return { enabled: body.enabled, pauseSeconds: n };
  }
  return { enabled: body.enabled };
}
