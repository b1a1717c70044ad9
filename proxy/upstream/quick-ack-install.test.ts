/**
 * Where the sockopt addon could not be compiled, dotstub still starts and
 * says what is missing and how to get it. sockopt is an optional
 * dependency: `npm ci` on a machine without a C++ compiler (or make, or
 * python3) leaves it out rather than failing, and a sockopt installed
 * without running its build (`npm ci --ignore-scripts`) has only its
 * prebuilds, whose linux-x64 one is a Mach-O file. Each is set up for real
 * beside the built proxy (dist/, bin/dotstub.js) in a directory of its
 * own, and the real CLI is started there as `npm start` starts it.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { skipWith } from '../../test-support/skips.js';
import { freePort } from '../../test-support/unbound.js';
import { PROXY_NODE_FLAGS } from '../runtime/node-flags.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NM = path.join(ROOT, 'node_modules');
const notBuilt = fs.existsSync(path.join(ROOT, 'dist/proxy/cli.js')) ? null : 'dist/proxy/cli.js is missing (npm run build)';

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-quick-ack-install-'));
});
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** dotstub as `npm ci` leaves it, with `sockopt` as given: the built proxy and its other modules. */
function install(name: string, sockopt: (dir: string) => void): string {
  const dir = path.join(tmp, name);
  fs.cpSync(path.join(ROOT, 'dist/proxy'), path.join(dir, 'dist/proxy'), { recursive: true });
  fs.cpSync(path.join(ROOT, 'bin'), path.join(dir, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
  for (const m of ['dns-packet', '@leichtgewicht/ip-codec', 'zod']) {
    fs.mkdirSync(path.dirname(path.join(dir, 'node_modules', m)), { recursive: true });
    fs.symlinkSync(fs.realpathSync(path.join(NM, m)), path.join(dir, 'node_modules', m));
  }
  sockopt(path.join(dir, 'node_modules'));
  return dir;
}

/** Starts that dotstub (as `npm start` does: node with the proxy's flags on bin/dotstub.js) and returns its quick-ACK line once it has said it. */
async function startLine(dir: string): Promise<string> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...PROXY_NODE_FLAGS, path.join(dir, 'bin/dotstub.js'), '--listen', `127.0.0.1:${port}`, '--resolver', '127.0.0.1:9#dns.test', '--no-control', '--no-portal-check', '--config-dir', path.join(dir, 'config')],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise((r) => child.once('exit', r));
  try {
    return await new Promise<string>((resolve, reject) => {
      let err = '';
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        // The warning is the line right after "listening on" (cli/log.ts); any other line there means it gave none.
        const next = /^dotstub: listening on .*\n(.*)\n/m.exec(err)?.[1];
        if (next?.startsWith('dotstub: warning: quick ACKs')) resolve(next);
        else if (next !== undefined) reject(new Error(`no quick-ACK warning:\n${err}`));
      });
      child.once('exit', (code) => reject(new Error(`dotstub exited (${code}):\n${err}`)));
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe('quick ACKs where the sockopt addon could not be compiled', skipWith(notBuilt), () => {
  test('npm ci without a compiler (sockopt left out): dotstub starts and says what to install and to run npm ci again', async () => {
    const dir = install('no-sockopt', () => {});
    expect(await startLine(dir)).toBe(
      "dotstub: warning: quick ACKs unavailable (the sockopt addon is not installed: npm ci compiles it from source and leaves it out where it cannot): a resolver that uses Nagle's algorithm may hold answers up to 40 ms. To get quick ACKs, install a C++ compiler, make and python3 (Debian: apt-get install g++ make python3), then run npm ci again.",
    );
  });

  test('sockopt installed without its build (only the Mach-O prebuild): dotstub starts and says why it did not load and how to compile it', async () => {
    const dir = install('prebuild-only', (nm) => {
      const to = path.join(nm, 'sockopt');
      for (const f of ['package.json', 'index.js', 'prebuilds/linux-x64/node.napi.node']) {
        fs.mkdirSync(path.dirname(path.join(to, f)), { recursive: true });
        fs.copyFileSync(path.join(NM, 'sockopt', f), path.join(to, f));
      }
      fs.symlinkSync(fs.realpathSync(path.join(NM, 'node-gyp-build')), path.join(nm, 'node-gyp-build'));
    });
    const line = await startLine(dir);
    expect(line).toMatch(/^dotstub: warning: quick ACKs unavailable \(the sockopt addon did not load: .*node\.napi\.node: invalid ELF header\): /);
    expect(line).toContain('To get quick ACKs, compile it for this machine: npm rebuild sockopt (needs a C++ compiler, make and python3 (Debian: apt-get install g++ make python3)).');
  });
});
