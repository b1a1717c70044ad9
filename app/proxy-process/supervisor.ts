/**
 * Runs the proxy as a child process and keeps it running.
 *
 *   stopped ──start()──► starting ──ready file──► running
 *      ▲                   │  ▲                      │ exits (crash)
 *      │                   │  └──── restarting ◄─────┘  (backoff: restart-policy.ts)
 *      │ stop()            └──── exits / no ready file in time ──► restarting | failed
 *      └──────────── any phase ◄── stop(): SIGTERM, SIGKILL after the deadline
 *
 * - The child is `execPath <PROXY_NODE_FLAGS> bin/dotstub.js --ready-file
 *   <tmp>/ready.json --control 127.0.0.1:0 …args`; it is ready when the ready file appears
 *   with its pid (the control port changes on every start).
 * - In Electron, execPath is the Electron binary: the caller passes
 *   ELECTRON_RUN_AS_NODE=1 in `env` so it runs as plain Node.
 * - `generation` guards every callback: events from an old child (a late
 *   exit, a poll after a restart) change nothing.
 * - Everything is bounded: the ready wait, the stop deadline, the restart
 *   count per window, the kept stderr lines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROXY_NODE_FLAGS } from '../../proxy/runtime/node-flags.js';
import { parseReadyFile, type ReadyInfo } from './ready-file.js';
import { DEFAULT_RESTART_POLICY, decideRestart, validateRestartPolicy, type RestartPolicyOptions } from './restart-policy.js';

export type { ReadyInfo };

export type SupervisorState =
  | { readonly phase: 'stopped'; readonly reason: string }
  | { readonly phase: 'starting'; readonly attempt: number }
  | { readonly phase: 'running'; readonly ready: ReadyInfo; readonly since: number }
  | { readonly phase: 'restarting'; readonly attempt: number; readonly delayMs: number; readonly lastExit: string }
  | { readonly phase: 'failed'; readonly reason: string };

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: string | null;
  /** Ended by stop() rather than by itself. */
  readonly expected: boolean;
  /** Plain words: "exited with code 1: port 53 is in use". */
  readonly description: string;
}

export interface SupervisorOptions {
  /** The proxy's entry script, e.g. <package>/bin/dotstub.js. */
  readonly script: string;
  /** Flags after the ones the supervisor adds (--listen, --resolver, --config-dir, …). */
  readonly args?: readonly string[];
  /** Default process.execPath. */
  readonly execPath?: string;
  /** Default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** How long a start may take before it counts as a crash, ms (default 20000). */
  readonly readyTimeoutMs?: number;
  /** SIGTERM → SIGKILL deadline, ms (default 5000; the proxy answers queries in flight first). */
  readonly stopTimeoutMs?: number;
  readonly restartPolicy?: RestartPolicyOptions;
  /** How often to look for the ready file, ms (default 50). */
  readonly pollMs?: number;
}

export class SupervisorError extends Error {
  readonly code: 'proxy_gave_up' | 'supervisor_stopped';
  override readonly name = 'SupervisorError';
  constructor(code: 'proxy_gave_up' | 'supervisor_stopped', message: string) {
    super(message);
    this.code = code;
  }
}

interface Events {
  state: [SupervisorState];
  ready: [ReadyInfo];
  exit: [ExitInfo];
  /** One line of the child's stderr. */
  log: [string];
}

const KEPT_LINES = 50;

export class ProxySupervisor extends EventEmitter<Events> {
  readonly #script: string;
  readonly #args: readonly string[];
  readonly #execPath: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly #cwd: string | undefined;
  readonly #readyTimeoutMs: number;
  readonly #stopTimeoutMs: number;
  readonly #policy: RestartPolicyOptions;
  readonly #pollMs: number;
  #state: SupervisorState = { phase: 'stopped', reason: 'not started' };
  /** Bumped for every child and by stop(): callbacks from older generations are ignored. */
  #generation = 0;
  #child: ChildProcess | undefined;
  #childExited: Promise<void> | undefined;
  #timers = new Set<NodeJS.Timeout>();
  #restartHistory: readonly number[] = [];
  #dir: string | undefined;
  #stderr: string[] = [];
  #stopping: Promise<void> | undefined;
  /** Set when the supervisor killed a child that never became ready. */
  #readyTimedOut = false;
  #waiters: { resolve: (r: ReadyInfo) => void; reject: (e: SupervisorError) => void }[] = [];

