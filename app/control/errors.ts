/**
 * Errors from the control client, with stable codes: callers branch on
 * `err.code`, never on message text (as undici's lib/core/errors.js does).
 */
export type ControlErrorCode =
  | 'control_timeout'
  | 'control_unreachable'
  | 'control_http'
  | 'control_bad_response'
  | 'control_aborted';

export abstract class ControlError extends Error {
  abstract readonly code: ControlErrorCode;
}

/** No complete answer within the deadline. */
export class ControlTimeoutError extends ControlError {
  readonly code = 'control_timeout';
  override readonly name = 'ControlTimeoutError';
}

/** Connection refused, reset or closed before an answer (the proxy is down or restarting). */
export class ControlUnreachableError extends ControlError {
  readonly code = 'control_unreachable';
  override readonly name = 'ControlUnreachableError';
}

/** The caller aborted (AbortSignal) or closed the client. */
export class ControlAbortedError extends ControlError {
  readonly code = 'control_aborted';
  override readonly name = 'ControlAbortedError';
}

/** The API answered with an error status; `apiCode` is the API's own stable code ('validation', 'not_found', …). */
export class ControlHttpError extends ControlError {
  readonly code = 'control_http';
  override readonly name = 'ControlHttpError';
  readonly status: number;
  readonly apiCode: string;
  readonly fields: Readonly<Record<string, string>>;
  constructor(status: number, apiCode: string, message: string, fields: Readonly<Record<string, string>> = {}) {
    super(message);
    this.status = status;
    this.apiCode = apiCode;
    this.fields = fields;
  }
}

/** The answer was not what the API promises (not JSON, wrong content type). */
export class ControlBadResponseError extends ControlError {
  readonly code = 'control_bad_response';
  override readonly name = 'ControlBadResponseError';
}

export function isControlError(err: unknown): err is ControlError {
  return err instanceof ControlError;
}
