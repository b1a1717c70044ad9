// The closing line of `npm test` (scripts/test.mjs), read from the runners'
// reports, never from their console text: "N passed, N failed, N skipped",
// with every skip listed with its reason and every failure named above it.
//
// What counts as what (test-support/test-line.test.ts holds it, on real runs):
// - A test that did not run because its file or suite failed (a beforeAll
//   that threw: a lab that cannot start), or because the run stopped before
//   it (Playwright: interrupted, or not run after an earlier failure or a
//   worker crash), FAILED: it is named under "Failed:" with "did not run".
// - A file or suite whose error no failed test already shows (an import that
//   threw, an afterAll that threw) is one failure; each unhandled error is one
//   failure; each error outside any test (Playwright's globalSetup, a spec
//   that throws while loading) is one failure. Also when tests failed too.
// - A test someone chose to skip is SKIPPED, listed with the reason it
//   carries (test-support/skips.ts: skipWith; Playwright's test.skip(…,
//   reason); vitest's ctx.skip(reason)). A skip with no reason is still
//   counted skipped, and each file that has one is one failure: every skip
//   must say why.
import path from 'node:path';

/** How many test names a file shows under "Failed:" before "… and N more". */
const NAMES_SHOWN = 5;
const NO_REASON = 'no reason given';