  constructor(options: SupervisorOptions) {
    super();
    if (typeof options.script !== 'string' || options.script === '') throw new TypeError('supervisor: script must be the path of bin/dotstub.js');
    const positive = (v: number | undefined, name: string, def: number): number => {
      const n = v ?? def;
      if (!Number.isFinite(n) || n <= 0) throw new RangeError(`supervisor: ${name} must be a positive number of milliseconds, not ${v}`);
      return n;
    };
    this.#script = options.script;
    this.#args = [...(options.args ?? [])];
    this.#execPath = options.execPath ?? process.execPath;
    this.#env = options.env ?? process.env;
    this.#cwd = options.cwd;
    this.#readyTimeoutMs = positive(options.readyTimeoutMs, 'readyTimeoutMs', 20_000);
    this.#stopTimeoutMs = positive(options.stopTimeoutMs, 'stopTimeoutMs', 5_000);
    this.#pollMs = positive(options.pollMs, 'pollMs', 50);
    this.#policy = validateRestartPolicy(options.restartPolicy ?? DEFAULT_RESTART_POLICY);
  }

  get state(): SupervisorState {
    return this.#state;
  }

  /** The running proxy's pid, if any. */
  get pid(): number | undefined {
    return this.#child?.exitCode === null ? this.#child.pid : undefined;
  }

  /** The last lines the current (or last) proxy process wrote to stderr (bounded). */
  get recentLog(): readonly string[] {
    return this.#stderr;
  }

