/**
 * The DoT servers Debian ships, each started on 127.0.0.1 by the test that
 * needs it, with the test PKI, a zone of its own and a slow authority
 * (slow-authority.ts) for the names it has to ask about: unbound 1.17,
 * BIND 9.18 (named), Knot Resolver 5.6 (kresd) and dnsdist 1.7 in front of
 * an unbound on plain DNS. Each runs as nobody when the tests run as root
 * (unprivileged.ts), in a directory of its own that stop() removes, and
 * sends nothing off this machine (no root hints, no trust-anchor updates,
 * no security polling). What each can and can't do for the upstream
 * contract's interop items is INTEROP_ITEMS, stated before it starts.
 *
 * These daemons can't be told to listen on port 0: a free port is picked
 * (unbound.ts freePort) and, if another program takes it first, the start
 * is tried again on another, twice at most.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { testPki, type TestPki } from './certs.js';
import { SLOW_ADDRESS, SLOW_ZONE, startSlowAuthority, type SlowAuthority } from './slow-authority.js';
import { freePort, startUnbound, unboundMissing, unboundServerBase, waitForTls, zoneLines, type UnboundServer } from './unbound.js';
import { giveToNobody, unprivilegedArgv } from './unprivileged.js';
import type { ServerItems } from './upstream-contract.js';

export type InteropKind = 'unbound' | 'bind' | 'kresd' | 'dnsdist';

/** How long the slow authority waits before each answer. */
const SLOW_MS = 250;
/** The idle timeout each server is given, where it can be set (ms). */
const IDLE_MS = 1000;
/** dnsdist closes a connection after this many queries (more than any other item sends on one). */
const DNSDIST_QUERIES_PER_CONNECTION = 500;
/** Names n0 … n299 in each server's zone. */
const NAMES = 300;

const BIN = { unbound: '/usr/sbin/unbound', bind: '/usr/sbin/named', kresd: '/usr/sbin/kresd', dnsdist: '/usr/bin/dnsdist' } as const;
const PACKAGE = { unbound: 'unbound', bind: 'bind9', kresd: 'knot-resolver', dnsdist: 'dnsdist' } as const;

export const INTEROP_LABEL: Readonly<Record<InteropKind, string>> = {
  unbound: 'unbound 1.17',
  bind: 'BIND 9.18 (named)',
  kresd: 'Knot Resolver 5.6 (kresd)',
  dnsdist: 'dnsdist 1.7 in front of unbound',
};

/** ServerItems.closeAll for a server whose second instance takes over its port (handOver()). */
const handover = (what: string): { how: string; handover: true } => ({
  handover: true,
  how: `a second ${what} listening beside it on its port (SO_REUSEPORT), the first killed (SIGKILL) with queries in flight`,
});

/** What each server does for the contract's interop items, as configured here; an item it can't do says why. */
export const INTEROP_ITEMS: Readonly<Record<InteropKind, ServerItems>> = {
  unbound: {
    idleTimeoutMs: IDLE_MS,
    keepaliveMs: IDLE_MS,
    paddingBlock: 468,
    resumption: true,
    slowName: { address: SLOW_ADDRESS, delayMs: SLOW_MS },
    closeAll: handover('unbound'),
  },
  bind: {
    idleTimeoutMs: IDLE_MS,
    keepaliveMs: IDLE_MS,
    paddingBlock: 468,
    resumption: true,
    slowName: { address: SLOW_ADDRESS, delayMs: SLOW_MS },
    closeAll: handover('named'),
  },
  kresd: {
    // Measured: given net.tcp_in_idle(1000) (or 3000), it closes an idle TLS client after 7 s; given 10000, after 10 s.
    idleTimeoutMs: 7000,
    idleNote: 'kresd 5.6 keeps an idle TLS client about 7 s whatever shorter net.tcp_in_idle it is given, though it announces the shorter one',
    keepaliveMs: IDLE_MS,
    paddingBlock: 468,
    resumption: true,
    slowName: { address: SLOW_ADDRESS, delayMs: SLOW_MS },
    closeAll: handover('kresd'),
  },
  dnsdist: {
    idleTimeoutMs: IDLE_MS,
    keepaliveMs: {
      unsupported:
        "dnsdist 1.7 doesn't speak edns-tcp-keepalive (RFC 7828) itself: it passes on whatever option its backend put in the answer (an unbound behind it announced 120 s, sometimes to a query that hadn't asked, and under the load of dnsdist's own connections to it so little that the pool closed idle connections 0.35 s after an answer), never the 1 s after which dnsdist closes an idle client; the backend here announces none",
    },
    paddingBlock: {
      unsupported: "dnsdist 1.7 doesn't pad answers (RFC 7830), and its backend is asked over plain TCP, where unbound pads nothing (pad-responses is for TLS)",
    },
    resumption: true,
    slowName: { address: SLOW_ADDRESS, delayMs: SLOW_MS },
    // Not a handover (handOver()): the first dnsdist's exit reset the pool's new connection in the handshake about one run in ten.
    closeAll: { how: `it closes a connection after ${DNSDIST_QUERIES_PER_CONNECTION} queries (setMaxTCPQueriesPerConnection), the rest of the burst in flight`, afterQueries: DNSDIST_QUERIES_PER_CONNECTION },
  },
};

