/**
 * Request bodies are checked with zod schemas (loaded on first use: see
 * files/zod.ts), each field's failure as a sentence and a FieldCode
 * (errors.ts: zodFailure). A body that fails changes nothing.
 */
import type { z } from 'zod';
import { lazily } from '../../files/zod.js';
import { validationFailure, zodFailure } from '../errors.js';

export { lazily };

/**
 * The body as the schema's type, or a 400 validation failure. Anything but
 * a JSON object is refused as a whole ('(body)', wrong_type) with `example`.
 */
export function parseBody<S extends z.ZodType>(schema: S, raw: unknown, example: string): z.output<S> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw validationFailure({ '(body)': `send a JSON object, e.g. ${example}` }, { '(body)': 'wrong_type' });
  }
  const r = schema.safeParse(raw);
  if (!r.success) throw zodFailure(r.error.issues, raw);
  return r.data;
}
