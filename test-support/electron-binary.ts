/**
 * The switch between Electron and its stand-in for the desktop app's tests:
 * where Electron's binary is installed (`npm run electron:install`), the
 * tests written against `DesktopApp` (desktop-app.ts) run the built app on
 * it; where it is not (this machine: it can't be downloaded here), they run
 * app/main.ts against test-support/electron-stand-in.ts, and the real
 * Electron's run is skipped with the reason below.
 *
 * "Installed" is what Electron's own package says: `require('electron')`
 * from Node (node_modules/electron/index.js) gives the binary's path, from
 * the path.txt its installer writes, or from ELECTRON_OVERRIDE_DIST_PATH
 * (Electron's own variable for a binary kept elsewhere); it throws when
 * neither is there. The path must then be an executable file.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The reason the real Electron's tests skip without its binary (the suite's skip list shows it). */
export const NO_ELECTRON_BINARY = "Electron's binary is not installed (npm run electron:install)";

type ElectronChoice = { readonly binary: string; readonly missing?: undefined } | { readonly binary?: undefined; readonly missing: string };

/** What `require('electron')` says now: read afresh each time (its module reads the environment once, when loaded). */
function electronPackagePath(): string {
  const require = createRequire(import.meta.url);
  const id = require.resolve('electron');
  delete require.cache[id];
  return require(id) as string;
}

/**
 * Electron's binary if it can run the app's tests here, else why not: not
 * installed, not executable, no display to open windows and a tray on
 * (Linux), or the app not built (the real Electron runs dist/app/main.js
 * and its own proxy, dist/proxy).
 */
export function chooseElectron(opts: { readonly env?: NodeJS.ProcessEnv; readonly root?: string; readonly binaryPath?: () => string } = {}): ElectronChoice {
  const env = opts.env ?? process.env;
  const root = opts.root ?? ROOT;
  let binary: string;
  try {
    binary = (opts.binaryPath ?? electronPackagePath)();
  } catch {
    return { missing: NO_ELECTRON_BINARY };
  }
  try {
    fs.accessSync(binary, fs.constants.X_OK);
    if (!fs.statSync(binary).isFile()) throw new Error('not a file');
  } catch {
    return { missing: `${NO_ELECTRON_BINARY}: nothing runnable at ${binary}` };
  }
  if (process.platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY) return { missing: 'no display for Electron\'s windows and tray (set DISPLAY, e.g. run the tests under xvfb-run)' };
  for (const [file, build] of [
    ['dist/app/main.js', 'npm run build:app'],
    ['dist/proxy/cli.js', 'npm run build:proxy'],
  ] as const) {
    if (!fs.existsSync(path.join(root, file))) return { missing: `the app is not built for Electron (${build})` };
  }
  return { binary };
}
