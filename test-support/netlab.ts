/**
 * A network lab for tests and benchmarks: three network namespaces joined by
 * veth pairs through a router, so iptables in the middle can do to a
 * connection what a hostile or broken network does (docs/networks.md#testing-it-here):
 *
 *   client ──veth── router ──veth── server ("the internet")
 *   10.53.1.2        .1.1 | .2.1      10.53.2.2 (+ 10.53.2.3)
 *   fd53:1::2    fd53:1::1 | fd53:2::1 fd53:2::2 (+ fd53:2::3)
 *
 * Every address exists only inside the lab. The router forwards IPv4 and
 * IPv6; the client and the server route everything through it.
 *
 * Cleanup is structural, as in system-dns-lab.ts: the whole lab lives in its
 * own mount, PID and network namespaces (`unshare --mount --net --pid --fork
 * --kill-child`), whose PID 1 is a shell reading its stdin from the test.
 * The three namespaces are named netns (`ip netns add`) whose bind mounts
 * exist only in the lab's private, tmpfs-backed /run; the veth pairs are
 * created straight inside them. When the test closes stdin — or the test
 * process dies, even by SIGKILL — PID 1 exits, the kernel kills every process
 * of the lab (unbound, dotstub, tcpdump), the mount namespace goes and the
 * network namespaces, their veths and iptables rules with it. Nothing is
 * ever created in this machine's own network namespace, so names can't
 * collide with other tests; they carry the test's pid anyway, for `ps`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { UnboundLaunch } from './unbound.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The lab's fixed plan; the addresses are private to the lab's namespaces. */
const NETLAB_ADDRESSES = {
  client4: '10.53.1.2',
  client6: 'fd53:1::2',
  routerClientSide4: '10.53.1.1',
  routerClientSide6: 'fd53:1::1',
  routerServerSide4: '10.53.2.1',
  routerServerSide6: 'fd53:2::1',
  server4: '10.53.2.2',
  server6: 'fd53:2::2',
  /** Second addresses on the server, e.g. for a lying resolver or a wrong-certificate TLS server. */
  serverAlt4: '10.53.2.3',
  serverAlt6: 'fd53:2::3',
} as const;

const MAC = { client: '02:53:00:00:01:02', routerClientSide: '02:53:00:00:01:01', routerServerSide: '02:53:00:00:02:01', server: '02:53:00:00:02:02' } as const;

/** Interface names inside each namespace. */
const NETLAB_INTERFACES = { client: 'eth0', routerClientSide: 'lan0', routerServerSide: 'wan0', server: 'eth0' } as const;

type NetlabPlace = 'client' | 'router' | 'server';

interface ExecResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface NetlabProcess {
  readonly child: ChildProcess;
  /** Sends a signal to the program itself (nsenter doesn't forward signals). */
  signal(sig: NodeJS.Signals): void;
  output(): string;
  /** Resolves once the output (stdout and stderr) matches; rejects on timeout or exit. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  /** Sends SIGTERM (SIGKILL after `graceMs`) and waits for the exit. */
  stop(graceMs?: number): Promise<void>;
  readonly exited: Promise<number | null>;
}

export interface Namespace {
  readonly place: NetlabPlace;
  /** The `ip netns` name, inside the lab. */
  readonly name: string;
  /** Runs a program in this namespace and waits for it (default timeout 30 s). */
  exec(argv: readonly string[], opts?: { timeoutMs?: number; env?: NodeJS.ProcessEnv }): Promise<ExecResult>;
  /** Starts a long-running program in this namespace; killed with the lab at the latest. */
  spawn(argv: readonly string[], opts?: { env?: NodeJS.ProcessEnv }): NetlabProcess;
  /** The command line that runs `argv` in this namespace, for a program another tool starts (a browser Playwright launches); killed with the lab at the latest. */
  command(argv: readonly string[]): string[];
}