/** The first line of a message, without terminal colours. */
function firstLine(text) {
  // eslint-disable-next-line no-control-regex
  return String(text ?? '').replace(/\u001b\[[0-9;]*m/g, '').trim().split('\n')[0] ?? '';
}

export class TestLine {
  passed = 0;
  /** One entry a failure: where (a file or a check) and what (a test's name, an error). */
  failures = [];
  /** One entry a skipped test: where (its file) and why (undefined: none given). */
  skips = [];

  pass(n = 1) {
    this.passed += n;
  }

  fail(where, what) {
    this.failures.push({ where, what });
  }

  skip(where, why) {
    this.skips.push({ where, why: why || undefined });
  }

  get failed() {
    return this.failures.length + this.#reasonless().size;
  }

  get skipped() {
    return this.skips.length;
  }

  /** Files with skips that give no reason → how many. */
  #reasonless() {
    const files = new Map();
    for (const s of this.skips) if (!s.why) files.set(s.where, (files.get(s.where) ?? 0) + 1);
    return files;
  }

  /**
   * Adds a run of vitest, as scripts/vitest-line-reporter.mjs wrote it
   * (null: there is no report). `root`: file names are shown relative to it.
   */
  addVitest(report, root, exitedOk) {
    const before = this.failed;
    if (!report) {
      this.fail('vitest', 'wrote no report (it did not finish)');
      return;
    }
    for (const f of report.files) this.#vitestEntity(f, path.relative(root, f.file), undefined);
    for (const e of report.unhandled) this.fail(e.file ? path.relative(root, e.file) : 'vitest', `unhandled error: ${firstLine(e.message)}`);
    if (!exitedOk && this.failed === before) this.fail('vitest', 'exited non-zero, and its report names no failure');
  }

  /**
   * One file or suite: its tests, then its suites. `blocker`: the nearest
   * file or suite around it that failed, with how many tests its error kept
   * from running; a test that was never run (and is no skip of its own) did
   * not run because of it. An error that kept none from running (an import
   * that threw, an afterAll) is counted by itself, once.
   */
  #vitestEntity(entity, file, blocker) {
    const own = entity.errors.length > 0 ? { entity, kept: 0 } : blocker;
    for (const t of entity.tests) {
      if (t.state === 'passed') this.pass();
      else if (t.state === 'failed') this.fail(file, `"${t.name}" (${firstLine(t.errors[0])})`);
      else if (t.reason) this.skip(file, t.reason);
      else if (t.mode === 'todo') this.skip(file, 'not written yet (test.todo)');
      else if (t.state === 'pending' || ((t.mode === 'run' || t.mode === 'only') && own)) {
        // Never run: its suite or file could not start, or the run ended first.
        if (own) own.kept++;
        this.fail(file, `"${t.name}" did not run${own ? ` (${firstLine(own.entity.errors[0])})` : ''}`);
      } else this.skip(file, undefined);
    }
    for (const s of entity.suites) this.#vitestEntity(s, file, own);
    if (own && own.entity === entity && own.kept === 0) {
      for (const e of entity.errors) this.fail(file, `${entity.name ? `suite "${entity.name}"` : 'the file'} failed: ${firstLine(e)}`);
    }
  }

  /** Adds a run of Playwright, as its JSON reporter wrote it (null: there is no report); `root` as for addVitest. */
  addPlaywright(report, root, exitedOk) {
    const before = this.failed;
    if (!report) {
      this.fail('Playwright', 'wrote no report (it did not finish)');
      return;
    }
    for (const e of report.errors ?? []) this.fail(e.location?.file ? path.relative(root, e.location.file) : 'Playwright', `error outside any test: ${firstLine(e.message)}`);
    const walk = (suite, titles) => {
      for (const spec of suite.specs ?? []) {
        const name = [...titles, spec.title].join(' › ');
        for (const t of spec.tests ?? []) this.#playwrightTest(spec.file, name, t);
      }
      for (const child of suite.suites ?? []) walk(child, [...titles, child.title]);
    };
    for (const fileSuite of report.suites ?? []) walk(fileSuite, []);
    if (!exitedOk && this.failed === before) this.fail('Playwright', 'exited non-zero, and its report names no failure');
  }

  /** One test, as Playwright's own summary tells them apart (its "did not run" is not a skip). */
  #playwrightTest(file, name, t) {
    const results = t.results ?? [];
    if (t.status === 'expected' || t.status === 'flaky') this.pass();
    else if (t.status === 'unexpected') {
      const error = results.flatMap((r) => r.errors ?? [])[0];
      this.fail(file, `"${name}"${error ? ` (${firstLine(error.message)})` : ''}`);
    } else if (results.some((r) => r.status === 'interrupted')) this.fail(file, `"${name}" did not run (interrupted)`);
    else if (!results.length || t.expectedStatus !== 'skipped') this.fail(file, `"${name}" did not run (an earlier failure or a crashed worker stopped it)`);
    else {
      const notes = [...(t.annotations ?? []), ...results.flatMap((r) => r.annotations ?? [])];
      this.skip(file, notes.find((a) => (a.type === 'skip' || a.type === 'fixme') && a.description)?.description);
    }
  }

  /** The lines `npm test` ends with: the skips with their reasons, the failures by name, then the line CI counts. */
  summary() {
    const out = [];
    if (this.skips.length) {
      const groups = countBy(this.skips.map((s) => `${s.where}: ${s.why ?? NO_REASON}`));
      out.push('', `Skipped (${this.skipped}):`, ...[...groups].map(([what, n]) => `  ${n} × ${what}`));
    }
    const failures = [...this.failures];
    for (const [file, n] of this.#reasonless()) {
      failures.push({ where: file, what: `${n} skipped test${n === 1 ? ' gives' : 's give'} no reason (say why: skipWith in test-support/skips.ts)` });
    }
    if (failures.length) {
      out.push('', `Failed (${failures.length}):`);
      const byWhere = new Map();
      for (const f of failures) byWhere.set(f.where, [...(byWhere.get(f.where) ?? []), f.what]);
      for (const [where, whats] of byWhere) {
        const more = whats.length - NAMES_SHOWN;
        out.push(`  ${where}: ${whats.slice(0, NAMES_SHOWN).join('; ')}${more > 0 ? `; … and ${more} more` : ''}`);
      }
    }
    out.push('', `${this.passed} passed, ${this.failed} failed, ${this.skipped} skipped`);
    return out.join('\n');
  }
}

/** Each distinct string → how many times it occurs, in first-seen order. */
function countBy(strings) {
  const counts = new Map();
  for (const s of strings) counts.set(s, (counts.get(s) ?? 0) + 1);
  return counts;
}
