/**
 * Builds what the end-to-end tests run (the proxy's dist/ and the
 * dashboard's renderer/dist) when a source is newer than its build, so
 * `npx playwright test` alone never tests stale code.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './lab.js';

function newest(dir: string): number {
  let t = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'dist' && e.name !== 'node_modules') t = Math.max(t, newest(p));
    } else t = Math.max(t, fs.statSync(p).mtimeMs);
  }
  return t;
}

function mtime(file: string): number {
  return fs.existsSync(file) ? fs.statSync(file).mtimeMs : 0;
}

function build(script: string): void {
  const r = spawnSync('npm', ['run', '--silent', script], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`npm run ${script} failed`);
}

export default function globalSetup(): () => void {
  if (newest(path.join(ROOT, 'proxy')) > mtime(path.join(ROOT, 'dist', 'proxy', 'cli.js'))) build('build:proxy');
  const rendererSrc = Math.max(newest(path.join(ROOT, 'renderer', 'src')), mtime(path.join(ROOT, 'renderer', 'index.html')));
  if (rendererSrc > mtime(path.join(ROOT, 'renderer', 'dist', 'index.html'))) build('build:renderer');
  // The run's temporary files (config dirs, test PKIs) in one directory, removed when the run ends:
  // workers inherit TMPDIR, and a worker stopped early doesn't run its own clean-up.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-e2e-'));
  // Like /tmp itself (sticky, everyone may write): tests run some commands as nobody.
  fs.chmodSync(tmp, 0o1777);
  process.env.TMPDIR = tmp;
  return () => fs.rmSync(tmp, { recursive: true, force: true });
}
