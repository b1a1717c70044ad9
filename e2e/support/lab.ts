/**
 * The test lab for the dashboard's end-to-end tests, all on loopback: real
 * unbound DoT upstreams (test CA, auth name dns.test) and the real dotstub
 * proxy process, started from its CLI the way a person starts it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface Ready {
  readonly dns: readonly { readonly host: string; readonly port: number }[];
  readonly control: string;
  readonly token: string;
  /** `<control>/#token=<token>` */
  readonly dashboard: string;
  readonly pid: number;
}

/** One upstream, told apart from others by the A record of which.test. */
export async function startUpstream(tag: string): Promise<UnboundServer> {
  return startUnbound({ names: 50, extra: { 'which.test.': tag } });
}

/** The dotstub proxy as a child process; stop() is safe to call twice. */
export class ProxyProcess {
  readonly configDir: string;
  #child: ChildProcess | null = null;
  #ready: Ready | null = null;
  #stderr = '';

  constructor(configDir: string) {
    this.configDir = configDir;
  }

  get ready(): Ready {
    if (!this.#ready) throw new Error('proxy not started');
    return this.#ready;
  }

  get dnsPort(): number {
    const d = this.ready.dns[0];
    if (!d) throw new Error('proxy reported no DNS listener');
    return d.port;
  }

  /** The link dotstub printed: the token in the fragment, which the page reads and no server ever sees. */
  get dashboardUrl(): string {
    return this.ready.dashboard;
  }

  /** `upstream`: an unbound, or any DoT server of the test PKI (a fault server) with its resolver argument. */
  async start(upstream: Pick<UnboundServer, 'resolverArg'> & { readonly pki: Pick<UnboundServer['pki'], 'caFile'> }, extraArgs: readonly string[] = []): Promise<Ready> {
    const readyFile = path.join(this.configDir, 'ready.json');
    fs.rmSync(readyFile, { force: true });
    this.#stderr = '';
    const args = [
      path.join(ROOT, 'bin', 'dotstub.js'),
      '--listen',
      '127.0.0.1:0',
      '--control',
      '127.0.0.1:0',
      '--config-dir',
      this.configDir,
      '--ready-file',
      readyFile,
      '--resolver',
      upstream.resolverArg,
      '--ca',
      upstream.pki.caFile,
      // "Test resolvers" must never send to the presets' public addresses from a test.
      '--measure-only-local',
      ...extraArgs,
    ];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: ROOT });
    this.#child = child;
    child.stderr?.on('data', (d: Buffer) => (this.#stderr += d.toString()));
    const deadline = Date.now() + 15_000;
    while (!fs.existsSync(readyFile)) {
      if (child.exitCode !== null) throw new Error(`dotstub exited with ${child.exitCode}: ${this.#stderr}`);
      if (Date.now() > deadline) throw new Error(`dotstub did not become ready in 15 s: ${this.#stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    this.#ready = JSON.parse(fs.readFileSync(readyFile, 'utf8')) as Ready;
    return this.#ready;
  }

  /**
   * The control API as a script (or `dotstub ctl`) calls it: the token, and
   * the dashboard's own Origin on a change. Throws the API's error message.
   */
  async api<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', route: string, body?: unknown): Promise<T> {
    const { control, token } = this.ready;
    const res = await fetch(`${control}${route}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, Origin: control, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** A crash: SIGKILL, no clean-up of any kind by dotstub (what the watchdog and the next start are for). */
  async kill(): Promise<void> {
    const child = this.#child;
    this.#child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
}

export interface DigAnswer {
  readonly status: string;
  readonly answers: readonly string[];
}

/** One real `dig` query through the proxy. Bounded: 1 try, 5 s. */
export function dig(port: number, name: string, type = 'A', tcp = false): DigAnswer {
  const r = spawnSync(
    'dig',
    ['@127.0.0.1', '-p', String(port), name, type, '+tries=1', '+time=5', '+noall', '+answer', '+comments', ...(tcp ? ['+tcp'] : [])],
    { encoding: 'utf8', timeout: 10_000 },
  );
  const status = /status: ([A-Z]+)/.exec(r.stdout)?.[1] ?? 'NO-ANSWER';
  const answers = r.stdout
    .split('\n')
    .filter((l) => l && !l.startsWith(';'))
    .map((l) => l.split(/\s+/).at(-1) ?? '');
  return { status, answers };
}

/** Many names in one `dig` process (batch mode, -f): quicker than a process per query. */
export function digMany(port: number, names: readonly string[], type = 'A'): string {
  const file = path.join(os.tmpdir(), `dotstub-dig-${process.pid}-${Date.now()}.txt`);
  fs.writeFileSync(file, names.map((n) => `${n} ${type}`).join('\n'));
  try {
    const r = spawnSync('dig', ['@127.0.0.1', '-p', String(port), '+tries=1', '+time=5', '+short', '-f', file], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    return r.stdout;
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** `digMany` without blocking the test, so the page can be driven while queries flow. */
export function digManyAsync(port: number, names: readonly string[], type = 'A'): Promise<string> {
  const file = path.join(os.tmpdir(), `dotstub-dig-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.txt`);
  fs.writeFileSync(file, names.map((n) => `${n} ${type}`).join('\n'));
  return new Promise((resolve, reject) => {
    const child = spawn('dig', ['@127.0.0.1', '-p', String(port), '+tries=1', '+time=5', '+short', '-f', file], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('exit', () => {
      clearTimeout(t);
      fs.rmSync(file, { force: true });
      resolve(out);
    });
  });
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A loopback port with nothing listening: bound, then closed (a resolver that refuses at once). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
