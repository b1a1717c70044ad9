/**
 * The machine the backends act on: a root directory (so tests point them at
 * copies) and a way to run programs. Nothing here knows about dotstub's
 * proxy; the port it listens on is a parameter everywhere.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface RunResult {
  /** null: the program could not be started (not installed) or timed out. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Set when the program is not installed. */
  readonly missing: boolean;
}

export interface SystemHost {
  /** "/" on a real system; a directory holding copies in tests. */
  readonly root: string;
  /** Absolute path of a system path under the root. */
  at(systemPath: string): string;
  run(argv: readonly string[], timeoutMs?: number): Promise<RunResult>;
}

function runProgram(argv: readonly string[], timeoutMs = 15_000): Promise<RunResult> {
  return new Promise((resolve) => {
    const [cmd, ...args] = argv;
    if (cmd === undefined) {
      resolve({ code: null, stdout: '', stderr: 'empty command', missing: true });
      return;
    }
    let stdout = '';
    let stderr = '';
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: err.message, missing: err.code === 'ENOENT' });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, missing: false });
    });
  });
}

export function systemHost(root = '/'): SystemHost {
  const abs = path.resolve(root);
  return {
    root: abs,
    at: (p) => path.join(abs, p),
    run: runProgram,
  };
}

/** Whether a unix socket has a listener (a stale socket file refuses). */
export function socketListening(file: string, timeoutMs = 1000): Promise<boolean> {
  if (!fs.existsSync(file)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const sock = net.connect(file);
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}
