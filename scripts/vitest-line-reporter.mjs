// A vitest reporter for the closing line of scripts/test.mjs: writes, to the
// file named by DOTSTUB_VITEST_REPORT, what vitest's own JSON report leaves
// out and the line needs to tell the truth (scripts/test-line.mjs reads it):
// the errors of each file and suite (a beforeAll, afterAll or import that
// threw), each test's declared mode beside its result (a test skipped because
// its suite could not start is not a test someone chose to skip), the reason
// a skip carries (test-support/skips.ts puts it in the test's meta), and the
// run's unhandled errors.
import fs from 'node:fs';

/** An error as one line: its message's first line. */
const line = (e) => String(e?.message ?? e ?? 'unknown error').split('\n')[0];

/**
 * Why `t` was skipped: the reason of the outermost skipped suite around it
 * (a test inside it may carry its own, a lesser one: the suite's is why it
 * did not run), else its own (its meta, or ctx.skip's note).
 */
function skipReason(t) {
  let reason;
  for (let s = t.parent; s && s.type === 'suite'; s = s.parent) {
    if (s.options.mode === 'skip' && s.meta().skipReason) reason = s.meta().skipReason;
  }
  const r = t.result();
  return reason ?? t.meta().skipReason ?? (r.state === 'skipped' ? r.note : undefined);
}

/** A file or suite and what is in it, the tests with the nearest suite that holds them. */
function entity(e) {
  return {
    name: e.type === 'module' ? '' : e.fullName,
    errors: e.errors().map(line),
    tests: [...e.children.tests()].map((t) => {
      const r = t.result();
      return {
        name: t.fullName,
        state: r.state,
        mode: t.options.mode,
        reason: r.state === 'skipped' ? skipReason(t) : undefined,
        errors: (r.errors ?? []).map(line),
      };
    }),
    suites: [...e.children.suites()].map(entity),
  };
}

export default class VitestLineReporter {
  onTestRunEnd(testModules, unhandledErrors) {
    const out = process.env.DOTSTUB_VITEST_REPORT;
    if (!out) return;
    const report = {
      files: testModules.map((m) => ({ file: m.moduleId, ...entity(m) })),
      unhandled: unhandledErrors.map((e) => ({ message: line(e), file: e.VITEST_TEST_PATH })),
    };
    fs.writeFileSync(out, JSON.stringify(report));
  }
}
