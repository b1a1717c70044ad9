/**
 * Errors the control API answers with. `code` is stable (the dashboard and
 * scripts branch on it); `message` is for the user; `fields` for forms.
 */
import type { ApiErrorCode } from './api-types.js';

export type { ApiErrorCode };

export class ApiFailure extends Error {
  readonly status: number;
  readonly code: ApiErrorCode;
  readonly fields: Readonly<Record<string, string>> | undefined;
  constructor(status: number, code: ApiErrorCode, message: string, fields?: Readonly<Record<string, string>>) {
    super(message);
    this.name = 'ApiFailure';
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}

export function validationFailure(fields: Readonly<Record<string, string>>, message?: string): ApiFailure {
  const first = Object.entries(fields)[0];
  return new ApiFailure(400, 'validation', message ?? (first ? `${first[0]}: ${first[1]}` : 'invalid input'), fields);
}
