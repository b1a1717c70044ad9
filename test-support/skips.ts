/**
 * Why a test skips, said where `npm test` can list it. A test file that
 * skips (a lab it needs is missing, not root, dist/ not built) calls
 * `skipReason(import.meta.url, missing)` once beside its `skipIf`; the
 * reason is printed at once and appended to `DOTSTUB_SKIP_LOG` (set by
 * scripts/test.mjs), which the closing summary reads: every skip is listed
 * with its reason, and a skip with none recorded is called out as such.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Records `missing` as the reason `fileUrl`'s tests skip; does nothing when it is null/undefined/empty. */
export function skipReason(fileUrl: string, missing: string | null | undefined): void {
  if (!missing) return;
  const file = path.relative(REPO, fileURLToPath(fileUrl));
  console.warn(`${file}: skipped: ${missing}`);
  const log = process.env.DOTSTUB_SKIP_LOG;
  if (log) fs.appendFileSync(log, `${JSON.stringify({ file, reason: missing })}\n`);
}
