/**
 * The stub proxies under test, each started from our own config file in a
 * temporary directory, listening for UDP on a free 127.0.0.1 port and
 * forwarding over DoT to the shared upstream unbound. Never the system
 * services, never port 53.
 *
 * Every child started here is tracked in `live` so that `stopAll()` (on
 * error or Ctrl-C) leaves nothing running.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import dnsPacket from 'dns-packet';
import { PROXY_NODE_FLAGS } from '../proxy/runtime/node-flags.js';
import { freePort, unboundServerBase, type UnboundServer } from '../test-support/unbound.js';
import { quickAckSupport } from '../proxy/upstream/quick-ack.js';
import { DEFAULT_POOL_OPTIONS } from '../proxy/upstream/pool/options.js';

export const PEER_NAMES = ['dotstub', 'stubby', 'dnsdist', 'unbound-fwd'] as const;
/**
 * Not a peer but the floor (bench/floor-server.mjs): a Node UDP server that
 * only flips the header, driven the same way. The throughput bench runs it
 * beside the peers unless --peers leaves it out.
 */
export const FLOOR = 'floor';
/**
 * The floor on every core: bench/floor-server.mjs with 2 threads sharing the
 * port (SO_REUSEPORT; Node 22.12 and later). What a dotstub with a listener
 * per thread could reach at most; on Node 20 it does not start, and says why.
 */
export const FLOOR_2 = 'floor-2';
/**
 * The low-rate bench's floor (bench/floor-dot.mjs): a Node forwarder from UDP
 * to one verified DoT connection that only swaps IDs, on dotstub's node and
 * flags. What Node itself costs per query on that path.
 */
export const FLOOR_DOT = 'floor-dot';
export type PeerName = (typeof PEER_NAMES)[number] | typeof FLOOR | typeof FLOOR_2 | typeof FLOOR_DOT;

export interface Peer {
  readonly name: PeerName;
  /** Where it takes DNS (UDP and TCP): 127.0.0.1 unless the context said otherwise. */
  readonly host: string;
  readonly port: number;
  readonly pid: number;
  /** What makes this peer's numbers differ in kind from the others (cache, padding, threads). */
  readonly notes: string;
  /** The last lines the process wrote to stderr/stdout, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

export interface PeerContext {
  readonly upstream: Pick<UnboundServer, 'host' | 'port' | 'pki' | 'resolverArg'>;
  /** Temporary directory for config files; removed by the caller. */
  readonly dir: string;
  /** Repository root, where bin/dotstub.js lives. */
  readonly root: string;
  /** Extra node flags for dotstub, e.g. --cpu-prof. */
  readonly nodeFlags?: readonly string[];
  /** Run it in this network namespace (`ip netns exec`), e.g. the link lab's client ns. */
  readonly netns?: string;
  /** Listen here instead of 127.0.0.1 on a free port (e.g. 127.0.0.11:53 for glibc, which only knows port 53). */
  readonly listen?: { readonly host: string; readonly port: number };
  /** The floor's threads (bench/floor-server.mjs): 1 for FLOOR, 2 for FLOOR_2 (startPeer sets it). */
  readonly floorThreads?: number;
  /** Caches on (each peer's default cache) instead of off: the browsing replay. */
  readonly caches?: boolean;
  /** Extra dotstub flags, e.g. --no-padding. */
  readonly dotstubFlags?: readonly string[];
}

export class PeerStartError extends Error {
  readonly code = 'BENCH_PEER_START';
}

const live = new Set<ChildProcess>();

/** Kills every child this module started (SIGTERM, then SIGKILL after 3 s). */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((c) => terminate(c)));
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    live.delete(child);
    return;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(t);
  live.delete(child);
}

