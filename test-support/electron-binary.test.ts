/**
 * The switch between Electron and its stand-in (electron-binary.ts), through
 * Electron's own package: without its binary the stand-in is chosen and the
 * reason is the one the skip list shows; with a binary where
 * ELECTRON_OVERRIDE_DIST_PATH says (a fake one here), Electron is chosen,
 * and the desktop app's tests launch it as they would launch the real one
 * (desktop-app.ts), which the fake records.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { chooseElectron, NO_ELECTRON_BINARY } from './electron-binary.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-electron-binary-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A directory laid out as Electron's dist, whose `electron` writes its arguments to `argv` and exits 1. */
function fakeDist(): { dist: string; argv: string } {
  const dist = fs.mkdtempSync(path.join(tmp, 'dist-'));
  const argv = path.join(dist, 'argv');
  fs.writeFileSync(path.join(dist, 'electron'), `#!/bin/sh\nfor a in "$@"; do echo "$a"; done > '${argv}'\necho 'fake Electron: not starting' >&2\nexit 1\n`, { mode: 0o755 });
  return { dist, argv };
}

/** An app root with what the real run needs built. */
function builtRoot(): string {
  const root = fs.mkdtempSync(path.join(tmp, 'root-'));
  for (const f of ['dist/app/main.js', 'dist/proxy/cli.js']) {
    fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    fs.writeFileSync(path.join(root, f), '');
  }
  return root;
}

/** Runs `fn` with ELECTRON_OVERRIDE_DIST_PATH set as given (or unset), as Electron's package reads it. */
function withOverride<T>(dist: string | undefined, fn: () => T): T {
  const before = process.env.ELECTRON_OVERRIDE_DIST_PATH;
  if (dist === undefined) delete process.env.ELECTRON_OVERRIDE_DIST_PATH;
  else process.env.ELECTRON_OVERRIDE_DIST_PATH = dist;
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env.ELECTRON_OVERRIDE_DIST_PATH;
    else process.env.ELECTRON_OVERRIDE_DIST_PATH = before;
  }
}

describe('Electron or its stand-in', () => {
  const display = { DISPLAY: ':99' };

  test('no binary: the stand-in, with the reason the skip list shows', () => {
    expect(chooseElectron({ env: display, root: builtRoot(), binaryPath: () => { throw new Error('Electron failed to install correctly'); } })).toEqual({ missing: NO_ELECTRON_BINARY });
    expect(NO_ELECTRON_BINARY).toBe("Electron's binary is not installed (npm run electron:install)");
    // This checkout, as npm left it: Electron's package says so itself unless its installer ran.
    const installed = fs.existsSync(path.join(ROOT, 'node_modules', 'electron', 'path.txt'));
    if (!installed) expect(withOverride(undefined, () => chooseElectron({ env: display, root: builtRoot() }))).toEqual({ missing: NO_ELECTRON_BINARY });
  });

  test('a binary where Electron\'s package says: Electron, once it can run there', () => {
    const { dist } = fakeDist();
    const root = builtRoot();
    expect(withOverride(dist, () => chooseElectron({ env: display, root }))).toEqual({ binary: path.join(dist, 'electron') });
    // Nothing runnable there, no display, or the app not built: the stand-in, saying why.
    expect(withOverride(tmp, () => chooseElectron({ env: display, root })).missing).toBe(`${NO_ELECTRON_BINARY}: nothing runnable at ${path.join(tmp, 'electron')}`);
    if (process.platform === 'linux') expect(withOverride(dist, () => chooseElectron({ env: {}, root })).missing).toMatch(/^no display for Electron/);
    fs.rmSync(path.join(root, 'dist', 'app'), { recursive: true });
    expect(withOverride(dist, () => chooseElectron({ env: display, root })).missing).toBe('the app is not built for Electron (npm run build:app)');
  });

  test('chosen, Electron is launched on the built app with the hook that lets the tests see its tray', () => {
    const { dist, argv } = fakeDist();
    const binary = withOverride(dist, () => chooseElectron({ env: display, root: builtRoot() })).binary as string;
    // In a process of its own: when the binary exits before it speaks, Playwright leaves two of its own waits
    // rejected and unhandled (its waitForLine), which would be counted against this file.
    const attempt = `import('./test-support/desktop-app.ts').then((m) => m.onElectron(${JSON.stringify(binary)}, process.env)).then(() => console.log('LAUNCHED'), (e) => console.log('REFUSED ' + e.message.split('\\n')[0]))`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--unhandled-rejections=warn', '-e', attempt], { cwd: ROOT, env: { ...process.env, ...display }, encoding: 'utf8', timeout: 60_000 });
    expect(r.stdout, r.stderr).toMatch(/^REFUSED .*Process failed to launch/m);
    const args = fs.readFileSync(argv, 'utf8').trim().split('\n');
    expect(args).toEqual(expect.arrayContaining(['--inspect=0', '--remote-debugging-port=0', '-r', path.join(ROOT, 'test-support', 'electron-hook.cjs'), ROOT]));
    expect(args.at(-1)).toBe(ROOT);
  }, 60_000);
});
