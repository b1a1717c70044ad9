/**
 * Errors from the control client, with stable codes from the product's
 * vocabulary (proxy/error-codes.ts): callers branch on `err.code`, never on
 * message text (as undici's lib/core/errors.js does). An error answer from
 * the API keeps the API's own code ('validation', 'resolver_in_use', …) in
 * `code`, as the dashboard's client does; the client's own failures are
 * 'timeout', 'unreachable', 'aborted', 'bad_response' and 'http' (an error
 * answer that was not the API's). Every error has a `hint`: what to do.
 */
import { CLIENT_ERRORS, errorWordsOf, type ClientErrorCode, type ControlErrorCode, type FieldCode } from '../../error-codes.js';

export type { ControlErrorCode };

export abstract class ControlError extends Error {
  abstract readonly code: ControlErrorCode;
  /** What to do about it. */
  abstract readonly hint: string;
}

abstract class ClientError extends ControlError {
  abstract override readonly code: ClientErrorCode;
  get hint(): string {
    return CLIENT_ERRORS[this.code].hint;
  }
}

/** No complete answer within the deadline. */
export class ControlTimeoutError extends ClientError {
  readonly code = 'timeout';
  override readonly name = 'ControlTimeoutError';
}

/** Connection refused, reset or closed before an answer (the proxy is down or restarting). */
export class ControlUnreachableError extends ClientError {
  readonly code = 'unreachable';
  override readonly name = 'ControlUnreachableError';
}

/** The caller aborted (AbortSignal) or closed the client. */
export class ControlAbortedError extends ClientError {
  readonly code = 'aborted';
  override readonly name = 'ControlAbortedError';
}

/** The answer was not what the API promises (not JSON, wrong content type). */
export class ControlBadResponseError extends ClientError {
  readonly code = 'bad_response';
  override readonly name = 'ControlBadResponseError';
}

/** What an ApiError answer says, as the client keeps it. */
export interface ApiErrorDetail {
  readonly hint?: string;
  readonly field?: string;
  readonly fields?: Readonly<Record<string, string>>;
  readonly fieldCodes?: Readonly<Record<string, FieldCode>>;
}

/** The API answered with an error status; `code` is the API's own code ('http' when the answer was not an ApiError). */
export class ControlHttpError extends ControlError {
  override readonly name = 'ControlHttpError';
  readonly code: ControlErrorCode;
  readonly status: number;
  readonly hint: string;
  readonly field: string | undefined;
  readonly fields: Readonly<Record<string, string>>;
  readonly fieldCodes: Readonly<Record<string, FieldCode>>;
  constructor(status: number, code: ControlErrorCode, message: string, detail: ApiErrorDetail = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.hint = detail.hint ?? errorWordsOf(code).hint;
    this.field = detail.field;
    this.fields = detail.fields ?? {};
    this.fieldCodes = detail.fieldCodes ?? {};
  }
}

function isControlError(err: unknown): err is ControlError {
  return err instanceof ControlError;
}

/** What the app tells the user about a failed call: what happened, then what to do. */
export function failureWords(err: unknown): string {
  if (isControlError(err)) return /[.?!]$/.test(err.message) ? `${err.message} ${err.hint}` : `${err.message}. ${err.hint}`;
  return err instanceof Error ? err.message : String(err);
}
