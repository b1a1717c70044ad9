/**
 * A real DoT upstream for tests and benchmarks: Debian's unbound, serving a
 * synthetic `test.` zone from local data over TLS with the test PKI. Every
 * other name gets NXDOMAIN from a static root zone, so unbound never sends a
 * packet off this machine.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { testPki, type TestPki } from './certs.js';
import { giveToNobody, runsAsRoot, unprivilegedArgv } from './unprivileged.js';

const UNBOUND_BIN = process.env.UNBOUND_BIN ?? '/usr/sbin/unbound';
const UNBOUND_CONTROL_BIN = path.join(path.dirname(UNBOUND_BIN), 'unbound-control');

/** Why unbound can't be started here ($UNBOUND_BIN, else Debian's), or null. */
export function unboundMissing(): string | null {
  return fs.existsSync(UNBOUND_BIN) ? null : `${UNBOUND_BIN} is not installed (apt-get install unbound)`;
}

export interface UnboundOptions {
  /** Names n0.test … n{count-1}.test with A and AAAA records. */
  readonly names?: number;
  /** RFC 7828 timeout unbound announces and enforces, ms. */
  readonly keepaliveMs?: number;
  readonly port?: number;
  /** Extra A records: name → address, e.g. to tell two upstreams apart. */
  readonly extra?: Readonly<Record<string, string>>;
  readonly threads?: number;
  /** Raw `local-data:` record lines to add, e.g. `'mx.test. 300 IN MX 10 mail.test.'`. */
  readonly localData?: readonly string[];
  /** unbound's minimal-responses (default on); off, answers carry additional records. */
  readonly minimalResponses?: boolean;
  /** More configuration after the `server:` lines: indented lines continue it; a clause such as `auth-zone:` follows. */
  readonly extraConfig?: readonly string[];
  /**
   * Also serve DNS-over-HTTPS (RFC 8484) at https://dns.test:PORT/dns-query
   * with the same PKI: a port number, or 0 for a free one. Off by default.
   */
  readonly dohPort?: number;
  /** Its own TLS key and certificate (certs.ts leafFrom) instead of the PKI's dns.test one, and the name in it (readiness is checked against it). */
  readonly tls?: { readonly keyFile: string; readonly certFile: string; readonly name?: string };
  /** Also answer plain DNS (UDP and TCP) on this port at its addresses, e.g. 53 for a network's own resolver. */
  readonly plainPort?: number;
  /** Run it elsewhere than beside this process on 127.0.0.1, e.g. in a netlab namespace (netlab.ts `unboundIn`). */
  readonly launch?: UnboundLaunch;
  /**
   * Answer unbound-control on a Unix socket in its directory (no keys: the
   * socket's mode is the authorization), so that `queriesSoFar()` can read
   * its statistics. Off by default.
   */
  readonly control?: boolean;
  /**
   * Run it as nobody when the tests run as root (unprivileged.ts), with its
   * own copy of the TLS key and certificate. Off by default: the other tests
   * run it as this process's user (root in CI, with `username: ""`).
   */
  readonly unprivileged?: boolean;
}

/** How to run unbound somewhere else: where it listens, how to start it, how to know it accepts. */
export interface UnboundLaunch {
  /** The addresses it listens on (DoT, DoH and plain DNS), IPv4 or IPv6; clients from anywhere are allowed. */
  readonly addresses: readonly string[];
  /** Starts the program; `signal` reaches the program itself (the child may be a wrapper such as nsenter). */
  spawn(argv: readonly string[]): { readonly child: ChildProcess; signal(sig: NodeJS.Signals): void };
  /** Resolves once TCP `ports` accept connections where it runs. */
  ready(ports: readonly number[]): Promise<void>;
}

export interface UnboundServer {
  readonly port: number;
  readonly host: string;
  readonly pki: TestPki;
  readonly dir: string;
  /** `127.0.0.1:PORT#dns.test`, the CLI form. */
  readonly resolverArg: string;
  /** The DoH port when `dohPort` was given. */
  readonly dohPort: number | undefined;
  /** `https://dns.test:PORT/dns-query` when `dohPort` was given. */
  readonly dohUrl: string | undefined;
  readonly process: ChildProcess;
  /** Queries it has received since it started (`total.num.queries`); only with `control`. */
  queriesSoFar(): number;
  stop(): Promise<void>;
}

