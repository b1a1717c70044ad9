#!/usr/bin/env node
// Runs every check in order — build, lint, typecheck, dead code, unit/integration
// (vitest), end-to-end (Playwright), the soak — and ends with one line CI counts:
// "N passed, N failed, N skipped". The numbers count tests (vitest's and
// Playwright's, and the soak as one); the checks before them (build, lint,
// typecheck, knip) are not tests and add nothing when they pass, but each one
// that fails counts as a failure. Every skipped test is listed above that line
// with its reason (test-support/skips.ts). Exit code 1 if anything failed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// DOTSTUB_PORTAL_CHECK=off: no dotstub started by a test probes for captive portals beyond this machine.
const env = { ...process.env, NO_COLOR: '1', DOTSTUB_PORTAL_CHECK: 'off', DOTSTUB_NAME_ROUTING: 'off' };
delete env.FORCE_COLOR;
let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
/** Skipped tests, grouped: "where: reason" → count. */
const skips = new Map();
function noteSkip(where, reason, n = 1) {
  const key = `${where}: ${reason}`;
  skips.set(key, (skips.get(key) ?? 0) + n);
  skipped += n;
}

function run(label, cmd, args) {
  console.log(`\n== ${label}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  return r.status === 0;
}

/** A test that is a whole program (the soak): one passed or one failed. */
function test(label, cmd, args) {
  if (run(label, cmd, args)) passed++;
  else {
    failed++;
    failures.push(label);
  }
}

/** A check that is not a test (build, lint, …): nothing counted when it passes, one failure when it fails. */
function check(label, cmd, args) {
  if (!run(label, cmd, args)) {
    failed++;
    failures.push(label);
  }
}

const only = process.argv[2]; // optional: "unit" or "e2e"
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-test-'));
// Test files record why they skip here (test-support/skips.ts).
const skipLog = path.join(tmp, 'skips.jsonl');
env.DOTSTUB_SKIP_LOG = skipLog;

if (!only) {
  check('build', 'npm', ['run', '--silent', 'build']);
  check('lint', 'npx', ['eslint', '.']);
  check('typecheck', 'npm', ['run', '--silent', 'typecheck']);
  check('dead code (knip: unused files, exports, dependencies)', 'npx', ['knip']);
}

if (!only || only === 'unit') {
  const out = path.join(tmp, 'vitest.json');
  const ok = run('unit and integration tests (vitest)', 'npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`]);
  if (fs.existsSync(out)) {
    const j = JSON.parse(fs.readFileSync(out, 'utf8'));
    passed += j.numPassedTests;
    failed += j.numFailedTests;
    const reasons = new Map();
    if (fs.existsSync(skipLog)) {
      for (const line of fs.readFileSync(skipLog, 'utf8').split('\n').filter(Boolean)) {
        const { file, reason } = JSON.parse(line);
        reasons.set(file, [...new Set([...(reasons.get(file) ?? []), reason])]);
      }
    }
    for (const f of j.testResults) {
      const file = path.relative(process.cwd(), f.name);
      const n = f.assertionResults.filter((a) => a.status === 'skipped' || a.status === 'pending' || a.status === 'todo').length;
      if (n > 0) noteSkip(file, (reasons.get(file) ?? ['no reason recorded (the test file must call skipReason)']).join('; '), n);
    }
    if (j.numFailedTests > 0) failures.push(`${j.numFailedTests} vitest test(s)`);
    if (!ok && j.numFailedTests === 0) {
      failed++;
      failures.push('vitest exited non-zero (failed suite or error outside tests)');
    }
  } else {
    failed++;
    failures.push('vitest produced no report');
  }
}

if ((!only || only === 'e2e') && fs.existsSync('playwright.config.ts')) {
  const out = path.join(tmp, 'playwright.json');
  const ok = spawnSync('npx', ['playwright', 'test', '--reporter=list,json'], {
    stdio: 'inherit',
    env: { ...env, PLAYWRIGHT_JSON_OUTPUT_NAME: out },
  }).status === 0;
  if (fs.existsSync(out)) {
    const s = JSON.parse(fs.readFileSync(out, 'utf8')).stats;
    passed += s.expected + (s.flaky ?? 0);
    failed += s.unexpected;
    const walk = (suite) => {
      for (const spec of suite.specs ?? []) {
        for (const t of spec.tests ?? []) {
          if (t.status !== 'skipped') continue;
          const why = (t.annotations ?? []).find((a) => a.type === 'skip')?.description;
          noteSkip(`${spec.file} "${spec.title}"`, why || 'no reason given');
        }
      }
      for (const child of suite.suites ?? []) walk(child);
    };
    for (const suite of JSON.parse(fs.readFileSync(out, 'utf8')).suites ?? []) walk(suite);
    if (s.unexpected > 0) failures.push(`${s.unexpected} Playwright test(s)`);
    if (!ok && s.unexpected === 0) {
      failed++;
      failures.push('Playwright exited non-zero');
    }
  } else {
    failed++;
    failures.push('Playwright produced no report');
  }
}

// The soak (issue 13): 5 minutes at 500 qps through the real CLI and unbound;
// fails unless answers, RSS and file descriptors stay flat. The long form is
// `npm run soak -- --minutes 60`.
if (!only) test('soak (5 min at 500 qps)', 'npx', ['tsx', 'bench/soak.ts', '--minutes', process.env.DOTSTUB_SOAK_MINUTES ?? '5']);

fs.rmSync(tmp, { recursive: true, force: true });
if (skips.size) {
  console.log(`\nSkipped (${skipped}):`);
  for (const [what, n] of skips) console.log(`  ${n} × ${what}`);
}
if (failures.length) console.log(`\nFailed: ${failures.join('; ')}`);
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
