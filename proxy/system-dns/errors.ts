/**
 * Typed errors of the system-DNS takeover. Code branches on `err.code`; the
 * message says what the user can do about it.
 */
export type SystemDnsErrorCode =
  /** Changing system DNS needs root (or the service). */
  | 'SYSDNS_NEEDS_ROOT'
  /** Bad flags or arguments: nothing was changed. */
  | 'SYSDNS_BAD_INPUT'
  /** The chosen backend can't work on this machine (e.g. resolved not running, port not 53). */
  | 'SYSDNS_BACKEND_UNAVAILABLE'
  /** The journal exists but can't be read or written. */
  | 'SYSDNS_JOURNAL'
  /** The journal asks for something outside what root does for dotstub (journal-trust.ts): nothing of it was done. */
  | 'SYSDNS_JOURNAL_REFUSED'
  /** A step failed while enabling; what was applied has been restored. */
  | 'SYSDNS_APPLY_FAILED'
  /** Restoring failed for at least one step; the journal is kept so it can be retried. */
  | 'SYSDNS_RESTORE_FAILED'
  /** A takeover owned by a live process is already in force. */
  | 'SYSDNS_ALREADY_ENABLED'
  /** Nothing to pause or act on: the takeover isn't held. */
  | 'SYSDNS_NOT_ENABLED';

export class SystemDnsError extends Error {
  readonly code: SystemDnsErrorCode;
  constructor(code: SystemDnsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'SystemDnsError';
  }
}

export function isSystemDnsError(err: unknown): err is SystemDnsError {
  return err instanceof SystemDnsError;
}

export const NEEDS_ROOT = 'needs root: run with sudo, or install the service (packaging/dotstub.service)';