/** One packet of cleartext DNS (port 53) seen leaving or arriving on the client's side. */
export interface DnsPacket {
  /** Seconds since the epoch. */
  readonly time: number;
  readonly src: string;
  readonly dst: string;
  readonly proto: 'udp' | 'tcp';
  readonly srcPort: number;
  readonly dstPort: number;
  /** The first question's name, lowercase without the trailing dot; null for a packet carrying no DNS message (a SYN). */
  readonly qname: string | null;
  readonly response: boolean;
}

export interface Capture {
  /** Stops the capture and returns the port-53 packets the client sent out (queries, SYNs). */
  stop(): Promise<DnsPacket[]>;
  /** Every port-53 packet seen so far, both ways (the capture keeps running). */
  packets(): Promise<DnsPacket[]>;
}

/**
 * What the client's network offers (docs/networks.md#the-network-shapes-people-are-on):
 *   - 'dual': an IPv4 and an IPv6 address and a default route of each family (the default);
 *   - 'ipv4-only': no IPv6 address but link-local and no IPv6 route, as most homes and hotspots are;
 *   - 'offline': the addresses, no default route of either family;
 *   - 'ipv6-only': no IPv4 address and no IPv4 route, an IPv6 address and route (a mobile network; with
 *     test-support/nat64-lab.ts's NAT64 in the router, IPv4 is reached through a prefix).
 * The router and the server are dual stack in every shape.
 */
export type NetlabShape = 'dual' | 'ipv4-only' | 'offline' | 'ipv6-only';

export interface NetlabOptions {
  /** Text of /etc/resolv.conf as every program in the lab sees it (the host's file is never touched). */
  readonly resolvConf?: string;
  readonly shape?: NetlabShape;
}

export interface Netlab {
  readonly client: Namespace;
  readonly router: Namespace;
  readonly server: Namespace;
  readonly addresses: typeof NETLAB_ADDRESSES;
  /** A directory on the host for the test's files (configs, captures, ready files); removed by close(). */
  readonly dir: string;
  /**
   * Adds a rule in the router: `['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', '-j', 'DROP']`,
   * `['-t', 'nat', '-A', 'PREROUTING', …]`. `family` 6 uses ip6tables, 'both' both. Returns its removal.
   */
  iptables(rule: readonly string[], family?: 4 | 6 | 'both'): Promise<() => Promise<void>>;
  /** Starts a capture of port-53 traffic (UDP and TCP) on the client's interface toward the router. */
  capture(): Promise<Capture>;
  close(): Promise<void>;
}

/** What is missing for the lab, or null when it can run. */
export function netlabMissing(): string | null {
  if (process.platform !== 'linux') return 'the network lab needs Linux namespaces';
  if (process.geteuid?.() !== 0) return 'the network lab needs root (network namespaces, iptables)';
  for (const bin of ['/usr/bin/unshare', '/usr/bin/nsenter', '/usr/sbin/ip', '/usr/sbin/iptables', '/usr/sbin/ip6tables', '/usr/bin/tcpdump', '/usr/bin/tshark']) {
    if (!fs.existsSync(bin)) return `${bin} is not installed (apt-get install iproute2 iptables tcpdump tshark util-linux)`;
  }
  return null;
}

let labCount = 0;

function neighbours(ns: string, dev: string, mac: string, ips: readonly string[]): string[] {
  return ips.map((ip) => `ip -n ${ns} neigh replace ${ip} lladdr ${mac} dev ${dev} nud permanent`);
}

