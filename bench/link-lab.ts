/**
 * The link lab: three network namespaces the bench creates and removes,
 *
 *   client ns (peers, probes, getent, Chromium)
 *      10.77.0.1 ──veth── middle ns (linkemu: delay, jitter, loss, rate) ──veth── 10.77.0.2
 *                                                                         server ns (unbound upstreams,
 *                                                                         the page server, a slow DNS server)
 *
 * The addresses exist only inside these namespaces. linkemu and nodelay.so
 * are the project's own (tools/linkemu/, C, libc only), compiled with `cc`
 * into a cache directory keyed by their sources' hash. Names carry the
 * bench's pid, so two benches (or another agent's namespaces) never collide.
 *
 * Everything the lab starts is tracked; `close()` stops it and deletes the
 * namespaces (which removes the veths) on every path out, SIGINT included.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testPki, type TestPki } from '../test-support/certs.js';
import { unboundServerBase, zoneLines } from '../test-support/unbound.js';

export const LAB_ROOT = path.resolve(import.meta.dirname, '..');
export const CLIENT_ADDR = '10.77.0.1';
export const SERVER_ADDR = '10.77.0.2';
/** The slow DNS server in the server ns, which unbound asks for names under slow.test. */
export const SLOW_PORT = 5353;
/** How long that server holds each answer. */
export const SLOW_MS = 200;
/** The page server in the server ns (every name under web.test resolves to SERVER_ADDR). */
export const WEB_PORT = 80;

export interface LinkProfile {
  readonly name: string;
  readonly rttMs: number;
  /** Jitter of each direction, ± ms (uniform; frames never overtake). */
  readonly jitterMs: number;
  /** Loss of each direction, percent. */
  readonly lossPct: number;
  /** Rate of each direction, kbit/s; 0 for no limit. */
  readonly rateKbit: number;
  readonly label: string;
}

/** The T-DNS study's RTTs and the web study's mobile profiles (tools/linkemu/README.md). */
export const PROFILES = {
  lan0: { name: 'lan0', rttMs: 0, jitterMs: 0, lossPct: 0, rateKbit: 0, label: 'no added delay (linkemu forwarding only)' },
  rtt1: { name: 'rtt1', rttMs: 1, jitterMs: 0, lossPct: 0, rateKbit: 0, label: '1 ms RTT' },
  rtt35: { name: 'rtt35', rttMs: 35, jitterMs: 0, lossPct: 0, rateKbit: 0, label: '35 ms RTT' },
  '4g': { name: '4g', rttMs: 53.3, jitterMs: 1, lossPct: 0.5, rateKbit: 22_100, label: '4G: 53.3 ms ±1, 0.5 % loss, 22.1 Mbit/s' },
  'lossy-4g': { name: 'lossy-4g', rttMs: 53.3, jitterMs: 1, lossPct: 1.5, rateKbit: 22_100, label: 'lossy 4G: 53.3 ms ±1, 1.5 % loss' },
  '3g': { name: '3g', rttMs: 150, jitterMs: 8, lossPct: 2.1, rateKbit: 1000, label: '3G: 150 ms ±8, 2.1 % loss, 1 Mbit/s' },
} as const satisfies Record<string, LinkProfile>;
export type ProfileName = keyof typeof PROFILES;

export class LinkLabError extends Error {
  readonly code = 'BENCH_LINK_LAB';
}

export interface LabTools {
  readonly linkemu: string;
  readonly nodelay: string;
}

/** Where the link emulator's sources live: the repository's own tools/linkemu/. */
const TOOLS_SRC = path.join(LAB_ROOT, 'tools', 'linkemu');

