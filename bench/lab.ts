/**
 * The bench's surroundings: building the proxy, the temporary directory,
 * the upstream unbound, what to record about the machine and the code, and
 * tearing everything down on every path out (including Ctrl-C).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startUnbound, type UnboundServer } from '../test-support/unbound.js';
import { killRunning } from './dnsperf.js';
import { stopAll } from './peers.js';
import type { BenchMeta } from './report.js';

export const ROOT = path.resolve(import.meta.dirname, '..');

export interface Lab {
  readonly dir: string;
  readonly upstream: UnboundServer;
  close(): Promise<void>;
}

/**
 * Compiles proxy/ to dist/ and bundles it as `npm run build:proxy` does
 * (bin/dotstub.js runs the bundle: compiled without bundling, a bench would
 * measure the last bundle made); keeps an existing dist/ (with a warning)
 * if that fails.
 */
export function buildProxy(log: (line: string) => void): void {
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  let r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  if (r.status === 0) r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'bundle-proxy.mjs')], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  if (r.status === 0) return;
  const why = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(0, 5).join('\n');
  if (!fs.existsSync(path.join(ROOT, 'dist', 'proxy', 'cli.js'))) throw new Error(`the proxy does not build and there is no dist/:\n${why}`);
  log(`warning: the proxy does not build right now; benchmarking the existing dist/:\n${why}`);
}

export async function openLab(names: number): Promise<Lab> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-bench-'));
  let upstream: UnboundServer;
  try {
    upstream = await startUnbound({ names, threads: 1, control: true });
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  let closed = false;
  return {
    dir,
    upstream,
    async close() {
      if (closed) return;
      closed = true;
      killRunning();
      await stopAll();
      await upstream.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Closes the lab and exits on SIGINT/SIGTERM; returns a function that removes the handlers. */
export function closeOnSignal(lab: Lab): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    process.stderr.write(`\nbench: ${signal}: stopping every process it started\n`);
    void lab.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

function run(cmd: string, args: readonly string[]): string {
  try {
    return execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 }).trim();
  } catch {
    return '';
  }
}

export function benchMeta(upstream: string): BenchMeta {
  return {
    date: new Date().toISOString(),
    commit: run('git', ['rev-parse', '--short', 'HEAD']) || 'unknown',
    proxyDirty: run('git', ['status', '--porcelain', '--', 'proxy']) !== '',
    node: process.version,
    cores: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown CPU',
    upstream,
  };
}

/** One line naming each program's version, e.g. "stubby 0.3.0". */
export function versionOf(name: string): string {
  switch (name) {
    case 'dotstub':
      return `dotstub ${(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version} (node ${process.version})`;
    case 'stubby':
      return run('/usr/bin/stubby', ['-V']) || 'stubby';
    case 'dnsdist':
      return run('/usr/bin/dnsdist', ['--version']).split('\n')[0] ?? 'dnsdist';
    case 'unbound-fwd':
    case 'unbound':
      return `unbound ${/Version (\S+)/.exec(run('/usr/sbin/unbound', ['-V']))?.[1] ?? '?'}`;
    default:
      return name;
  }
}