function setupScript(id: string, resolvConfFile: string | undefined, shape: NetlabShape): string {
  const a = NETLAB_ADDRESSES;
  const i = NETLAB_INTERFACES;
  const c = `${id}-client`;
  const r = `${id}-router`;
  const s = `${id}-server`;
  const sysctls = (ns: string): string =>
    `ip netns exec ${ns} sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0 net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.default.accept_ra=0`;
  return [
    'set -e',
    'mount -t tmpfs tmpfs /run',
    resolvConfFile ? `mount --bind ${resolvConfFile} /etc/resolv.conf` : ':',
    'ip link set lo up',
    `for ns in ${c} ${r} ${s}; do ip netns add $ns; ip -n $ns link set lo up; done`,
    sysctls(c),
    sysctls(r),
    sysctls(s),
    `ip link add ${i.client} netns ${c} address ${MAC.client} type veth peer name ${i.routerClientSide} netns ${r} address ${MAC.routerClientSide}`,
    `ip link add ${i.server} netns ${s} address ${MAC.server} type veth peer name ${i.routerServerSide} netns ${r} address ${MAC.routerServerSide}`,
    shape === 'ipv6-only' ? ':' : `ip -n ${c} addr add ${a.client4}/24 dev ${i.client}`,
    shape === 'ipv4-only' ? ':' : `ip -n ${c} addr add ${a.client6}/64 dev ${i.client} nodad`,
    `ip -n ${r} addr add ${a.routerClientSide4}/24 dev ${i.routerClientSide}`,
    `ip -n ${r} addr add ${a.routerClientSide6}/64 dev ${i.routerClientSide} nodad`,
    `ip -n ${r} addr add ${a.routerServerSide4}/24 dev ${i.routerServerSide}`,
    `ip -n ${r} addr add ${a.routerServerSide6}/64 dev ${i.routerServerSide} nodad`,
    `ip -n ${s} addr add ${a.server4}/24 dev ${i.server}`,
    `ip -n ${s} addr add ${a.serverAlt4}/24 dev ${i.server}`,
    `ip -n ${s} addr add ${a.server6}/64 dev ${i.server} nodad`,
    `ip -n ${s} addr add ${a.serverAlt6}/64 dev ${i.server} nodad`,
    `ip -n ${c} link set ${i.client} up`,
    `ip -n ${r} link set ${i.routerClientSide} up`,
    `ip -n ${r} link set ${i.routerServerSide} up`,
    `ip -n ${s} link set ${i.server} up`,
    shape === 'offline' || shape === 'ipv6-only' ? ':' : `ip -n ${c} route add default via ${a.routerClientSide4}`,
    shape === 'dual' || shape === 'ipv6-only' ? `ip -n ${c} -6 route add default via ${a.routerClientSide6}` : ':',
    `ip -n ${s} route add default via ${a.routerServerSide4}`,
    `ip -n ${s} -6 route add default via ${a.routerServerSide6}`,
    // No ICMP rate limit in the router: a REJECT with ICMP answers every SYN, so a
    // test's timing doesn't depend on what an earlier test made the router send.
    `ip netns exec ${r} sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0`,
    // Fixed neighbours: a fresh veth drops the first IPv6 neighbour solicitation
    // now and then, which would cost a test a 1 s retransmit it isn't about.
    ...neighbours(c, i.client, MAC.routerClientSide, [a.routerClientSide4, a.routerClientSide6]),
    ...neighbours(r, i.routerClientSide, MAC.client, [a.client4, a.client6]),
    ...neighbours(r, i.routerServerSide, MAC.server, [a.server4, a.serverAlt4, a.server6, a.serverAlt6]),
    ...neighbours(s, i.server, MAC.routerServerSide, [a.routerServerSide4, a.routerServerSide6]),
    'echo NETLAB-READY',
    // PID 1 of the lab: lives exactly as long as the test holds stdin.
    'read _ || true',
  ].join('\n');
}

/**
 * Shell commands, run inside the client namespace, that bring the client's
 * link up again as a network does after it dropped (a Wi-Fi reassociation,
 * a cable back): the link, its default routes and its gateway's neighbour
 * entries (a link going down takes its routes and neighbours with it; DHCP
 * or NetworkManager puts them back). For the flapping-link lab.
 */
