/**
 * The supervisor with real child processes: a small fixture that misbehaves
 * on request (test-fixtures/fake-proxy.mjs), and the real proxy
 * (bin/dotstub.js, needs `npm run build:proxy`) killed from outside.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { ControlClient } from '../control/client.js';
import { parseReadyFile } from './ready-file.js';
import { DEFAULT_RESTART_POLICY } from './restart-policy.js';
import { ProxySupervisor, type ExitInfo, type SupervisorOptions, type SupervisorState } from './supervisor.js';
import { skipWith } from '../../test-support/skips.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const FAKE = path.join(here, '..', 'test-fixtures', 'fake-proxy.mjs');
const REAL = path.join(here, '..', '..', 'bin', 'dotstub.js');
const FAST_POLICY = { ...DEFAULT_RESTART_POLICY, baseDelayMs: 20, maxDelayMs: 100 };

function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-sup-test-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function supervise(options: Partial<SupervisorOptions> & { args?: readonly string[] }): { sup: ProxySupervisor; states: SupervisorState[]; exits: ExitInfo[] } {
  const sup = new ProxySupervisor({ script: FAKE, restartPolicy: FAST_POLICY, readyTimeoutMs: 5000, stopTimeoutMs: 2000, ...options });
  onTestFinished(() => sup.stop('test over'));
  const states: SupervisorState[] = [];
  const exits: ExitInfo[] = [];
  sup.on('state', (s) => states.push(s));
  sup.on('exit', (e) => exits.push(e));
  return { sup, states, exits };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function waitFor<T>(what: string, check: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      const v = check();
      if (v !== undefined) return resolve(v);
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 20);
    };
    tick();
  });
}

describe('parseReadyFile', () => {
  it('reads what the proxy writes and names the bad field otherwise', () => {
    const ok = { dns: [{ host: '127.0.0.1', port: 53 }], control: 'http://127.0.0.1:5380', token: 't', pid: 42 };
    expect(parseReadyFile(JSON.stringify(ok))).toEqual(ok);
    expect(() => parseReadyFile('{')).toThrow(/not JSON/);
    expect(() => parseReadyFile(JSON.stringify({ ...ok, control: null }))).toThrow(/--no-control/);
    expect(() => parseReadyFile(JSON.stringify({ ...ok, control: 'http://10.0.0.1:80' }))).toThrow(/control/);
    expect(() => parseReadyFile(JSON.stringify({ ...ok, dns: [{ host: 'x', port: 0 }] }))).toThrow(/dns/);
    expect(() => parseReadyFile(JSON.stringify({ ...ok, token: '' }))).toThrow(/token/);
    expect(() => parseReadyFile(JSON.stringify({ ...ok, pid: -1 }))).toThrow(/pid/);
  });
});

describe('ProxySupervisor', () => {
  it('starts the child with the ready file and control flags, and stops it with SIGTERM', async () => {
    const { sup, states, exits } = supervise({ args: [] });
    const ready = await sup.start();
    expect(ready.token).toBe('token-run-1');
    expect(ready.pid).toBe(sup.pid);
    expect(sup.state.phase).toBe('running');
    await sup.stop('quit');
    expect(isAlive(ready.pid)).toBe(false);
    expect(states.map((s) => s.phase)).toEqual(['starting', 'running', 'stopped']);
    expect(sup.state).toEqual({ phase: 'stopped', reason: 'quit' });
    expect(exits).toEqual([]); // an expected stop is not a crash
  });

  it('restarts a child that crashes, with backoff, and runs on', async () => {
    const dir = tmpDir();
    const { sup, states, exits } = supervise({ args: ['--crash-times', '2', '--counter', path.join(dir, 'runs')] });
    const readies: string[] = [];
    sup.on('ready', (r) => readies.push(r.token));
    await sup.start();
    await waitFor('third run', () => (readies.length >= 3 ? true : undefined));
    expect(readies).toEqual(['token-run-1', 'token-run-2', 'token-run-3']);
    expect(exits.map((e) => e.description)).toEqual([
      'exited with code 1: crashing on purpose (run 1)',
      'exited with code 1: crashing on purpose (run 2)',
    ]);
    const restarting = states.filter((s) => s.phase === 'restarting');
    expect(restarting).toEqual([
      { phase: 'restarting', attempt: 1, delayMs: 20, lastExit: 'exited with code 1: crashing on purpose (run 1)' },
      { phase: 'restarting', attempt: 2, delayMs: 40, lastExit: 'exited with code 1: crashing on purpose (run 2)' },
    ]);
    // The crashing runs exit 100 ms after they are ready: three times that, in the child's own time (no fake
    // clock reaches it), shows the third runs on.
    await new Promise((r) => setTimeout(r, 300));
    expect(sup.state.phase).toBe('running');
  });

  it('gives up after too many crashes and says why; start() tries again', async () => {
    const dir = tmpDir();
    const { sup, exits } = supervise({ args: ['--crash-times', '100', '--counter', path.join(dir, 'runs')], restartPolicy: { ...FAST_POLICY, maxRestarts: 2 } });
    await sup.start();
    await waitFor('giving up', () => (sup.state.phase === 'failed' ? true : undefined));
    expect(exits).toHaveLength(3);
    expect(sup.state).toEqual({
      phase: 'failed',
      reason: 'the proxy stopped 3 times within 60 s; last: exited with code 1: crashing on purpose (run 3)',
    });
    // The user's "Resume" starts over with a fresh restart budget.
    const again = await sup.start();
    expect(again.token).toBe('token-run-4');
  });

  it('does not restart a configuration error (exit 2) and rejects start() with its message', async () => {
    const { sup, exits } = supervise({ args: ['--exit-code', '2'] });
    await expect(sup.start()).rejects.toMatchObject({
      code: 'proxy_gave_up',
      message: 'the proxy exited with code 2: strict mode needs a way to authenticate 10.0.0.1: add its name',
    });
    expect(exits).toHaveLength(1);
    expect(sup.state.phase).toBe('failed');
  });

  it('counts a child that never gets ready as a crash', async () => {
    const { sup } = supervise({ args: ['--never-ready'], readyTimeoutMs: 300, restartPolicy: { ...FAST_POLICY, maxRestarts: 1 } });
    await expect(sup.start()).rejects.toMatchObject({ code: 'proxy_gave_up', message: expect.stringContaining('was not ready within 0 s') as unknown });
  });

  it('SIGKILLs a child that ignores SIGTERM after the deadline', async () => {
    const { sup } = supervise({ args: ['--ignore-sigterm'], stopTimeoutMs: 300 });
    const { pid } = await sup.start();
    const started = Date.now();
    await sup.stop();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(isAlive(pid)).toBe(false);
    expect(sup.recentLog).toContain('dotstub: ignoring SIGTERM');
  });

  it('reports a missing executable instead of retrying', async () => {
    const { sup } = supervise({ execPath: path.join(tmpDir(), 'no-such-node') });
    await expect(sup.start()).rejects.toMatchObject({ code: 'proxy_gave_up', message: expect.stringContaining('could not start the proxy') as unknown });
  });

  it('stop() during a pending restart cancels it', async () => {
    const dir = tmpDir();
    // The restart's 2 s wait on a fake clock that otherwise keeps real time (the child still has to start):
    // after stop(), running the clock past it says at once whether the restart still fires.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
    onTestFinished(() => void vi.useRealTimers());
    const { sup } = supervise({ args: ['--crash-times', '100', '--counter', path.join(dir, 'runs')], restartPolicy: { ...FAST_POLICY, baseDelayMs: 2000, maxDelayMs: 2000 } });
    await sup.start();
    await waitFor('restarting', () => (sup.state.phase === 'restarting' ? true : undefined));
    await sup.stop('paused');
    await vi.advanceTimersByTimeAsync(2300);
    expect(sup.state).toEqual({ phase: 'stopped', reason: 'paused' });
    expect(fs.readFileSync(path.join(dir, 'runs'), 'utf8')).toBe('1');
  });

  describe('with the real proxy', () => {
    const built = fs.existsSync(path.join(here, '..', '..', 'dist', 'proxy', 'cli.js'));
    it(
      'restarts bin/dotstub.js after it is killed; each run answers on its new control port',
      skipWith(built ? null : 'dist/proxy is not built (npm run build:proxy)'),
      async () => {
        const cfg = tmpDir();
        const { sup } = supervise({
          script: REAL,
          // An upstream that refuses at once: the proxy runs, in the 'blocked' state, without the internet.
          args: ['--listen', '127.0.0.1:0', '--resolver', '127.0.0.1:1#dns.test', '--config-dir', cfg],
          readyTimeoutMs: 15_000,
          stopTimeoutMs: 5000,
        });
        const first = await sup.start();
        const c1 = new ControlClient({ baseUrl: first.control, token: first.token });
        onTestFinished(() => c1.close());
        const s1 = await c1.status();
        expect(s1.resolver.id).toBe('custom:127.0.0.1:1');
        expect(['off', 'blocked']).toContain(s1.state);

        const next = new Promise<typeof first>((resolve) => sup.once('ready', resolve));
        process.kill(first.pid, 'SIGKILL');
        const second = await next;
        expect(second.pid).not.toBe(first.pid);
        expect(second.token).toBe(first.token); // the token lives in the config dir
        const c2 = new ControlClient({ baseUrl: second.control, token: second.token });
        onTestFinished(() => c2.close());
        const s2 = await c2.setActiveResolver('quad9');
        expect(s2.resolver.id).toBe('quad9');
        await sup.stop();
        expect(isAlive(second.pid)).toBe(false);
        expect(fs.existsSync(path.join(cfg, 'token'))).toBe(true);
      },
    );
  });
});
