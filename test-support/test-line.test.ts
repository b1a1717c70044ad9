/**
 * The test line tells the whole truth (issue 29): `npm test`'s own script
 * (scripts/test.mjs, its `unit` and `e2e` halves) run on throw-away projects
 * in a temporary directory, real vitest and real Playwright (tests that use
 * no page: no browser), and its closing lines read as a user reads them.
 * A broken file is FAILED and named, never "skipped": a beforeAll that
 * throws (a lab that cannot start), an import that fails, an afterAll that
 * throws, an unhandled rejection, Playwright's "did not run", a global setup
 * or a spec that throws while loading. A skip lists its reason, and a skip
 * with none is called out.
 *
 * On scripts/test.mjs as it was before (eb7b354) the vitest project ended
 * "3 passed, 1 failed, 6 skipped" (it is 3, 7, 4), the Playwright one
 * "1 passed, 2 failed, 2 skipped" (1, 3, 1), and the global setup that threw
 * was named nowhere.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, test } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const SKIPS = JSON.stringify(path.join(ROOT, 'test-support/skips.ts'));
const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

/** A project of its own in a temporary directory: `files` written into it, the repository's node_modules linked. */
function project(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-test-line-'));
  made.push(dir);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

interface Ending {
  readonly code: number | null;
  readonly skipped: string[];
  readonly failed: string;
  readonly line: string;
}

/** What `npm test` ends with when run in `dir`: its exit code, its skipped and failed lists, its last line. */
async function npmTest(dir: string, half: 'unit' | 'e2e'): Promise<Ending> {
  // Not this run's vitest: the inner one must not take itself for a worker of it.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_ENV' && k !== 'TEST'));
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts/test.mjs'), half], { cwd: dir, env, stdio: ['ignore', 'pipe', 'ignore'], timeout: 60_000 });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const lines = out.trimEnd().split('\n');
  const section = (title: RegExp): string[] => {
    const start = lines.findIndex((l) => title.test(l));
    if (start < 0) return [];
    const end = lines.findIndex((l, i) => i > start && l.trim() === '');
    return lines.slice(start + 1, end < 0 ? undefined : end);
  };
  return { code, skipped: section(/^Skipped\b/), failed: section(/^Failed\b/).join('\n'), line: lines.at(-1) ?? '' };
}

// The runs at once (each is mostly a runner starting up): seconds, not four times that.
describe.concurrent('the test line (scripts/test.mjs) tells the whole truth', () => {
  test('vitest: a lab that cannot start, an import error, an afterAll throw and an unhandled rejection are failed and named; skips list their reason', async ({ expect }) => {
    const dir = project({
      'vitest.config.mjs': "export default { test: { include: ['*.test.mjs'] } };\n",
      'passes.test.mjs': "import { test } from 'vitest';\ntest('passes', () => {});\n",
      'fails.test.mjs': "import { expect, test } from 'vitest';\ntest('fails', () => { expect(1).toBe(2); });\n",
      'lab.test.mjs': [
        "import { beforeAll, describe, test } from 'vitest';",
        "beforeAll(() => { throw new Error('the lab cannot start'); });",
        "test('needs the lab', () => {});",
        "describe('inside', () => { test('needs the lab too', () => {}); });",
      ].join('\n'),
      'import-error.test.mjs': "import { test } from 'vitest';\nimport './not-there.mjs';\ntest('never collected', () => {});\n",
      'cleanup.test.mjs': "import { afterAll, test } from 'vitest';\nafterAll(() => { throw new Error('cleanup broke'); });\ntest('ran', () => {});\n",
      'unhandled.test.mjs': "import { test } from 'vitest';\ntest('leaves a rejection behind', () => { void Promise.reject(new Error('nobody caught this')); });\n",
      'skips.test.mjs': [
        "import { describe, test } from 'vitest';",
        `import { skipWith } from ${SKIPS};`,
        "describe('needs a lab', skipWith('no lab on this machine'), () => { test('a', () => {}); test('b', () => {}); });",
        "test('decides while running', (ctx) => { ctx.skip('not root'); });",
        "test.skip('forgotten why', () => {});",
      ].join('\n'),
    });
    const r = await npmTest(dir, 'unit');
    expect(r.line).toBe('3 passed, 7 failed, 4 skipped');
    expect(r.code).toBe(1);
    expect(r.failed).toMatch(/^ {2}fails\.test\.mjs: "fails"/m);
    expect(r.failed).toMatch(/^ {2}lab\.test\.mjs: "needs the lab" did not run \(the lab cannot start\); "inside > needs the lab too" did not run/m);
    expect(r.failed).toMatch(/^ {2}import-error\.test\.mjs: the file failed: .*not-there\.mjs/m);
    expect(r.failed).toMatch(/^ {2}cleanup\.test\.mjs: the file failed: cleanup broke$/m);
    expect(r.failed).toMatch(/^ {2}unhandled\.test\.mjs: unhandled error: nobody caught this$/m);
    expect(r.failed).toMatch(/^ {2}skips\.test\.mjs: 1 skipped test gives no reason/m);
    expect(r.skipped.sort()).toEqual(['  1 × skips.test.mjs: no reason given', '  1 × skips.test.mjs: not root', '  2 × skips.test.mjs: no lab on this machine']);
  });

  test('Playwright: "did not run" is failed and named, a test.skip keeps its reason', async ({ expect }) => {
    const dir = project({
      'playwright.config.ts': "export default { testDir: '.', testMatch: '*.spec.ts', workers: 1 };\n",
      'story.spec.ts': [
        "import { expect, test } from '@playwright/test';",
        "test('passes', () => {});",
        "test('fails', () => { expect(1).toBe(2); });",
        "test('needs a lab', () => { test.skip(true, 'no lab on this machine'); });",
        "test.describe.serial('a story in steps', () => {",
        "  test('step one', () => { throw new Error('step one broke'); });",
        "  test('step two', () => {});",
        '});',
      ].join('\n'),
    });
    const r = await npmTest(dir, 'e2e');
    expect(r.line).toBe('1 passed, 3 failed, 1 skipped');
    expect(r.code).toBe(1);
    expect(r.failed).toMatch(/^ {2}story\.spec\.ts: "fails" .*; "a story in steps › step one" \(Error: step one broke\); "a story in steps › step two" did not run/m);
    expect(r.skipped).toEqual(['  1 × story.spec.ts: no lab on this machine']);
  });

  test('Playwright: a global setup that throws, and a spec that throws while loading, are each one failure', async ({ expect }) => {
    const spec = "import { test } from '@playwright/test';\ntest('would pass', () => {});\n";
    const setup = project({
      'playwright.config.ts': "export default { testDir: '.', testMatch: '*.spec.ts', globalSetup: './setup.ts' };\n",
      'setup.ts': "export default function setup(): void { throw new Error('the lab cannot start'); }\n",
      'fine.spec.ts': spec,
    });
    const load = project({
      'playwright.config.ts': "export default { testDir: '.', testMatch: '*.spec.ts' };\n",
      'broken.spec.ts': "import { test } from '@playwright/test';\nthrow new Error('this spec cannot load');\ntest('never', () => {});\n",
      'fine.spec.ts': spec,
    });
    const [s, l] = await Promise.all([npmTest(setup, 'e2e'), npmTest(load, 'e2e')]);
    expect(s.line).toBe('0 passed, 1 failed, 0 skipped');
    expect(s.failed).toMatch(/^ {2}setup\.ts: error outside any test: Error: the lab cannot start$/m);
    expect(s.code).toBe(1);
    expect(l.line).toBe('0 passed, 1 failed, 0 skipped');
    expect(l.failed).toMatch(/^ {2}broken\.spec\.ts: error outside any test: Error: this spec cannot load$/m);
    expect(l.code).toBe(1);
  });
});