export function clientLinkUpCommands(shape: NetlabShape = 'dual'): string {
  const a = NETLAB_ADDRESSES;
  const dev = NETLAB_INTERFACES.client;
  const mac = MAC.routerClientSide;
  return [
    `ip link set ${dev} up`,
    shape === 'ipv4-only' ? ':' : `ip addr replace ${a.client6}/64 dev ${dev} nodad`,
    `ip neigh replace ${a.routerClientSide4} lladdr ${mac} dev ${dev} nud permanent`,
    shape === 'ipv4-only' ? ':' : `ip neigh replace ${a.routerClientSide6} lladdr ${mac} dev ${dev} nud permanent`,
    shape === 'offline' || shape === 'ipv6-only' ? ':' : `ip route replace default via ${a.routerClientSide4}`,
    shape === 'dual' || shape === 'ipv6-only' ? `ip -6 route replace default via ${a.routerClientSide6}` : ':',
  ].join('; ');
}

/** Collects a child's stdout and stderr; `waitFor` resolves when they match, rejects on timeout or exit. */
export function outputWatcher(child: ChildProcess): Pick<NetlabProcess, 'output' | 'waitFor' | 'exited'> {
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer): void => {
    out += d.toString();
    for (const l of listeners) l();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    output: () => out,
    exited,
    waitFor: (text, timeoutMs = 20_000) =>
      new Promise<void>((resolve, reject) => {
        const match = (): boolean => (typeof text === 'string' ? out.includes(text) : text.test(out));
        if (match()) return resolve();
        const done = (err?: Error): void => {
          clearTimeout(t);
          listeners.delete(check);
          if (err) reject(err);
          else resolve();
        };
        const t = setTimeout(() => done(new Error(`timed out waiting for ${String(text)}; output so far:\n${out}`)), timeoutMs);
        const check = (): void => {
          if (match()) done();
        };
        listeners.add(check);
        void exited.then(() => {
          if (listeners.has(check)) done(match() ? undefined : new Error(`exited (${String(child.exitCode ?? child.signalCode)}) before ${String(text)}; output:\n${out}`));
        });
      }),
  };
}