  /**
   * Starts the proxy (again, after stop() or giving up) and resolves once it
   * is ready; rejects with SupervisorError if it gives up or stop() comes first.
   */
  async start(): Promise<ReadyInfo> {
    if (this.#stopping) await this.#stopping;
    const s = this.#state;
    if (s.phase === 'running') return s.ready;
    const ready = new Promise<ReadyInfo>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    if (s.phase === 'stopped' || s.phase === 'failed') {
      this.#restartHistory = [];
      this.#launch(1);
    }
    return ready;
  }

  /** Stops the proxy: SIGTERM, then SIGKILL after stopTimeoutMs. Cancels a pending restart. */
  stop(reason = 'stopped'): Promise<void> {
    this.#stopping ??= this.#stop(reason).finally(() => (this.#stopping = undefined));
    return this.#stopping;
  }

  async #stop(reason: string): Promise<void> {
    this.#generation++;
    this.#clearTimers();
    const child = this.#child;
    const exited = this.#childExited;
    if (child && exited && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      if (!(await within(exited, this.#stopTimeoutMs))) {
        child.kill('SIGKILL');
        await within(exited, 5_000);
      }
    }
    this.#child = undefined;
    this.#childExited = undefined;
    if (this.#dir) fs.rmSync(this.#dir, { recursive: true, force: true });
    this.#dir = undefined;
    this.#setState({ phase: 'stopped', reason });
    this.#rejectWaiters(new SupervisorError('supervisor_stopped', `the proxy was stopped (${reason}) before it was ready`));
  }

  #readyFile(): string {
    this.#dir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-app-'));
    return path.join(this.#dir, 'ready.json');
  }

  #launch(attempt: number): void {
    const gen = ++this.#generation;
    const readyFile = this.#readyFile();
    fs.rmSync(readyFile, { force: true });
    this.#readyTimedOut = false;
    this.#stderr = [];
    this.#setState({ phase: 'starting', attempt });
    const child = spawn(this.#execPath, [...PROXY_NODE_FLAGS, this.#script, '--ready-file', readyFile, '--control', '127.0.0.1:0', ...this.#args], {
      cwd: this.#cwd,
      env: this.#env,
      // The IPC channel is never written to: its closing tells the proxy that
      // the app is gone, so the proxy never outlives it.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      windowsHide: true,
    });
    this.#child = child;
    this.#childExited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let spawnError: Error | undefined;
    child.once('error', (err) => {
      // Spawning failed (ENOENT…): 'exit' may never come, so finish here.
      spawnError = err;
      if (child.pid === undefined) this.#onExit(gen, null, null, err);
    });
    child.once('exit', (code, signal) => this.#onExit(gen, code, signal, spawnError));
    let partial = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      if (partial.length > 4096) partial = partial.slice(0, 4096);
      for (const line of lines) this.#logLine(line);
    });
    child.stderr?.on('end', () => {
      if (partial) this.#logLine(partial);
      partial = '';
    });

    const deadline = Date.now() + this.#readyTimeoutMs;
    const poll = (): void => {
      if (gen !== this.#generation) return;
      let info: ReadyInfo | undefined;
      try {
        info = parseReadyFile(fs.readFileSync(readyFile, 'utf8'));
      } catch {
        // Not there yet (ENOENT), or not usable: keep waiting until the deadline.
      }
      if (info && info.pid === child.pid) {
        this.#setState({ phase: 'running', ready: info, since: Date.now() });
        this.emit('ready', info);
        for (const w of this.#waiters.splice(0)) w.resolve(info);
        return;
      }
      if (Date.now() >= deadline) {
        this.#readyTimedOut = true;
        child.kill('SIGKILL');
        return;
      }
      this.#timer(poll, this.#pollMs);
    };
    this.#timer(poll, this.#pollMs);
  }

  #onExit(gen: number, code: number | null, signal: NodeJS.Signals | null, spawnError: Error | undefined): void {
    if (gen !== this.#generation) return; // stop() took over, or an older child, or already handled
    this.#generation++; // 'error' and 'exit' can both come for one failed spawn: handle it once
    const description = this.#describeExit(code, signal, spawnError);
    this.#child = undefined;
    this.#childExited = undefined;
    this.#clearTimers();
    this.emit('exit', { code, signal, expected: false, description });
    const decision = decideRestart({ at: Date.now(), code, signal }, this.#restartHistory, this.#policy);
    this.#restartHistory = decision.history;
    if (decision.action === 'restart' && !spawnError) {
      this.#setState({ phase: 'restarting', attempt: decision.attempt, delayMs: decision.delayMs, lastExit: description });
      const next = this.#generation;
      this.#timer(() => {
        if (next === this.#generation) this.#launch(decision.attempt + 1);
      }, decision.delayMs);
      return;
    }
    const why =
      spawnError !== undefined
        ? `could not start the proxy: ${description}`
        : decision.action === 'give-up' && decision.reason === 'too-many-restarts'
          ? `the proxy stopped ${decision.history.length + 1} times within ${Math.round(this.#policy.windowMs / 1000)} s; last: ${description}`
          : `the proxy ${description}`;
    this.#setState({ phase: 'failed', reason: why });
    this.#rejectWaiters(new SupervisorError('proxy_gave_up', why));
  }

  #describeExit(code: number | null, signal: string | null, spawnError: Error | undefined): string {
    if (spawnError) return `${spawnError.message}`;
    if (this.#readyTimedOut) return `was not ready within ${Math.round(this.#readyTimeoutMs / 1000)} s`;
    const said = lastMessage(this.#stderr);
    const how = signal ? `was killed by ${signal}` : `exited with code ${code ?? '?'}`;
    return said ? `${how}: ${said}` : how;
  }

  #logLine(line: string): void {
    const text = line.replace(/\r$/, '');
    if (text === '') return;
    this.#stderr.push(text.length > 1000 ? `${text.slice(0, 1000)}…` : text);
    if (this.#stderr.length > KEPT_LINES) this.#stderr.splice(0, this.#stderr.length - KEPT_LINES);
    this.emit('log', text);
  }

  #setState(state: SupervisorState): void {
    this.#state = state;
    this.emit('state', state);
  }

  #rejectWaiters(err: SupervisorError): void {
    for (const w of this.#waiters.splice(0)) w.reject(err);
  }

  #timer(fn: () => void, ms: number): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    this.#timers.add(t);
  }

  #clearTimers(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }
}

/** The proxy's last words, without its "dotstub: " prefix (its messages say what to do). */
function lastMessage(lines: readonly string[]): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = (lines[i] as string).replace(/^dotstub:\s*/, '').trim();
    if (line !== '' && !/^stopped after /.test(line)) return line.length > 300 ? `${line.slice(0, 299)}…` : line;
  }
  return undefined;
}

async function within(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