/** Why `kind` can't be started here (its package isn't installed), or null. */
export function interopMissing(kind: InteropKind): string | null {
  if (kind === 'dnsdist' && unboundMissing()) return unboundMissing();
  return fs.existsSync(BIN[kind]) ? null : `${BIN[kind]} is not installed (apt-get install ${PACKAGE[kind]})`;
}

export interface InteropServer {
  readonly kind: InteropKind;
  readonly host: string;
  readonly port: number;
  readonly pki: TestPki;
  /** Its names are n<i>.<zone>, answered with expectedA(i). */
  readonly zone: string;
  /** A fresh name under slow.lab (not in its cache): answered after the slow authority's delay. */
  slowName(): string;
  /**
   * Starts a second instance listening beside this one on its port; the
   * function it resolves to kills the first (SIGKILL), which closes every
   * connection it had at once, and the second serves from then on.
   */
  closeAll?(): Promise<() => Promise<void>>;
  stop(): Promise<void>;
}

/** A server program run by a test: started (as nobody when root), stopped, started again with the same command. */
class Daemon {
  readonly #label: string;
  readonly #argv: string[];
  readonly #ready: () => Promise<void>;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #stderr = '';

  constructor(label: string, argv: readonly string[], ready: () => Promise<void>) {
    this.#label = label;
    this.#argv = unprivilegedArgv(argv);
    this.#ready = ready;
  }