/** Ends a lab whose PID 1 reads its stdin: closes stdin (SIGKILL after 5 s) and waits for the exit. */
export async function endInit(init: ChildProcess): Promise<void> {
  if (init.exitCode !== null || init.signalCode !== null) return;
  const gone = new Promise((r) => init.once('exit', r));
  init.stdin?.end();
  const t = setTimeout(() => init.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(t);
}

/** The host PID of the program nsenter forked (nsenter --pid forks once; `ip netns exec` then execs). */
function programPid(nsenterPid: number): number | undefined {
  try {
    const kids = fs.readFileSync(`/proc/${nsenterPid}/task/${nsenterPid}/children`, 'utf8').trim();
    const first = Number(kids.split(/\s+/)[0]);
    return first > 0 ? first : undefined;
  } catch {
    return undefined;
  }
}

/** tshark's fields, one packet a line, tab-separated. */
const TSHARK_FIELDS = ['frame.time_epoch', 'ip.src', 'ipv6.src', 'ip.dst', 'ipv6.dst', 'udp.srcport', 'udp.dstport', 'tcp.srcport', 'tcp.dstport', 'dns.qry.name', 'dns.flags.response'];

function readCapture(file: string): DnsPacket[] {
  // `-d tcp.port==53,dns` is tshark's default already; -2 -R none: one pass, every packet.
  const r = spawnSync('tshark', ['-n', '-r', file, '-T', 'fields', '-E', 'separator=\t', '-E', 'occurrence=f', ...TSHARK_FIELDS.flatMap((f) => ['-e', f])], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`tshark could not read the capture ${file}: ${r.stderr}`);
  const packets: DnsPacket[] = [];
  for (const line of r.stdout.split('\n')) {
    if (!line.trim()) continue;
    const [time, src4, src6, dst4, dst6, usrc, udst, tsrc, tdst, qname, response] = line.split('\t');
    const udp = Boolean(udst);
    packets.push({
      time: Number(time),
      src: src4 || src6 || '',
      dst: dst4 || dst6 || '',
      proto: udp ? 'udp' : 'tcp',
      srcPort: Number(udp ? usrc : tsrc),
      dstPort: Number(udp ? udst : tdst),
      qname: qname ? qname.toLowerCase().replace(/\.$/, '') : null,
      response: response === '1' || response === 'True',
    });
  }
  return packets;
}

/** Directories of labs whose test process was killed (SIGKILL runs no exit handler); their namespaces went with it. */
function removeStaleDirs(): void {
  for (const d of fs.readdirSync(os.tmpdir())) {
    const m = /^dotstub-netlab(\d+)x\d+-/.exec(d);
    if (m && !fs.existsSync(`/proc/${m[1]}`)) fs.rmSync(path.join(os.tmpdir(), d), { recursive: true, force: true });
  }
}

export async function startNetlab(opts: NetlabOptions = {}): Promise<Netlab> {
  const missing = netlabMissing();
  if (missing) throw new Error(missing);
  removeStaleDirs();
  const id = `netlab${process.pid}x${labCount++}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `dotstub-${id}-`));
  const processes = new Set<ChildProcess>();
  let init: ChildProcess | undefined;
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    if (init) await endInit(init);
    // The kernel has killed everything in the lab; reap our nsenter children.
    for (const c of processes) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // Also on an uncaught failure: a plain exit closes the pipe anyway, this only makes it prompt.
  const onExit = (): void => {
    init?.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  try {
    let resolvConfFile: string | undefined;
    if (opts.resolvConf !== undefined) {
      resolvConfFile = path.join(dir, 'resolv.conf');
      fs.writeFileSync(resolvConfFile, opts.resolvConf);
    }
    init = spawn('unshare', ['--mount', '--net', '--pid', '--fork', '--kill-child', '--propagation', 'private', 'sh', '-c', setupScript(id, resolvConfFile, opts.shape ?? 'dual')], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const initWatch = outputWatcher(init);
    await initWatch.waitFor('NETLAB-READY', 15_000).catch((err: unknown) => {
      throw new Error(`the network lab did not start: ${err instanceof Error ? err.message : String(err)}`);
    });
    const unsharePid = init.pid as number;
    const labPid = Number(fs.readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim().split(/\s+/)[0]);
    if (!labPid) throw new Error('the network lab: cannot find its init process');

    const enter = (ns: string, argv: readonly string[]): string[] => ['--target', String(labPid), '--mount', '--pid', `--wd=${REPO}`, '--', 'ip', 'netns', 'exec', ns, ...argv];
    const env = (extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({ ...process.env, NO_COLOR: '1', ...extra });

    const namespace = (place: NetlabPlace): Namespace => {
      const name = `${id}-${place}`;
      return {
        place,
        name,
        command: (argv) => ['nsenter', ...enter(name, argv)],
        exec: async (argv, o) => {
          const child = spawn('nsenter', enter(name, argv), { env: env(o?.env), stdio: ['ignore', 'pipe', 'pipe'] });
          processes.add(child);
          let stdout = '';
          let stderr = '';
          child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
          child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
          const t = setTimeout(() => {
            const pid = child.pid === undefined ? undefined : programPid(child.pid);
            if (pid) process.kill(pid, 'SIGKILL');
            child.kill('SIGKILL');
          }, o?.timeoutMs ?? 30_000);
          const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
          clearTimeout(t);
          processes.delete(child);
          return { code, stdout, stderr };
        },
        spawn: (argv, o) => {
          const child = spawn('nsenter', enter(name, argv), { env: env(o?.env), stdio: ['ignore', 'pipe', 'pipe'] });
          processes.add(child);
          const watch = outputWatcher(child);
          const signal = (sig: NodeJS.Signals): void => {
            if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
            const pid = programPid(child.pid);
            try {
              if (pid) process.kill(pid, sig);
              else child.kill(sig);
            } catch {
              // already gone
            }
          };
          return {
            child,
            ...watch,
            signal,
            stop: async (graceMs = 3000) => {
              if (child.exitCode !== null || child.signalCode !== null) return;
              signal('SIGTERM');
              const t = setTimeout(() => signal('SIGKILL'), graceMs);
              await watch.exited;
              clearTimeout(t);
              processes.delete(child);
            },
          };
        },
      };
    };
    const client = namespace('client');
    const router = namespace('router');
    const server = namespace('server');

    const iptables = async (rule: readonly string[], family: 4 | 6 | 'both' = 4): Promise<() => Promise<void>> => {
      const bins = family === 'both' ? ['iptables', 'ip6tables'] : [family === 4 ? 'iptables' : 'ip6tables'];
      const add = rule.findIndex((w) => w === '-A' || w === '-I');
      if (add < 0) throw new Error(`netlab.iptables: the rule must add (-A or -I): ${rule.join(' ')}`);
      // The removal names the same rule: -I CHAIN [N] becomes -D CHAIN.
      const del = [...rule];
      del[add] = '-D';
      if (rule[add] === '-I' && /^\d+$/.test(rule[add + 2] ?? '')) del.splice(add + 2, 1);
      for (const bin of bins) {
        const r = await router.exec([bin, '-w', ...rule]);
        if (r.code !== 0) throw new Error(`${bin} ${rule.join(' ')} failed: ${r.stderr.trim()}`);
      }
      let removed = false;
      return async () => {
        if (removed) return;
        removed = true;
        for (const bin of bins) {
          const r = await router.exec([bin, '-w', ...del]);
          if (r.code !== 0 && !closed) throw new Error(`${bin} ${del.join(' ')} failed: ${r.stderr.trim()}`);
        }
      };
    };

    let captures = 0;
    const capture = async (): Promise<Capture> => {
      const file = path.join(dir, `capture-${captures++}.pcap`);
      // --immediate-mode -U: each packet is written as it comes, so a capture read mid-run is current; -Z root: write into our 0700 dir.
      const p = client.spawn(['tcpdump', '-n', '-U', '--immediate-mode', '-Z', 'root', '-i', NETLAB_INTERFACES.client, '-w', file, 'port 53']);
      await p.waitFor(/listening on/, 10_000);
      const fromClient = (pk: DnsPacket): boolean => pk.src === NETLAB_ADDRESSES.client4 || pk.src === NETLAB_ADDRESSES.client6;
      return {
        packets: () => Promise.resolve(fs.existsSync(file) ? readCapture(file) : []),
        stop: async () => {
          p.signal('SIGINT');
          await p.exited;
          return (fs.existsSync(file) ? readCapture(file) : []).filter(fromClient);
        },
      };
    };

    return { client, router, server, addresses: NETLAB_ADDRESSES, dir, iptables, capture, close: async () => {
      process.removeListener('exit', onExit);
      await close();
    } };
  } catch (err) {
    process.removeListener('exit', onExit);
    await close();
    throw err;
  }
}

/** Resolves once TCP `ports` are listening in `ns` (checked with `ss` every 100 ms); rejects after `timeoutMs`. */
export async function waitForListening(ns: Namespace, ports: readonly number[], timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await ns.exec(['ss', '-Hltn']);
    const listening = new Set([...r.stdout.matchAll(/:(\d+)\s/g)].map((m) => Number(m[1])));
    if (ports.every((p) => listening.has(p))) return;
    if (Date.now() > deadline) throw new Error(`nothing listened on TCP ${ports.join(', ')} in the ${ns.place} namespace within ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/**
 * Runs a test-support/unbound.ts server inside `ns`, listening on `addresses`:
 * `startUnbound({ port: 853, dohPort: 443, launch: unboundIn(lab.server, [a.server4, a.server6]) })`.
 */
export function unboundIn(ns: Namespace, addresses: readonly string[]): UnboundLaunch {
  return {
    addresses,
    spawn: (argv) => ns.spawn(argv),
    ready: (ports) => waitForListening(ns, ports),
  };
}

/** argv that runs the dotstub CLI from the TypeScript sources (through tsx), for `ns.spawn`. */
export function dotstubArgv(args: readonly string[]): string[] {
  return [
    process.execPath,
    '--import',
    'tsx',
    '-e',
    "import('./proxy/cli.ts').then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })",
    '--',
    ...args,
  ];
}
