/**
 * Why a test skips, carried by the skip itself so that none can be
 * forgotten: `describe(title, skipWith(missing), …)` or
 * `test(title, skipWith(missing), …)` skips with `missing` as its reason
 * (a lab it needs is missing, not root, dist/ not built) and runs when
 * `missing` is null. The reason travels in the test's meta (inherited by
 * every test of a skipped describe) to vitest's reporters, and `npm test`
 * (scripts/test-line.mjs) lists each skip with it; a skip without one is
 * called out as a failure. A test that decides while running calls
 * `ctx.skip(reason)` (its note is read the same way).
 */
import type { TestOptions } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** Why this test is skipped (set by skipWith). */
    skipReason?: string;
  }
}

const said = new Set<string>();

/**
 * Options that skip a test or describe with `missing` as the reason (said
 * once on the console too, for a run of one file); none (it runs) when
 * `missing` is null/undefined/empty.
 */
export function skipWith(missing: string | null | undefined): TestOptions {
  if (!missing) return {};
  if (!said.has(missing)) console.warn(`skipped: ${missing}`);
  said.add(missing);
  return { skip: true, meta: { skipReason: missing } };
}