  /** Starts it and waits until it serves; throws (after killing it) with its stderr if it exits first or never serves. */
  async start(): Promise<void> {
    const [bin, ...args] = this.#argv;
    const child = spawn(bin as string, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.#child = child;
    live.add(child);
    this.#stderr = '';
    child.stderr?.on('data', (d: Buffer) => (this.#stderr = (this.#stderr + d.toString()).slice(-4000)));
    this.#exited = new Promise<void>((resolve) =>
      child.once('exit', () => {
        live.delete(child);
        resolve();
      }),
    );
    child.once('error', () => undefined); // reported by 'exit' and the stderr we kept
    try {
      await Promise.race([
        this.#ready(),
        this.#exited.then(() => {
          throw new Error(`${this.#label} exited at start: ${this.#stderr.trim()}`);
        }),
      ]);
    } catch (err) {
      await this.stop();
      throw err instanceof Error && !err.message.includes(this.#stderr.trim()) ? new Error(`${err.message}\n${this.#label} said: ${this.#stderr.trim()}`, { cause: err }) : err;
    }
  }

  /** Kills it (SIGKILL) and resolves once it is gone. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await this.#exited;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return this.#exited;
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 3000);
    await this.#exited;
    clearTimeout(t);
  }
}

/** Every daemon still running, killed if the test process ends without stopping it. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

function inUse(err: unknown): boolean {
  return /address already in use|EADDRINUSE|in use/i.test(String((err as Error)?.message));
}

/** Resolves once 127.0.0.1:port accepts TCP, within 10 s. */
async function tcpReady(port: number, label: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${label} did not accept TCP on port ${port} in time`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether process `pid` has a TCP socket listening on 127.0.0.1:port (ss(8)). */
function listensAt(pid: number | undefined, port: number): boolean {
  if (pid === undefined) return false;
  const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8', timeout: 5000 });
  return out.includes(`pid=${pid},`);
}

/** Resolves once `pid` listens on `port`, within 10 s. */
async function untilListening(pid: number | undefined, port: number, label: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!listensAt(pid, port)) {
    if (Date.now() > deadline) throw new Error(`the second ${label} did not listen on port ${port} in time`);
    await new Promise((r) => setTimeout(r, 25));
  }
}


/**
 * A handover as a restart behind SO_REUSEPORT does it: a second instance
 * of the same server listens on the same port beside the first (`running`
 * holds both, so that stop() ends both); the function returned kills the
 * first (SIGKILL: at once, with whatever it held in flight, where a server
 * told to stop may first finish its queries), and new connections reach
 * the second. A connection made to the first's listening socket in the
 * moment it dies is reset in the handshake; with unbound, named and kresd
 * the pool's reconnect has never met that here, with dnsdist 1.7 it did
 * (about one run in ten), so dnsdist closes connections its own way instead.
 */
async function handOver(running: Daemon[], make: () => Daemon, port: number, label: string): Promise<() => Promise<void>> {
  const next = make();
  running.push(next);
  await next.start();
  // Its readiness probe may have reached the first: wait for its own socket.
  await untilListening(next.pid, port, label);
  return async () => {
    const first = running.shift();
    await first?.kill();
  };
}

/** A directory of its own holding a copy of the PKI's server key and certificate (the PKI's directory is root's). */
function serverDir(kind: string, pki: TestPki): { dir: string; key: string; cert: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `dotstub-${kind}-`));
  const key = path.join(dir, 'server.key');
  const cert = path.join(dir, 'server.pem');
  fs.copyFileSync(pki.serverKeyFile, key);
  fs.copyFileSync(pki.serverCertFile, cert);
  return { dir, key, cert };
}

function fresh(): string {
  return `s${crypto.randomBytes(6).toString('hex')}.${SLOW_ZONE}`;
}

export interface InteropOptions {
  /** dnsdist only: the queries it reads ahead on one connection (addTLSLocal's maxInFlight; 1000 unless given). */
  readonly maxInFlight?: number;
  /** dnsdist only: the connections it takes from one client at once (setMaxTCPConnectionsPerClient; no limit unless given). Beyond it, a new one is closed as it is accepted. */
  readonly maxConnectionsPerClient?: number;
  /** dnsdist only: the queries after which it closes a connection (setMaxTCPQueriesPerConnection; DNSDIST_QUERIES_PER_CONNECTION unless given). */
  readonly maxQueriesPerConnection?: number;
}

/** Starts `kind` with its zone and a slow authority; on any failure, whatever it started is stopped again. */
export async function startInterop(kind: InteropKind, options: InteropOptions = {}): Promise<InteropServer> {
  const slow = await startSlowAuthority(SLOW_MS);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const server = await startOnce(kind, slow, options);
        return {
          ...server,
          kind,
          slowName: fresh,
          async stop() {
            await server.stop();
            await slow.close();
          },
        };
      } catch (err) {
        if (attempt >= 3 || !inUse(err)) throw err;
      }
    }
  } catch (err) {
    await slow.close();
    throw err;
  }
}

type Started = Omit<InteropServer, 'kind' | 'slowName'>;

function startOnce(kind: InteropKind, slow: SlowAuthority, options: InteropOptions): Promise<Started> {
  switch (kind) {
    case 'unbound':
      return startUnboundDot(slow);
    case 'bind':
      return startBind(slow);
    case 'kresd':
      return startKresd(slow);
    case 'dnsdist':
      return startDnsdist(slow, options);
  }
}

/** unbound's lines that send slow.lab to the slow authority (its `test.` zone and the static root answer the rest). */
function unboundSlowZone(slow: SlowAuthority): string[] {
  return ['  local-zone: "slow.lab." transparent', '  do-not-query-localhost: no', 'stub-zone:', `  name: "${SLOW_ZONE}"`, `  stub-addr: 127.0.0.1@${slow.port}`];
}

/** Debian's unbound over TLS (unbound.ts), idle timeout and keepalive 1 s, as nobody. */
async function startUnboundDot(slow: SlowAuthority): Promise<Started> {
  // so-reuseport after the base's "no": a second unbound can listen beside it (closeAll).
  const options = { names: NAMES, keepaliveMs: IDLE_MS, unprivileged: true, extraConfig: ['  so-reuseport: yes', ...unboundSlowZone(slow)] };
  /** The unbound serving, and a second one while closeAll hands over. */
  const running: UnboundServer[] = [await startUnbound(options)];
  const first = running[0] as UnboundServer;
  const port = first.port;
  return {
    host: first.host,
    port,
    pki: first.pki,
    zone: 'test',
    // As handOver() does, with unbound.ts's own start.
    async closeAll() {
      const next = await startUnbound({ ...options, port });
      running.push(next);
      await untilListening(next.process.pid, port, 'unbound');
      return async () => {
        const gone = running.shift();
        gone?.process.kill('SIGKILL');
        await gone?.stop(); // only its directory is left to remove
      };
    },
    async stop() {
      for (const u of running) await u.stop();
    },
  };
}

/** BIND 9.18: `test.` as a primary zone, DoT on a `tls` block, everything else forwarded to the slow authority only. */
async function startBind(slow: SlowAuthority): Promise<Started> {
  const pki = testPki();
  const port = await freePort();
  const { dir, key, cert } = serverDir('named', pki);
  const zone = ['$TTL 300', '@ IN SOA ns.test. admin.test. 1 3600 600 86400 300', '@ IN NS ns.test.', 'ns IN A 127.0.0.1'];
  for (let i = 0; i < NAMES; i++) zone.push(`n${i} IN A 192.0.2.${(i % 254) + 1}`, `n${i} IN AAAA 2001:db8::${i.toString(16)}`);
  fs.writeFileSync(path.join(dir, 'test.zone'), `${zone.join('\n')}\n`);
  const conf = `
options {
  directory "${dir}";
  pid-file none;
  session-keyfile none;
  managed-keys-directory "${dir}";
  listen-on port ${port} tls dot { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion yes;
  allow-query { 127.0.0.0/8; };
  allow-recursion { 127.0.0.0/8; };
  // Nothing off this machine: whatever isn't test. goes to the slow authority, and nothing is validated.
  forward only;
  forwarders { 127.0.0.1 port ${slow.port}; };
  dnssec-validation no;
  notify no;
  // Idle timeouts in 100 ms units: the one it keeps, the one it keeps for a client that asked for keepalive, the one it announces.
  tcp-idle-timeout ${IDLE_MS / 100};
  tcp-keepalive-timeout ${IDLE_MS / 100};
  tcp-advertised-timeout ${IDLE_MS / 100};
  response-padding { any; } block-size 468;
};
controls { };
tls dot { key-file "${key}"; cert-file "${cert}"; };
zone "test." { type primary; file "${path.join(dir, 'test.zone')}"; };
`;
  const confFile = path.join(dir, 'named.conf');
  fs.writeFileSync(confFile, conf);
  giveToNobody(dir);
  const named = (): Daemon => new Daemon('named', [BIN.bind, '-g', '-4', '-c', confFile], () => waitForTls(port, pki, Date.now() + 10_000, undefined, pki.authName, 'named'));
  return withDaemon(named, 'named', dir, { host: '127.0.0.1', port, pki, zone: 'test' });
}

/** Knot Resolver 5.6: names n<i>.lab from a hosts file (it answers `test.` NXDOMAIN itself, RFC 6761), slow.lab stubbed to the slow authority. */
async function startKresd(slow: SlowAuthority): Promise<Started> {
  const pki = testPki();
  const port = await freePort();
  const { dir, key, cert } = serverDir('kresd', pki);
  const hosts: string[] = [];
  for (let i = 0; i < NAMES; i++) hosts.push(`192.0.2.${(i % 254) + 1} n${i}.lab`, `2001:db8::${i.toString(16)} n${i}.lab`);
  fs.writeFileSync(path.join(dir, 'hosts'), `${hosts.join('\n')}\n`);
  const conf = `
net.listen('127.0.0.1', ${port}, { kind = 'tls' })
net.tls('${cert}', '${key}')
net.tcp_in_idle(${IDLE_MS})
-- Nothing off this machine: no root hints, no trust anchor to keep up to date.
trust_anchors.remove('.')
for _, m in ipairs({ 'detect_time_skew', 'detect_time_jump', 'priming', 'ta_signal_query', 'ta_sentinel', 'ta_update' }) do pcall(modules.unload, m) end
modules.load('hints > iterate')
hints.root({})
hints.ttl(300)
hints.add_hosts('${path.join(dir, 'hosts')}')
policy.add(policy.suffix(policy.STUB({ '127.0.0.1@${slow.port}' }), { todname('${SLOW_ZONE}.') }))
cache.size = 10 * MB
`;
  const confFile = path.join(dir, 'kresd.conf');
  fs.writeFileSync(confFile, conf);
  fs.mkdirSync(path.join(dir, 'run'));
  giveToNobody(dir);
  const kresd = (): Daemon =>
    new Daemon('kresd', [BIN.kresd, '-n', '-q', '-c', confFile, path.join(dir, 'run')], () => waitForTls(port, pki, Date.now() + 10_000, undefined, pki.authName, 'kresd'));
  return withDaemon(kresd, 'kresd', dir, { host: '127.0.0.1', port, pki, zone: 'lab' });
}

/**
 * dnsdist 1.7 with a TLS bind (`addTLSLocal`) in front of unbound on plain
 * UDP/TCP with the `test.` zone. maxInFlight 1000 (unless given), as many
 * as a pool puts on a connection: at 100 (what WORLD.md's operators set), a client that
 * pipelines more than 100 at once may get only part of the answers and then
 * nothing until the receive timeout closes the connection (a bare TLS client
 * writing 140 queries one by one: 101 answered, closed after 1 s, in most
 * rounds). The pool keeps to 100 in flight on a connection (interop.test.ts).
 */
async function startDnsdist(slow: SlowAuthority, options: InteropOptions): Promise<Started> {
  const maxInFlight = options.maxInFlight ?? 1000;
  const pki = testPki();
  const port = await freePort();
  const backendPort = await freePort();
  const { dir, key, cert } = serverDir('dnsdist', pki);
  const backendConf = [
    ...unboundServerBase(dir, backendPort),
    '  do-udp: yes',
    // No keepalive: dnsdist would pass unbound's on to its clients, shortened under the load of dnsdist's own connections (see INTEROP_ITEMS).
    '  edns-tcp-keepalive: no',
    '  minimal-responses: yes',
    // dnsdist 1.7 opens a TCP connection to its backend for each query in flight: unbound's 10 would hold the rest.
    '  incoming-num-tcp: 256',
    ...zoneLines(NAMES).map((l) => `  ${l}`),
    ...unboundSlowZone(slow),
    'remote-control:',
    '  control-enable: no',
    '',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'unbound.conf'), backendConf);
  const conf = `
-- Nothing off this machine: no security polling (a DNS lookup of its version).
setSecurityPollSuffix('')
newServer({ address = '127.0.0.1:${backendPort}', healthCheckMode = 'up' })
addTLSLocal('127.0.0.1:${port}', '${cert}', '${key}', { maxInFlight = ${maxInFlight} })
-- The idle time it gives a client between queries (s), and the queries it takes on one connection.
setTCPRecvTimeout(${IDLE_MS / 1000})
setMaxTCPQueriesPerConnection(${options.maxQueriesPerConnection ?? DNSDIST_QUERIES_PER_CONNECTION})
${options.maxConnectionsPerClient !== undefined ? `setMaxTCPConnectionsPerClient(${options.maxConnectionsPerClient})` : ''}
`;
  const confFile = path.join(dir, 'dnsdist.conf');
  fs.writeFileSync(confFile, conf);
  giveToNobody(dir);
  const backend = new Daemon('unbound (dnsdist backend)', [BIN.unbound, '-d', '-c', path.join(dir, 'unbound.conf')], () => tcpReady(backendPort, 'unbound'));
  const dnsdist = new Daemon('dnsdist', [BIN.dnsdist, '--supervised', '--disable-syslog', '-C', confFile], () =>
    waitForTls(port, pki, Date.now() + 10_000, undefined, pki.authName, 'dnsdist'),
  );
  try {
    await backend.start();
    await dnsdist.start();
  } catch (err) {
    await dnsdist.stop();
    await backend.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    host: '127.0.0.1',
    port,
    pki,
    zone: 'test',
    async stop() {
      await dnsdist.stop();
      await backend.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts the daemon `make` gives and gives the server its closeAll (a handover) and stop (its directory removed too). */
async function withDaemon(make: () => Daemon, label: string, dir: string, where: Pick<Started, 'host' | 'port' | 'pki' | 'zone'>): Promise<Started> {
  /** The instance serving, and a second one while closeAll hands over. */
  const running = [make()];
  try {
    await running[0]?.start();
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    ...where,
    closeAll: () => handOver(running, make, where.port, label),
    async stop() {
      for (const d of running) await d.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
