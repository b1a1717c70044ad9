/**
 * Install scripts run only for the reviewed dependencies, enforced (issue
 * 43, item 7): npm 11 only warns about a dependency whose install script
 * allowScripts doesn't cover, unless strict-allow-scripts is set. The
 * project's .npmrc sets it, so `npm ci` (the README's first command, CI's)
 * fails on an unreviewed script instead of running it. Tried for real: a
 * throwaway project with this .npmrc and a local dependency whose install
 * script would leave a file; no network is used.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { removeOnExit } from './temp.js';

const ROOT = path.resolve(import.meta.dirname, '..');

test('the reviewed three, and nothing else, may run install scripts; an unreviewed one fails the install and never runs', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
  expect(pkg.allowScripts).toEqual({ sockopt: true, esbuild: true, electron: true });
  const npmrc = fs.readFileSync(path.join(ROOT, '.npmrc'), 'utf8');
  expect(npmrc).toMatch(/^strict-allow-scripts=true$/m);

  const dir = removeOnExit(fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-scripts-')));
  const ran = path.join(dir, 'RAN');
  fs.mkdirSync(path.join(dir, 'dep'));
  fs.writeFileSync(path.join(dir, 'dep', 'package.json'), JSON.stringify({ name: 'unreviewed-dep', version: '1.0.0', scripts: { install: `node -e "require('fs').writeFileSync(${JSON.stringify(ran)}, 'x')"` } }));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'probe', version: '1.0.0', private: true, dependencies: { 'unreviewed-dep': 'file:./dep' } }));
  fs.copyFileSync(path.join(ROOT, '.npmrc'), path.join(dir, '.npmrc'));
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--offline'], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { ...process.env, npm_config_cache: path.join(dir, 'cache') } });
  expect(r.status, r.stdout + r.stderr).not.toBe(0);
  expect(r.stderr).toMatch(/strict-allow-scripts: 1 package\(s\) have install scripts not covered by allowScripts/);
  expect(r.stderr).toContain('unreviewed-dep@1.0.0');
  expect(fs.existsSync(ran)).toBe(false);
});
