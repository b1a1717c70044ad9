/**
 * The one error both clients of the control API throw (the desktop app's
 * ControlClient, the dashboard's api), with a stable code from the product's
 * vocabulary (proxy/error-codes.ts): callers branch on `err.code` (and
 * `status`), never on message text (as undici's lib/core/errors.js does).
 *
 * - An error answer from the API keeps the API's own code ('validation',
 *   'resolver_in_use', …), its status, its hint and the fields at fault.
 * - A failure on the way to an answer has status 0 and the client's code:
 *   'timeout', 'unreachable', 'aborted', 'bad_response', 'signed_out' (the
 *   dashboard has no token to send). 'http' is an error answer that was not
 *   the API's.
 *
 * Every error has a `hint`: what to do.
 */
import type { ApiError } from '../api-types.js';
import { errorWordsOf, type ControlErrorCode, type FieldCode } from '../../error-codes.js';

export type { ControlErrorCode };

/** What an ApiError answer says beside its code and message, as the client keeps it. */
interface ErrorDetail {
  readonly hint?: string;
  readonly field?: string;
  readonly fields?: Readonly<Record<string, string>>;
  readonly fieldCodes?: Readonly<Record<string, FieldCode>>;
  readonly cause?: unknown;
}

export class ControlError extends Error {
  override readonly name = 'ControlError';
  /** The API's answer status; 0 when there was no answer (the client's own failures). */
  readonly status: number;
  readonly code: ControlErrorCode;
  /** What to do about it. */
  readonly hint: string;
  /** The first field at fault (validation failures). */
  readonly field: string | undefined;
  /** Per-field messages: field name → what is wrong and what to do. */
  readonly fields: Readonly<Record<string, string>>;
  /** Per-field codes: field name → which kind of wrong. */
  readonly fieldCodes: Readonly<Record<string, FieldCode>>;

  constructor(status: number, code: ControlErrorCode, message: string, detail: ErrorDetail = {}) {
    super(message, detail.cause === undefined ? undefined : { cause: detail.cause });
    this.status = status;
    this.code = code;
    this.hint = detail.hint ?? errorWordsOf(code).hint;
    this.field = detail.field;
    this.fields = detail.fields ?? {};
    this.fieldCodes = detail.fieldCodes ?? {};
  }
}

/**
 * An error answer (status outside 2xx) → ControlError: the API's code, hint
 * and fields when it sent an ApiError; else 'unauthorized' for a 401 and
 * 'http' for the rest, with the start of what it did send.
 */
export function answerError(status: number, text: string): ControlError {
  try {
    const body = JSON.parse(text) as Partial<ApiError>;
    const e = body.error;
    if (e && typeof e.code === 'string' && typeof e.message === 'string') {
      return new ControlError(status, e.code, e.message, { hint: e.hint, field: e.field, fields: e.fields, fieldCodes: e.fieldCodes });
    }
  } catch {
    // not an ApiError: fall through
  }
  if (status === 401) return new ControlError(401, 'unauthorized', 'the proxy did not accept the token');
  return new ControlError(status, 'http', `the control API answered ${status}${text ? `: ${text.slice(0, 200)}` : ''}`);
}

/** What the app or the dashboard tells the user about a failed call: what happened, then what to do. */
export function failureWords(err: unknown): string {
  if (!(err instanceof ControlError)) return err instanceof Error ? err.message : String(err);
  return /[.?!]$/.test(err.message) ? `${err.message} ${err.hint}` : `${err.message}. ${err.hint}`;
}