function launch(ctx: PeerContext, name: PeerName, port: number, notes: string, cmd: string, args: readonly string[], cwd: string): Peer {
  const [c, a] = ctx.netns ? ['ip', ['netns', 'exec', ctx.netns, cmd, ...args]] : [cmd, args];
  const child = spawn(c, a, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let tail = '';
  const keep = (d: Buffer): void => {
    tail = (tail + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  if (child.pid === undefined) throw new PeerStartError(`${name}: could not start ${cmd}`);
  return { name, host: ctx.listen?.host ?? '127.0.0.1', port, pid: child.pid, notes, output: () => tail, stop: () => terminate(child) };
}

/** In a namespace: dig there until `n0.test A` gets an address. */
async function waitReadyIn(netns: string, peer: Peer, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const out = await new Promise<string>((resolve) => {
      execFile('ip', ['netns', 'exec', netns, 'dig', '+short', '+tries=1', '+time=1', `@${peer.host}`, '-p', String(peer.port), 'n0.test', 'A'], { timeout: 5000 }, (_err, stdout) => resolve(stdout));
    });
    if (/^\d+\.\d+\.\d+\.\d+$/m.test(out)) return;
    if (Date.now() > deadline) throw new PeerStartError(`${peer.name} did not answer on ${peer.host}:${peer.port} in ${netns} within ${timeoutMs} ms:\n${peer.output().trim()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Resolves once `port` answers `n0.test A` over UDP with NOERROR (so the TLS connection upstream works). */
export async function waitReady(peer: Peer, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const sock = dgram.createSocket('udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      sock.once('error', reject);
      sock.bind(0, '127.0.0.1', () => resolve());
    });
    let id = 1;
    for (;;) {
      if (Date.now() > deadline) {
        throw new PeerStartError(`${peer.name} did not answer on 127.0.0.1:${peer.port} within ${timeoutMs} ms:\n${peer.output().trim()}`);
      }
      id = (id + 1) & 0xffff;
      const query = dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name: 'n0.test' }] });
      const ok = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => done(false), 300);
        const onMessage = (msg: Buffer): void => {
          try {
            const a = dnsPacket.decode(msg);
            // RCODE is the low 4 bits of the flags word; 0 is NOERROR.
            // The floor answers every question with its own header flipped, never an address.
            if (a.id === id) done(((a.flags ?? 0) & 0x0f) === 0 && (peer.name === FLOOR || peer.name === FLOOR_2 || (a.answers?.length ?? 0) > 0));
          } catch {
            // not a DNS message: keep waiting
          }
        };
        const done = (v: boolean): void => {
          clearTimeout(t);
          sock.off('message', onMessage);
          resolve(v);
        };
        sock.on('message', onMessage);
        sock.send(query, peer.port, '127.0.0.1');
      });
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    sock.close();
  }
}

function write(dir: string, file: string, text: string): string {
  const p = path.join(dir, file);
  fs.writeFileSync(p, text);
  return p;
}

/**
 * Flags that keep a benchmarked dotstub to itself, if this build has them:
 * no control API (its fixed default port could be shared with a dashboard
 * someone else has open, whose live stream would cost CPU per query), a
 * config dir of its own (never the user's saved settings), and no answer
 * cache (like the other peers here: every query goes upstream).
 */
function isolationFlags(ctx: PeerContext, cli: string, configDir: string): string[] {
  let help = '';
  try {
    help = execFileSync(process.execPath, [cli, '--help'], { encoding: 'utf8', timeout: 10_000 });
  } catch {
    // an old build without --help: run it with the basic flags only
  }
  const flags: string[] = [];
  if (help.includes('--no-control')) flags.push('--no-control');
  // The throughput bench measures the forwarding path, with every peer's cache off.
  if (help.includes('--cache-size') && !ctx.caches) flags.push('--cache-size', '0');
  if (help.includes('--config-dir')) {
    fs.mkdirSync(configDir, { recursive: true });
    flags.push('--config-dir', configDir);
  }
  return flags;
}

/** The context's listen address, or a free port on 127.0.0.1. */
async function listenOf(ctx: PeerContext): Promise<{ host: string; port: number }> {
  return ctx.listen ?? { host: '127.0.0.1', port: await freePort() };
}

/** A config directory of its own for each instance (several of one peer may run at once). */
function peerDir(ctx: PeerContext, name: string, port: number, host: string): string {
  const dir = path.join(ctx.dir, `${name}-${host}-${port}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

async function startDotstub(ctx: PeerContext): Promise<Peer> {
  const { host, port } = await listenOf(ctx);
  const cli = path.join(ctx.root, 'bin', 'dotstub.js');
  const args = [
    // As users run it (the shebang, the app's supervisor): proxy/runtime/node-flags.ts.
    ...PROXY_NODE_FLAGS,
    ...(ctx.nodeFlags ?? []),
    cli,
    '--listen', `${host}:${port}`,
    '--resolver', ctx.upstream.resolverArg,
    '--ca', ctx.upstream.pki.caFile,
    ...isolationFlags(ctx, cli, ctx.listen ? path.join(peerDir(ctx, 'dotstub', port, host), 'config') : path.join(ctx.dir, 'dotstub-config')),
    ...(ctx.dotstubFlags ?? []),
  ];
  return launch(ctx, 'dotstub', port, dotstubNotes(args), process.execPath, args, ctx.root);
}

/**
 * What this dotstub run is, read from its own command line and the proxy's
 * defaults (never written by hand, so the table can't describe an older
 * dotstub): cache, padding, burst connections, quick ACKs.
 */
export function dotstubNotes(args: readonly string[]): string {
  const flag = (name: string): string | undefined => {
    const i = args.lastIndexOf(name);
    return i === -1 ? undefined : args[i + 1];
  };
  const cacheMb = flag('--cache-size') ?? '4';
  const cache = Number(cacheMb) === 0 ? 'no cache' : `cache ${cacheMb} MiB`;
  const padding = args.includes('--no-padding') ? 'no padding' : 'pads (RFC 8467)';
  const burst = Number(flag('--burst-connections') ?? DEFAULT_POOL_OPTIONS.burstConnections ?? 0);
  const pool = burst === 0 ? '1 connection' : `1 connection + up to ${burst} for bursts`;
  const quickAck = quickAckSupport().available ? 'quick ACKs' : 'no quick ACKs (addon not loaded)';
  return `${cache}; ${padding}; ${pool}; ${quickAck}; control API off`;
}

/** Where a peer forwards to: the DoT upstream's address, port, name and CA. */
export interface ForwardTarget {
  readonly address: string;
  readonly port: number;
  readonly authName: string;
  readonly caFile: string;
}

function targetOf(upstream: Pick<UnboundServer, 'host' | 'port' | 'pki'>): ForwardTarget {
  return { address: upstream.host, port: upstream.port, authName: upstream.pki.authName, caFile: upstream.pki.caFile };
}

/** stubby's config: strict DoT to `to`, padding 128, no cache (stubby has none), listening on `listen`@`port`. */
export function stubbyConfig(dir: string, listen: string, port: number, to: ForwardTarget): string {
  return [
    'resolution_type: GETDNS_RESOLUTION_STUB',
    'dns_transport_list:',
    '  - GETDNS_TRANSPORT_TLS',
    'tls_authentication: GETDNS_AUTHENTICATION_REQUIRED',
    'tls_query_padding_blocksize: 128',
    'edns_client_subnet_private: 1',
    'idle_timeout: 10000',
    'round_robin_upstreams: 0',
    `appdata_dir: "${dir}"`,
    `tls_ca_file: "${to.caFile}"`,
    'listen_addresses:',
    `  - ${listen}@${port}`,
    'upstream_recursive_servers:',
    `  - address_data: ${to.address}`,
    `    tls_port: ${to.port}`,
    `    tls_auth_name: "${to.authName}"`,
    '',
  ].join('\n');
}

async function startStubby(ctx: PeerContext): Promise<Peer> {
  const { host, port } = await listenOf(ctx);
  const dir = peerDir(ctx, 'stubby', port, host);
  const conf = write(dir, 'stubby.yml', stubbyConfig(dir, host, port, targetOf(ctx.upstream)));
  return launch(ctx, 'stubby', port, 'no cache; pads (128)', '/usr/bin/stubby', ['-C', conf, '-v', process.env.STUBBY_LOG ?? '3'], dir);
}

async function startDnsdist(ctx: PeerContext): Promise<Peer> {
  const { host, port } = await listenOf(ctx);
  const dir = peerDir(ctx, 'dnsdist', port, host);
  const conf = write(
    dir,
    'dnsdist.conf',
    [
      `setLocal("${host}:${port}")`,
      'setACL({"127.0.0.0/8"})',
      // No security polling (it would query the internet), no console, no carbon.
      'setSecurityPollSuffix("")',
      `newServer({address="${ctx.upstream.host}:${ctx.upstream.port}", tls="openssl", subjectName="${ctx.upstream.pki.authName}",` +
        ` caStore="${ctx.upstream.pki.caFile}", validateCertificates=true, checkName="n0.test.", checkInterval=5,` +
        // Without maxInFlight dnsdist sends one query at a time per backend connection and opens dozens of them.
        ' maxInFlight=1000})',
      // The browsing replay runs dnsdist with its packet cache, as a user would.
      ...(ctx.caches ? ['pc = newPacketCache(10000)', 'getPool(""):setCache(pc)'] : []),
      '',
    ].join('\n'),
  );
  return launch(ctx, 'dnsdist', port, `${ctx.caches ? 'packet cache 10,000 entries' : 'no cache (none configured)'}; no padding; maxInFlight 1000`, '/usr/bin/dnsdist', ['--supervised', '--disable-syslog', '-C', conf], dir);
}

/**
 * unbound as a DoT forwarder to `to`, listening on `host`@`port` (127.0.0.1
 * by default); caches neutralised (every query goes upstream, as the
 * throughput bench measures forwarding) unless `caches`.
 */
export function unboundForwarderConfig(dir: string, port: number, to: ForwardTarget, o: { readonly host?: string; readonly caches?: boolean } = {}): string {
  return [
    ...unboundServerBase(dir, port, 1, [o.host ?? '127.0.0.1']),
    '  outgoing-range: 256',
    '  do-not-query-localhost: no',
    '  qname-minimisation: no',
    ...(o.caches ? [] : ['  cache-max-ttl: 0', '  cache-max-negative-ttl: 0']),
    '  prefetch: no',
    '  serve-expired: no',
    // test. is one of unbound's built-in empty zones (RFC 6761); forward it like any other name.
    '  local-zone: "test." nodefault',
    `  tls-cert-bundle: "${to.caFile}"`,
    'forward-zone:',
    '  name: "."',
    `  forward-addr: ${to.address}@${to.port}#${to.authName}`,
    '  forward-tls-upstream: yes',
    'remote-control:',
    '  control-enable: no',
    '',
  ].join('\n');
}

async function startUnboundForwarder(ctx: PeerContext): Promise<Peer> {
  const { host, port } = await listenOf(ctx);
  const dir = peerDir(ctx, 'unbound-fwd', port, host);
  const conf = write(dir, 'unbound.conf', unboundForwarderConfig(dir, port, targetOf(ctx.upstream), { host, caches: ctx.caches }));
  return launch(ctx, 'unbound-fwd', port, `${ctx.caches ? 'cache on (defaults)' : 'cache neutralised (cache-max-ttl 0)'}; 1 thread`, '/usr/sbin/unbound', ['-d', '-c', conf], dir);
}

const starters: Record<PeerName, (ctx: PeerContext) => Promise<Peer>> = {
  dotstub: startDotstub,
  stubby: startStubby,
  dnsdist: startDnsdist,
  'unbound-fwd': startUnboundForwarder,
  [FLOOR]: startFloor,
  [FLOOR_2]: startFloor,
  [FLOOR_DOT]: startFloorDot,
};

async function startFloor(ctx: PeerContext): Promise<Peer> {
  const { host, port } = await listenOf(ctx);
  if (host !== '127.0.0.1') throw new PeerStartError('the floor listens on 127.0.0.1 only');
  // The same node and the same flags as dotstub's: the floor differs from it only in doing no DNS work.
  const threads = ctx.floorThreads ?? 1;
  const args = [...PROXY_NODE_FLAGS, path.join(ctx.root, 'bench', 'floor-server.mjs'), String(port), String(threads)];
  return threads === 1
    ? launch(ctx, FLOOR, port, 'no DNS work: the query back with its header flipped (one Node thread, same flags as dotstub)', process.execPath, args, ctx.root)
    : launch(ctx, FLOOR_2, port, `no DNS work, as the floor, on ${threads} Node threads sharing the port (SO_REUSEPORT)`, process.execPath, args, ctx.root);
}

async function startFloorDot(ctx: PeerContext): Promise<Peer> {
  const { host, port } = await listenOf(ctx);
  if (host !== '127.0.0.1') throw new PeerStartError('the DoT floor listens on 127.0.0.1 only');
  const to = targetOf(ctx.upstream);
  const args = [...PROXY_NODE_FLAGS, path.join(ctx.root, 'bench', 'floor-dot.mjs'), String(port), `${to.address}:${to.port}`, to.authName, to.caFile];
  return launch(ctx, FLOOR_DOT, port, 'no DNS work: UDP to one verified DoT connection, IDs swapped (one Node thread, same flags as dotstub)', process.execPath, args, ctx.root);
}

/** Starts one peer and waits until it answers through the upstream. */
export async function startPeer(name: PeerName, ctx: PeerContext): Promise<Peer> {
  const peer = await starters[name](name === FLOOR_2 ? { ...ctx, floorThreads: 2 } : ctx);
  try {
    await (ctx.netns ? waitReadyIn(ctx.netns, peer, 15_000) : waitReady(peer));
  } catch (err) {
    await peer.stop();
    throw err;
  }
  return peer;
}
