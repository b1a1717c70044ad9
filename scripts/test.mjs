#!/usr/bin/env node
// Runs every check in order — build, lint, typecheck, dead code, unit/integration
// (vitest), end-to-end (Playwright) — and ends with one line CI counts:
// "N passed, N failed". Exit code 1 if anything failed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// DOTSTUB_PORTAL_CHECK=off: no dotstub started by a test probes for captive portals beyond this machine.
const env = { ...process.env, NO_COLOR: '1', DOTSTUB_PORTAL_CHECK: 'off' };
delete env.FORCE_COLOR;
let passed = 0;
let failed = 0;
const failures = [];

function run(label, cmd, args) {
  console.log(`\n== ${label}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  return r.status === 0;
}

function step(label, cmd, args) {
  if (run(label, cmd, args)) passed++;
  else {
    failed++;
    failures.push(label);
  }
}

const only = process.argv[2]; // optional: "unit" or "e2e"
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-test-'));

if (!only) {
  step('build', 'npm', ['run', '--silent', 'build']);
  step('lint', 'npx', ['eslint', '.']);
  step('typecheck', 'npm', ['run', '--silent', 'typecheck']);
  step('dead code (knip: unused files, exports, dependencies)', 'npx', ['knip']);
}

if (!only || only === 'unit') {
  const out = path.join(tmp, 'vitest.json');
  const ok = run('unit and integration tests (vitest)', 'npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`]);
  if (fs.existsSync(out)) {
    const j = JSON.parse(fs.readFileSync(out, 'utf8'));
    passed += j.numPassedTests;
    failed += j.numFailedTests;
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
if (!only) step('soak (5 min at 500 qps)', 'npx', ['tsx', 'bench/soak.ts', '--minutes', process.env.DOTSTUB_SOAK_MINUTES ?? '5']);

fs.rmSync(tmp, { recursive: true, force: true });
if (failures.length) console.log(`\nFailed: ${failures.join('; ')}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
