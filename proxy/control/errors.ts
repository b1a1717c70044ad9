/**
 * Errors the control API answers with. `code` is stable (the dashboard, the
 * app and scripts branch on it), from the product's vocabulary
 * (../error-codes.ts), which also gives the HTTP status and the default
 * `hint` (what to do); `message` says what happened this time. A validation
 * failure names its fields: `fields` (field → sentence, for forms) and
 * `fieldCodes` (field → FieldCode, for programs and tests); `field` is the
 * first of them.
 */
import { API_ERRORS, issueCodes, type ApiErrorCode, type FieldCode, type IssueLike } from '../error-codes.js';

export type { ApiErrorCode, FieldCode };

export interface ApiFailureOptions {
  /** What to do; default: the code's hint. */
  readonly hint?: string;
  readonly fields?: Readonly<Record<string, string>>;
  readonly fieldCodes?: Readonly<Record<string, FieldCode>>;
}

export class ApiFailure extends Error {
  readonly status: number;
  readonly code: ApiErrorCode;
  readonly hint: string;
  readonly fields: Readonly<Record<string, string>> | undefined;
  readonly fieldCodes: Readonly<Record<string, FieldCode>> | undefined;
  constructor(code: ApiErrorCode, message: string, options: ApiFailureOptions = {}) {
    super(message);
    this.name = 'ApiFailure';
    this.code = code;
    this.status = API_ERRORS[code].status;
    this.hint = options.hint ?? API_ERRORS[code].hint;
    this.fields = options.fields;
    this.fieldCodes = options.fieldCodes;
  }

  /** The first field at fault, if any. */
  get field(): string | undefined {
    return this.fields ? Object.keys(this.fields)[0] : undefined;
  }
}

/**
 * 400 validation: `fields` says what is wrong with each field, `codes` which
 * kind of wrong (a field without a code is 'bad_value').
 */
export function validationFailure(fields: Readonly<Record<string, string>>, codes: Readonly<Record<string, FieldCode>> = {}, message?: string): ApiFailure {
  const first = Object.entries(fields)[0];
  const fieldCodes = Object.fromEntries(Object.keys(fields).map((k) => [k, codes[k] ?? 'bad_value']));
  return new ApiFailure('validation', message ?? (first ? `${first[0]}: ${first[1]}` : 'invalid input'), { fields, fieldCodes });
}

/** A zod parse's failure as a validation failure: one sentence and one code per field ('(body)' for the body as a whole). */
export function zodFailure(issues: readonly (IssueLike & { readonly message: string })[], raw: unknown): ApiFailure {
  const fields: Record<string, string> = {};
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys ?? []) fields[[...issue.path.map(String), key].join('.')] ??= `unknown field "${key}": remove it or check its spelling`;
    } else {
      fields[issue.path.map(String).join('.') || '(body)'] ??= issue.message;
    }
  }
  return validationFailure(fields, issueCodes(issues, raw));
}