/** Compiles linkemu and nodelay.so once per source version into ~/.cache/dotstub-bench (or $XDG_CACHE_HOME). */
export function buildTools(): LabTools {
  const files = ['linkemu.c', 'nodelay.c'].map((f) => path.join(TOOLS_SRC, f));
  for (const f of files) {
    if (!fs.existsSync(f)) throw new LinkLabError(`${f} is missing: the link lab builds linkemu from tools/linkemu/ in the repository (is the checkout complete?)`);
  }
  const hash = crypto.createHash('sha256');
  for (const f of files) hash.update(fs.readFileSync(f));
  const cacheRoot = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache');
  const dir = path.join(cacheRoot, 'dotstub-bench', `linkemu-${hash.digest('hex').slice(0, 12)}`);
  const tools = { linkemu: path.join(dir, 'linkemu'), nodelay: path.join(dir, 'nodelay.so') };
  if (fs.existsSync(tools.linkemu) && fs.existsSync(tools.nodelay)) return tools;
  fs.mkdirSync(dir, { recursive: true });
  const cc = (args: string[]): void => {
    const r = spawnSync('cc', args, { encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new LinkLabError(`cc ${args.join(' ')} failed (is a C compiler installed? apt-get install gcc libc6-dev): ${r.error?.message ?? r.stderr}`);
  };
  cc(['-O2', '-Wall', '-o', `${tools.linkemu}.tmp`, files[0] ?? '']);
  cc(['-shared', '-fPIC', '-O2', '-Wall', '-o', `${tools.nodelay}.tmp`, files[1] ?? '', '-ldl']);
  fs.renameSync(`${tools.linkemu}.tmp`, tools.linkemu);
  fs.renameSync(`${tools.nodelay}.tmp`, tools.nodelay);
  return tools;
}

/** What the lab can't do without: root (namespaces), ip, unbound, cc; the reason when one is missing. */
export function labMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'the link lab needs root (it creates network namespaces)';
  for (const bin of ['/usr/sbin/ip', '/usr/sbin/unbound', '/usr/bin/unshare']) {
    if (!fs.existsSync(bin)) return `${bin} is missing (apt-get install iproute2 unbound util-linux)`;
  }
  if (spawnSync('cc', ['--version'], { stdio: 'ignore' }).status !== 0) return 'no C compiler (cc) to build linkemu (apt-get install gcc libc6-dev)';
  return undefined;
}

function sh(cmd: string, args: readonly string[], what: string): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0) throw new LinkLabError(`${what}: ${cmd} ${args.join(' ')}: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`);
  return r.stdout;
}

export interface Upstream {
  readonly name: string;
  readonly host: string;
  /** DoT port. */
  readonly port: number;
  /** Plain DNS port (UDP and TCP) when this one serves it. */
  readonly plainPort: number | undefined;
  /** `https://dns.test:PORT/dns-query` when this one serves DoH. */
  readonly dohUrl: string | undefined;
  readonly pki: TestPki;
  readonly resolverArg: string;
  readonly nodelay: boolean;
  readonly pid: number;
}

/** Names in an upstream's zone unless told otherwise: n0.test … n5999.test (A and AAAA). */
export const LAB_ZONE_NAMES = 6000;

export interface UpstreamOptions {
  readonly port: number;
  /** LD_PRELOAD nodelay.so: Nagle off on its DoT sockets. */
  readonly nodelay: boolean;
  readonly plainPort?: number;
  /** DNS-over-HTTPS (HTTP/2, /dns-query) on this port too, with the same certificate. */
  readonly dohPort?: number;
  /** unbound's tcp-idle-timeout (ms): when it closes an idle connection. Default 30 s, unbound's own default. */
  readonly idleMs?: number;
  readonly names?: number;
}

export interface SpawnedChild {
  readonly child: ChildProcess;
  readonly pid: number;
  output(): string;
  stop(): Promise<void>;
}

export interface ClientRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export class LinkLab {
  readonly ns: { readonly client: string; readonly middle: string; readonly server: string };
  readonly dir: string;
  readonly tools: LabTools;
  readonly pki: TestPki;
  #children = new Set<ChildProcess>();
  #linkemu: SpawnedChild | undefined;
  #profile: LinkProfile | undefined;
  #linkLog: string | undefined;
  #closed = false;
  #ifs: { readonly c: string; readonly a: string; readonly b: string; readonly s: string };

  private constructor(tools: LabTools) {
    const tag = `paper${process.pid}`;
    this.ns = { client: `${tag}c`, middle: `${tag}m`, server: `${tag}s` };
    const short = `pp${process.pid}`;
    this.#ifs = { c: `${short}c`, a: `${short}a`, b: `${short}b`, s: `${short}s` };
    this.tools = tools;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-linklab-'));
    this.pki = testPki();
  }