/** A port free right now on 127.0.0.1 (TCP and UDP). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = net.createServer();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    if (port > 1024) return port;
  }
}

/** The synthetic zone as unbound local-data lines. */
export function zoneLines(names: number, extra: Readonly<Record<string, string>> = {}): string[] {
  const lines = ['local-zone: "." static', 'local-zone: "test." static'];
  lines.push('local-data: "test. 3600 IN SOA ns.test. admin.test. 1 3600 600 86400 300"');
  for (let i = 0; i < names; i++) {
    lines.push(`local-data: "n${i}.test. 300 IN A 192.0.2.${(i % 254) + 1}"`);
    lines.push(`local-data: "n${i}.test. 300 IN AAAA 2001:db8::${(i % 65535).toString(16)}"`);
  }
  // An answer too big for a 512-byte UDP reply: clients must get TC and retry over TCP.
  for (let i = 0; i < 12; i++) lines.push(`local-data: 'big.test. 300 IN TXT "${`chunk-${i}-`.padEnd(80, 'x')}"'`);
  for (const [name, addr] of Object.entries(extra)) lines.push(`local-data: "${name} 300 IN A ${addr}"`);
  return lines;
}

/** Resolves once a TLS handshake with `name` (verified against the PKI's CA) succeeds on 127.0.0.1:port; throws past `deadline` (Date.now()), naming `server`. */
export async function waitForTls(port: number, pki: TestPki, deadline: number, alpn?: string, name = pki.authName, server = 'unbound'): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = tls.connect({ host: '127.0.0.1', port, servername: name, ca: pki.caPem, ...(alpn ? { ALPNProtocols: [alpn] } : {}) }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${server} did not accept TLS on port ${port} in time`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The `server:` lines every unbound we run shares: our own directory and
 * pidfile, no daemon, no privilege drop, loopback only, one thread, no
 * validator. Callers add what makes theirs a DoT server or a forwarder.
 */
export function unboundServerBase(dir: string, port: number, threads = 1, addresses: readonly string[] = ['127.0.0.1']): string[] {
  const loopbackOnly = addresses.length === 1 && addresses[0] === '127.0.0.1';
  return [
    'server:',
    '  verbosity: 0',
    '  username: ""',
    '  chroot: ""',
    `  directory: "${dir}"`,
    `  pidfile: "${dir}/unbound.pid"`,
    '  use-syslog: no',
    '  do-daemonize: no',
    ...addresses.map((a) => `  interface: ${a}@${port}`),
    `  do-ip6: ${addresses.some((a) => a.includes(':')) ? 'yes' : 'no'}`,
    ...(loopbackOnly ? ['  access-control: 127.0.0.0/8 allow'] : ['  access-control: 0.0.0.0/0 allow', '  access-control: ::/0 allow']),
    '  module-config: "iterator"',
    `  num-threads: ${threads}`,
    '  so-reuseport: no',
  ];
}

/**
 * Starts unbound. A free port found by freePort() can be taken by another
 * program before unbound binds it (other test runs share this machine): when
 * the port was ours to choose, that is tried again on another, twice at most.
 */
export async function startUnbound(options: UnboundOptions = {}): Promise<UnboundServer> {
  const ours = options.port === undefined && (options.dohPort === undefined || options.dohPort === 0);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startUnboundOnce(options);
    } catch (err) {
      if (!ours || attempt >= 3 || !/address already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function startUnboundOnce(options: UnboundOptions): Promise<UnboundServer> {
  const pki = testPki();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-unbound-'));
  const launch = options.launch;
  const addresses = launch?.addresses ?? ['127.0.0.1'];
  const port = options.port ?? (await freePort());
  const keepalive = options.keepaliveMs ?? 120_000;
  const dohPort = options.dohPort === undefined ? undefined : options.dohPort || (await freePort());
  const controlSocket = path.join(dir, 'control.sock');
  const dropRoot = options.unprivileged === true && !launch && runsAsRoot();
  let keyFile = options.tls?.keyFile ?? pki.serverKeyFile;
  let certFile = options.tls?.certFile ?? pki.serverCertFile;
  if (dropRoot) {
    // The PKI's directory is root's (0700): nobody reads its own copies.
    fs.copyFileSync(keyFile, (keyFile = path.join(dir, 'tls.key')));
    fs.copyFileSync(certFile, (certFile = path.join(dir, 'tls.pem')));
  }
  // unbound serves DoH only on interfaces configured with the https-port as
  // @port (unbound.conf(5), https-port), so the DoH port gets its own line.
  const doh =
    dohPort === undefined
      ? []
      : [...addresses.map((a) => `  interface: ${a}@${dohPort}`), `  https-port: ${dohPort}`, '  http-endpoint: "/dns-query"', '  http-nodelay: yes'];
  const conf = [
    ...unboundServerBase(dir, port, options.threads ?? 1, addresses),
    ...doh,
    `  tls-port: ${port}`,
    ...(options.plainPort === undefined ? [] : addresses.map((a) => `  interface: ${a}@${options.plainPort}`)),
    `  tls-service-key: "${keyFile}"`,
    `  tls-service-pem: "${certFile}"`,
    '  do-udp: yes',
    '  edns-tcp-keepalive: yes',
    `  edns-tcp-keepalive-timeout: ${keepalive}`,
    `  tcp-idle-timeout: ${keepalive}`,
    '  incoming-num-tcp: 256',
    '  pad-responses: yes',
    '  pad-queries: no',
    `  minimal-responses: ${options.minimalResponses === false ? 'no' : 'yes'}`,
    '  msg-cache-size: 4m',
    '  rrset-cache-size: 4m',
    '  outgoing-range: 64',
    ...zoneLines(options.names ?? 1000, options.extra).map((l) => `  ${l}`),
    ...(options.localData ?? []).map((l) => (l.includes('"') ? `  local-data: '${l}'` : `  local-data: "${l}"`)),
    ...(options.extraConfig ?? []),
    'remote-control:',
    ...(options.control ? ['  control-enable: yes', `  control-interface: ${controlSocket}`, '  control-use-cert: no'] : ['  control-enable: no']),
    '',
  ].join('\n');
  const confFile = path.join(dir, 'unbound.conf');
  fs.writeFileSync(confFile, conf);
  if (dropRoot) giveToNobody(dir);
  const started = launch
    ? launch.spawn([UNBOUND_BIN, '-d', '-c', confFile])
    : (() => {
        const [bin, ...args] = dropRoot ? unprivilegedArgv([UNBOUND_BIN, '-d', '-c', confFile]) : [UNBOUND_BIN, '-d', '-c', confFile];
        const c = spawn(bin as string, args, { stdio: ['ignore', 'ignore', 'pipe'] });
        return { child: c, signal: (sig: NodeJS.Signals) => c.kill(sig) };
      })();
  const child = started.child;
  const kill = (sig: NodeJS.Signals): void => started.signal(sig);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await Promise.race([
      launch
        ? launch.ready(dohPort === undefined ? [port] : [port, dohPort])
        : Promise.all([
            waitForTls(port, pki, Date.now() + 10_000, undefined, options.tls?.name),
            dohPort !== undefined ? waitForTls(dohPort, pki, Date.now() + 10_000, 'h2') : undefined,
          ]),
      exited.then(() => {
        throw new Error(`unbound exited at start: ${stderr.trim()}`);
      }),
    ]);
  } catch (err) {
    kill('SIGKILL');
    throw err;
  }
  return {
    port,
    host: addresses[0] as string,
    pki,
    dir,
    resolverArg: `${addresses[0]?.includes(':') ? `[${addresses[0]}]` : addresses[0]}:${port}#${pki.authName}`,
    dohPort,
    dohUrl: dohPort === undefined ? undefined : `https://${pki.authName}:${dohPort}/dns-query`,
    process: child,
    queriesSoFar() {
      if (!options.control) throw new Error('queriesSoFar needs startUnbound({ control: true })');
      const out = execFileSync(UNBOUND_CONTROL_BIN, ['-c', confFile, 'stats_noreset'], { encoding: 'utf8', timeout: 10_000 });
      const m = /^total\.num\.queries=(\d+)$/m.exec(out);
      if (!m) throw new Error(`unbound-control printed no total.num.queries:\n${out.slice(0, 500)}`);
      return Number(m[1]);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        kill('SIGTERM');
        const t = setTimeout(() => kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(t);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