  /** Creates the namespaces and links (no delay until `setProfile`), and the helper servers in the server ns. */
  static async open(): Promise<LinkLab> {
    const missing = labMissing();
    if (missing) throw new LinkLabError(missing);
    const lab = new LinkLab(buildTools());
    try {
      lab.#build();
      await lab.setProfile(PROFILES.lan0);
      await lab.#startHelpers();
    } catch (err) {
      await lab.close();
      throw err;
    }
    return lab;
  }

  #build(): void {
    const { client, middle, server } = this.ns;
    const { c, a, b, s } = this.#ifs;
    for (const n of [client, middle, server]) sh('ip', ['netns', 'add', n], 'creating a namespace');
    sh('ip', ['link', 'add', c, 'netns', client, 'type', 'veth', 'peer', 'name', a, 'netns', middle], 'client veth');
    sh('ip', ['link', 'add', s, 'netns', server, 'type', 'veth', 'peer', 'name', b, 'netns', middle], 'server veth');
    const inNs = (n: string, ...args: string[]): string => sh('ip', ['netns', 'exec', n, ...args], `in ${n}`);
    inNs(client, 'ip', 'addr', 'add', `${CLIENT_ADDR}/24`, 'dev', c);
    inNs(server, 'ip', 'addr', 'add', `${SERVER_ADDR}/24`, 'dev', s);
    for (const [n, ifs] of [[client, [c, 'lo']], [middle, [a, b, 'lo']], [server, [s, 'lo']]] as const) {
      for (const i of ifs) inNs(n, 'ip', 'link', 'set', i, 'up');
    }
    // One MTU per frame everywhere, so a loss hits one segment and a copied frame carries its checksum (tools/linkemu/README.md).
    inNs(client, this.tools.linkemu, 'offload', c);
    inNs(server, this.tools.linkemu, 'offload', s);
    inNs(middle, this.tools.linkemu, 'offload', a, b);
    // Only reno and bbr are allowed in a namespace; cubic is the host default and may be refused.
    for (const n of [client, server]) spawnSync('ip', ['netns', 'exec', n, 'sysctl', '-q', '-w', 'net.ipv4.tcp_congestion_control=reno'], { stdio: 'ignore' });
  }

  get profile(): LinkProfile | undefined {
    return this.#profile;
  }

  /**
   * The frame log once linkemu has written what it holds: it flushes its
   * buffer only when the link has been idle for a moment, so wait until the
   * file stops growing (at most 3 s).
   */
  async settledLinkLog(): Promise<string> {
    const file = this.#linkLog ?? '';
    const size = (): number => (fs.existsSync(file) ? fs.statSync(file).size : 0);
    const deadline = Date.now() + 3000;
    let last = -1;
    while (Date.now() < deadline) {
      const now = size();
      if (now === last) break;
      last = now;
      await sleep(250);
    }
    return file;
  }

  /** (Re)starts linkemu with `p`; its frame log goes to a fresh file (`settledLinkLog()`). Bounded to `maxSeconds`. */
  async setProfile(p: LinkProfile, maxSeconds = 1800): Promise<void> {
    await this.#linkemu?.stop();
    this.#linkLog = path.join(this.dir, `link-${p.name}-${Date.now()}.log`);
    const args = [this.#ifs.a, this.#ifs.b, String(p.rttMs / 2), String(p.jitterMs), String(p.lossPct), String(p.rateKbit), String(maxSeconds), '1', this.#linkLog];
    this.#linkemu = this.spawnIn('middle', this.tools.linkemu, ['run', ...args]);
    this.#profile = p;
    // linkemu prints its settings once its sockets are open; frames cross from then on.
    const deadline = Date.now() + 5000;
    while (!this.#linkemu.output().includes('linkemu:')) {
      if (this.#linkemu.child.exitCode !== null) throw new LinkLabError(`linkemu exited: ${this.#linkemu.output()}`);
      if (Date.now() > deadline) throw new LinkLabError(`linkemu did not start within 5 s: ${this.#linkemu.output()}`);
      await sleep(20);
    }
  }

  /** Starts `cmd` in a namespace (tracked; stopped by `close()`). */
  spawnIn(ns: keyof LinkLab['ns'], cmd: string, args: readonly string[], opts: SpawnOptions & { readonly env?: NodeJS.ProcessEnv } = {}): SpawnedChild {
    return this.#track(spawn('ip', ['netns', 'exec', this.ns[ns], cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...opts }), cmd);
  }

  #track(child: ChildProcess, what: string): SpawnedChild {
    this.#children.add(child);
    child.once('exit', () => this.#children.delete(child));
    let tail = '';
    const keep = (d: Buffer): void => {
      tail = (tail + d.toString()).slice(-4000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    if (child.pid === undefined) throw new LinkLabError(`could not start ${what}`);
    return { child, pid: child.pid, output: () => tail, stop: () => stopChild(child) };
  }

  /**
   * The command line that runs `cmd` in the client ns with its own mount
   * namespace in which /etc/resolv.conf is `resolvConf` (a file in the lab's
   * directory): what glibc and Chromium read there. The host's resolv.conf is
   * never touched: the bind mount exists only in that mount namespace.
   */
  clientCommand(cmd: string, args: readonly string[], resolvConf?: string): [string, string[]] {
    const base = ['netns', 'exec', this.ns.client];
    if (!resolvConf) return ['ip', [...base, cmd, ...args]];
    return ['ip', [...base, 'unshare', '--mount', '--propagation', 'private', 'sh', '-c', 'mount --bind "$0" /etc/resolv.conf && exec "$@"', resolvConf, cmd, ...args]];
  }

  /** A resolv.conf naming `nameserver` (port 53), written into the lab's directory. */
  resolvConf(nameserver: string, options = ''): string {
    const file = path.join(this.dir, `resolv-${nameserver.replace(/[^0-9a-z]/gi, '_')}.conf`);
    fs.writeFileSync(file, `nameserver ${nameserver}\n${options ? `options ${options}\n` : ''}`);
    return file;
  }

  /** Runs `cmd` in the client ns to completion (bounded by `timeoutMs`). */
  runInClient(cmd: string, args: readonly string[], opts: { readonly resolvConf?: string; readonly timeoutMs?: number; readonly input?: string } = {}): Promise<ClientRun> {
    const [c, a] = this.clientCommand(cmd, args, opts.resolvConf);
    const child = spawn(c, a, { stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const tracked = this.#track(child, cmd);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    const t = setTimeout(() => void tracked.stop(), opts.timeoutMs ?? 600_000);
    return new Promise((resolve) => {
      child.once('exit', (code) => {
        clearTimeout(t);
        resolve({ code, stdout, stderr });
      });
    });
  }

  /** The page server and the slow DNS server, in the server ns. */
  async #startHelpers(): Promise<void> {
    const script = path.join(LAB_ROOT, 'bench', 'lab-servers.ts');
    const h = this.spawnIn('server', process.execPath, ['--import', 'tsx', script, SERVER_ADDR, String(WEB_PORT), String(SLOW_PORT), String(SLOW_MS)], { cwd: LAB_ROOT });
    const deadline = Date.now() + 15_000;
    while (!h.output().includes('ready')) {
      if (h.child.exitCode !== null || Date.now() > deadline) throw new LinkLabError(`the lab's page and slow-DNS servers did not start: ${h.output()}`);
      await sleep(50);
    }
  }

  /**
   * Starts Debian's unbound in the server ns serving the synthetic zone over
   * DoT on `port` (and plain DNS on `plainPort`), as shipped or with Nagle off.
   * Resolves once a DoT query through the link gets an answer.
   */
  async startUpstream(o: UpstreamOptions): Promise<Upstream> {
    const dir = fs.mkdtempSync(path.join(this.dir, `unbound-${o.port}-`));
    const idle = o.idleMs ?? 30_000;
    const conf = [
      ...unboundServerBase(dir, o.port, 1, [SERVER_ADDR]),
      ...(o.plainPort ? [`  interface: ${SERVER_ADDR}@${o.plainPort}`] : []),
      // unbound serves DoH only on an interface line of its own with the https-port (unbound.conf(5)); http-nodelay as shipped (yes).
      ...(o.dohPort ? [`  interface: ${SERVER_ADDR}@${o.dohPort}`, `  https-port: ${o.dohPort}`, '  http-endpoint: "/dns-query"'] : []),
      '  access-control: 10.77.0.0/24 allow',
      `  tls-port: ${o.port}`,
      `  tls-service-key: "${this.pki.serverKeyFile}"`,
      `  tls-service-pem: "${this.pki.serverCertFile}"`,
      '  do-udp: yes',
      '  edns-tcp-keepalive: yes',
      `  edns-tcp-keepalive-timeout: ${idle}`,
      `  tcp-idle-timeout: ${idle}`,
      '  incoming-num-tcp: 256',
      '  pad-responses: yes',
      '  minimal-responses: yes',
      '  msg-cache-size: 4m',
      '  rrset-cache-size: 4m',
      '  outgoing-range: 64',
      ...zoneLines(o.names ?? LAB_ZONE_NAMES).map((l) => `  ${l}`),
      // Every name under web.test is the page server; slow.test names come from the slow server.
      '  local-zone: "web.test." redirect',
      `  local-data: "web.test. 300 IN A ${SERVER_ADDR}"`,
      '  local-zone: "slow.test." transparent',
      '  do-not-query-localhost: no',
      'forward-zone:',
      '  name: "slow.test."',
      `  forward-addr: ${SERVER_ADDR}@${SLOW_PORT}`,
      'remote-control:',
      '  control-enable: no',
      '',
    ].join('\n');
    const file = path.join(dir, 'unbound.conf');
    fs.writeFileSync(file, conf);
    const args = o.nodelay ? [`LD_PRELOAD=${this.tools.nodelay}`, '/usr/sbin/unbound', '-d', '-c', file] : ['/usr/sbin/unbound', '-d', '-c', file];
    const u = this.spawnIn('server', '/usr/bin/env', args);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const r = await this.runInClient('kdig', ['+tls', `+tls-ca=${this.pki.caFile}`, '+tls-hostname=dns.test', '+time=1', '+retry=0', `@${SERVER_ADDR}`, '-p', String(o.port), 'n0.test', 'A'], { timeoutMs: 5000 });
      if (r.code === 0 && /status: NOERROR/.test(r.stdout)) break;
      if (u.child.exitCode !== null) throw new LinkLabError(`unbound on ${o.port} exited: ${u.output()}`);
      if (Date.now() > deadline) throw new LinkLabError(`unbound on ${SERVER_ADDR}:${o.port} did not answer over DoT through the link within 15 s: ${r.stdout}${r.stderr}${u.output()}`);
      await sleep(100);
    }
    return {
      name: o.nodelay ? 'Nagle off' : 'as shipped',
      host: SERVER_ADDR,
      port: o.port,
      plainPort: o.plainPort,
      dohUrl: o.dohPort ? `https://${this.pki.authName}:${o.dohPort}/dns-query` : undefined,
      pki: this.pki,
      resolverArg: `${SERVER_ADDR}:${o.port}#${this.pki.authName}`,
      nodelay: o.nodelay,
      pid: u.pid,
    };
  }

  /** Stops a process this lab started (by pid). */
  async stopPid(pid: number): Promise<void> {
    const c = [...this.#children].find((x) => x.pid === pid);
    if (c) await stopChild(c);
  }

  /** Stops everything, deletes the namespaces and the lab's directory. Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#children].map((c) => stopChild(c)));
    for (const n of Object.values(this.ns)) spawnSync('ip', ['netns', 'del', n], { stdio: 'ignore' });
    // The test PKI is one per process (test-support/certs.ts) and removed when the process exits.
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * Closes the lab and exits on SIGINT/SIGTERM, after `first` (e.g. stopping
   * the peers started in its namespaces); returns a function that removes the handlers.
   */
  closeOnSignal(first: () => Promise<void> = () => Promise.resolve()): () => void {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.stderr.write(`\nbench: ${signal}: stopping every process and removing the namespaces\n`);
      void first()
        .catch(() => undefined)
        .then(() => this.close())
        .finally(() => process.exit(130));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    return () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
  }
}

/** Namespaces this module's naming scheme made for a bench whose process is gone (a bench killed with SIGKILL). */
export function removeStaleNamespaces(): string[] {
  const r = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  const removed: string[] = [];
  for (const line of (r.stdout ?? '').split('\n')) {
    const m = /^(paper(\d+)[cms])\b/.exec(line);
    if (!m?.[1] || !m[2]) continue;
    const pid = Number(m[2]);
    if (pid !== process.pid && !fs.existsSync(`/proc/${pid}`)) {
      spawnSync('ip', ['netns', 'del', m[1]], { stdio: 'ignore' });
      removed.push(m[1]);
    }
  }
  return removed;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(t);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
