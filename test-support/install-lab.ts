/**
 * The install lab (issue 20): the real dotstub package installed into a
 * Debian 12 that boots with systemd as PID 1 in a container, so the unit,
 * the maintainer scripts, start ordering, `Restart=`, reboots and power cuts
 * are what a user gets. How it is built, and why (docs/install-lab.md):
 *
 * - a minbase root, built once with mmdebstrap and cached in
 *   /var/cache/dotstub-lab/install-base (its recipe version in a marker file,
 *   so a changed recipe rebuilds it);
 * - per machine an overlay on it (the base is never written);
 * - booted with `systemd-nspawn -b --keep-unit --register=no
 *   --private-network` (the host has no systemd); commands run inside with
 *   nsenter into the container's PID 1;
 * - a power cut is SIGKILL to the container's PID 1, then a new boot (a new
 *   boot id, files as they were).
 *
 * Inside, on a "LAN" interface (a veth pair inside: this kernel has no dummy links): unbound as the network's own resolver
 * (10.53.0.1:53, the original /etc/resolv.conf) answering who.test with
 * 10.0.0.1, and unbound as the DoT resolver dotstub is configured to use
 * (10.53.0.2:853, the test PKI, pinned) answering who.test with 10.0.0.2. So
 * one lookup through the system's resolver (getent, as applications do)
 * tells which path the machine's DNS takes: private, the LAN in cleartext,
 * or none.
 *
 * Everything is torn down on every path: the container's PID 1 killed,
 * nspawn waited for, the overlay unmounted and removed.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { testPki } from './certs.js';

const LAB_DIR = '/var/cache/dotstub-lab';
const RUNS_DIR = path.join(LAB_DIR, 'install-runs');
const PATH_INSIDE = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The LAN resolver (the machine's original DNS) and the DoT resolver, and what each answers for who.test. */
const LAN_DNS = '10.53.0.1';
const DOT_ADDR = '10.53.0.2';
const ANSWER = { lan: '10.0.0.1', private: '10.0.0.2' } as const;
const ORIGINAL_RESOLV_CONF = `# the LAN's resolver (install lab)\nnameserver ${LAN_DNS}\n`;

/** Why the lab can't run here, or undefined when it can. */
export function labUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'the install lab needs root (it boots a container with systemd-nspawn)';
  if (process.platform !== 'linux') return 'the install lab needs Linux';
  for (const [bin, pkg] of [
    ['mmdebstrap', 'mmdebstrap'],
    ['systemd-nspawn', 'systemd-container (pinned to the host\'s systemd version, see .ci/run)'],
    ['nsenter', 'util-linux'],
    ['dpkg-deb', 'dpkg'],
  ] as const) {
    if (spawnSync('sh', ['-c', `command -v ${bin}`]).status !== 0) return `${bin} is missing: apt-get install --no-install-recommends ${pkg}`;
  }
  if (!fs.readFileSync('/proc/filesystems', 'utf8').includes('overlay')) return 'the kernel has no overlay filesystem';
  return undefined;
}

function sh(cmd: string, args: readonly string[], opts: { timeout?: number; input?: string } = {}): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], timeout: opts.timeout ?? 60_000, input: opts.input });
}

function write(file: string, text: string, mode = 0o644): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  fs.chmodSync(file, mode);
}

function unboundConf(name: string, iface: string, answer: string, tls: boolean): string {
  return [
    'server:',
    '  verbosity: 1',
    '  username: ""',
    '  chroot: ""',
    `  directory: "/etc/lab"`,
    `  pidfile: "/run/lab-${name}.pid"`,
    '  use-syslog: no',
    '  do-daemonize: no',
    '  do-ip6: no',
    `  interface: ${iface}@${tls ? 853 : 53}`,
    '  access-control: 0.0.0.0/0 allow',
    '  module-config: "iterator"',
    '  num-threads: 1',
    ...(tls ? ['  tls-port: 853', '  tls-service-key: "/etc/lab/server.key"', '  tls-service-pem: "/etc/lab/server.pem"', '  pad-responses: yes'] : []),
    '  local-zone: "." static',
    '  local-zone: "test." static',
    '  local-data: "test. 3600 IN SOA ns.test. admin.test. 1 3600 600 86400 300"',
    // A short TTL: dotstub's cache must not hide which resolver answers.
    `  local-data: "who.test. 1 IN A ${answer}"`,
    'remote-control:',
    '  control-enable: no',
    '',
  ].join('\n');
}

/** The lab's own units inside the machine: the LAN, its resolver, the DoT resolver. */
function labUnits(root: string): void {
  const unit = (name: string, text: string): void => {
    write(path.join(root, 'etc/systemd/system', name), text);
    fs.mkdirSync(path.join(root, 'etc/systemd/system/multi-user.target.wants'), { recursive: true });
    fs.symlinkSync(`/etc/systemd/system/${name}`, path.join(root, 'etc/systemd/system/multi-user.target.wants', name));
  };
  unit(
    'lab-lan.service',
    `[Unit]
Description=install lab: the LAN (a veth pair; one end has the resolvers' addresses)
DefaultDependencies=no
Before=network-pre.target
Wants=network-pre.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/sbin/ip link set lo up
ExecStart=/sbin/ip link add lan0 type veth peer name lan1
ExecStart=/sbin/ip link set lan1 up
ExecStart=/sbin/ip addr add ${LAN_DNS}/24 dev lan0
ExecStart=/sbin/ip addr add ${DOT_ADDR}/24 dev lan0
ExecStart=/sbin/ip link set lan0 up

[Install]
WantedBy=multi-user.target
`,
  );
  for (const [name, what] of [
    ['lab-lan-dns', 'the LAN\'s resolver (plain DNS)'],
    ['lab-dot', 'the DoT resolver dotstub uses'],
  ] as const) {
    unit(
      `${name}.service`,
      `[Unit]
Description=install lab: ${what}
After=lab-lan.service
Requires=lab-lan.service
Before=network-pre.target

[Service]
ExecStart=/usr/sbin/unbound -d -c /etc/lab/${name}.conf

[Install]
WantedBy=multi-user.target
`,
    );
  }
  write(path.join(root, 'etc/lab/lab-lan-dns.conf'), unboundConf('lan-dns', LAN_DNS, ANSWER.lan, false));
  write(path.join(root, 'etc/lab/lab-dot.conf'), unboundConf('dot', DOT_ADDR, ANSWER.private, true));
}

/**
 * Which Debian, and which DNS setup: plain /etc/resolv.conf naming the LAN
 * resolver, or systemd-resolved in stub mode (its package's own
 * resolv.conf symlink) with the LAN resolver as the LAN link's server, as
 * DHCP would set it.
 */
export interface BaseSpec {
  readonly suite: 'bookworm' | 'trixie';
  readonly dns: 'resolv.conf' | 'resolved' | 'networkmanager';
}
const BOOKWORM: BaseSpec = { suite: 'bookworm', dns: 'resolv.conf' };

/** Bump when the recipe below changes: the cached bases are rebuilt. */
const RECIPE_VERSION = 3;
const recipe = (spec: BaseSpec): string =>
  `install-base ${RECIPE_VERSION}: ${spec.suite} minbase, ${includes(spec).join(' ')}, lab units, DNS: ${spec.dns}`;
const includes = (spec: BaseSpec): string[] => [
  'systemd',
  'systemd-sysv',
  'dbus',
  'iproute2',
  'ca-certificates',
  'adduser',
  'unbound',
  'openssl',
  // pkaction and pkexec: polkit's view of the package's action, and the app's "Turn on private DNS…".
  'polkitd',
  'pkexec',
  ...(spec.dns === 'resolved' ? ['systemd-resolved'] : []),
  ...(spec.dns === 'networkmanager' ? ['network-manager'] : []),
];
/** Where a base lives (the plain bookworm one where it always did). */
function baseDir(spec: BaseSpec): string {
  return path.join(LAB_DIR, spec.suite === 'bookworm' && spec.dns === 'resolv.conf' ? 'install-base' : `install-base-${spec.suite}${spec.dns === 'resolv.conf' ? '' : `-${spec.dns}`}`);
}

/** The machine's resolved setup: stub-resolv.conf, the LAN's resolver on the LAN link (as DHCP would set it). */
function resolvedSetup(root: string): void {
  fs.rmSync(path.join(root, 'etc/resolv.conf'), { force: true });
  fs.symlinkSync('../run/systemd/resolve/stub-resolv.conf', path.join(root, 'etc/resolv.conf'));
  write(
    path.join(root, 'etc/systemd/system/lab-lan-link-dns.service'),
    `[Unit]
Description=install lab: the LAN link's DNS server, as DHCP would give it to resolved
After=lab-lan.service systemd-resolved.service
Requires=lab-lan.service
Wants=systemd-resolved.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/bin/resolvectl dns lan0 ${LAN_DNS}

[Install]
WantedBy=multi-user.target
`,
  );
  fs.symlinkSync('/etc/systemd/system/lab-lan-link-dns.service', path.join(root, 'etc/systemd/system/multi-user.target.wants/lab-lan-link-dns.service'));
}

/**
 * The machine's NetworkManager setup: it manages the LAN link (the peer end,
 * an address of its own) with the LAN's resolver as the connection's DNS,
 * and writes /etc/resolv.conf itself, as on a desktop without resolved.
 */
function networkManagerSetup(root: string): void {
  write(
    path.join(root, 'etc/NetworkManager/system-connections/lab-lan.nmconnection'),
    `[connection]
id=lab-lan
type=ethernet
interface-name=lan1
autoconnect=true

[ipv4]
method=manual
address1=10.53.9.2/24
dns=${LAN_DNS};

[ipv6]
method=disabled
`,
    0o600,
  );
  // Debian's NetworkManager.conf leaves ifupdown's links alone; lan1 is not one.
  write(path.join(root, 'etc/NetworkManager/conf.d/50-install-lab.conf'), '[main]\nplugins=keyfile\n\n[keyfile]\nunmanaged-devices=interface-name:lan0\n');
}

/**
 * A pristine root (built once per spec, ~30 s and ~250 MB): Debian minbase
 * with systemd, unbound, openssl and polkit, the lab's units, the packaged
 * unbound's own services masked (they would take port 53), resolv.conf
 * naming the LAN (or resolved's stub, with the LAN resolver on the link).
 * The mirror is Debian's own (deb.debian.org), the one package registry
 * these machines reach.
 */
export function ensureBase(log: (msg: string) => void = () => {}, spec: BaseSpec = BOOKWORM): string {
  const dir = baseDir(spec);
  const marker = path.join(dir, '.dotstub-lab-recipe');
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8') === recipe(spec)) return dir;
  const building = `${dir}.building`;
  fs.rmSync(building, { recursive: true, force: true });
  fs.mkdirSync(LAB_DIR, { recursive: true });
  log(`building ${dir} with mmdebstrap (once)`);
  const t0 = Date.now();
  try {
    const s = spec.suite;
    sh(
      'mmdebstrap',
      [
        '--variant=minbase',
        `--include=${includes(spec).join(',')}`,
        '--aptopt=APT::Install-Recommends "false"',
        s,
        building,
        `deb http://deb.debian.org/debian ${s} main`,
        `deb http://deb.debian.org/debian ${s}-updates main`,
        `deb http://deb.debian.org/debian-security ${s}-security main`,
      ],
      { timeout: 600_000 },
    );
    const masked = ['unbound.service', 'unbound-resolvconf.service', 'systemd-networkd.service', 'systemd-networkd.socket'];
    if (spec.dns !== 'resolved') masked.push('systemd-resolved.service');
    for (const unit of masked) {
      const link = path.join(building, 'etc/systemd/system', unit);
      fs.rmSync(link, { force: true });
      fs.symlinkSync('/dev/null', link);
    }
    fs.rmSync(path.join(building, 'etc/systemd/system/multi-user.target.wants/unbound.service'), { force: true });
    fs.rmSync(path.join(building, 'etc/resolv.conf'), { force: true });
    write(path.join(building, 'etc/hostname'), 'lab\n');
    write(path.join(building, 'etc/hosts'), '127.0.0.1 localhost\n127.0.1.1 lab\n');
    labUnits(building);
    if (spec.dns === 'resolved') resolvedSetup(building);
    else if (spec.dns === 'networkmanager') networkManagerSetup(building);
    else write(path.join(building, 'etc/resolv.conf'), ORIGINAL_RESOLV_CONF);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(building, dir);
    fs.writeFileSync(marker, recipe(spec));
  } catch (err) {
    fs.rmSync(building, { recursive: true, force: true });
    throw err;
  }
  log(`built ${dir} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return dir;
}

export interface Exec {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** What a lookup of who.test through the machine's resolver got: which path, or none. */
export type DnsPath = 'private' | 'lan' | 'none';

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The host PID of the container's PID 1: a descendant of nspawn whose innermost PID is 1. */
function findLeader(nspawnPid: number): number | undefined {
  const children = new Map<number, number[]>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${d}/status`, 'utf8'))?.[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {
      // gone meanwhile
    }
  }
  const queue = [...(children.get(nspawnPid) ?? [])];
  while (queue.length) {
    const pid = queue.shift() as number;
    try {
      const ns = /^NSpid:\s+(.*)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]?.trim().split(/\s+/) ?? [];
      if (ns.length > 1 && ns[ns.length - 1] === '1') return pid;
    } catch {
      continue;
    }
    queue.push(...(children.get(pid) ?? []));
  }
  return undefined;
}

/** A Debian machine on an overlay of the base: boot it, run commands in it, cut its power. */
export class Machine {
  readonly name: string;
  readonly dir: string;
  /** The machine's root as the host sees it (the overlay's merged view). */
  readonly root: string;
  #nspawn: ChildProcess | undefined;
  #exited: Promise<number | null> | undefined;
  #leader: number | undefined;
  #console = '';
  #mounted = false;

  private constructor(name: string, dir: string) {
    this.name = name;
    this.dir = dir;
    this.root = path.join(dir, 'root');
  }

  /** A new machine on an overlay of `base`; nothing runs yet. */
  static create(base: string, name: string): Machine {
    fs.mkdirSync(RUNS_DIR, { recursive: true });
    const dir = fs.mkdtempSync(path.join(RUNS_DIR, `${name}-`));
    const m = new Machine(name, dir);
    for (const d of ['upper', 'work', 'root']) fs.mkdirSync(path.join(dir, d));
    sh('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${base},upperdir=${dir}/upper,workdir=${dir}/work`, m.root]);
    m.#mounted = true;
    return m;
  }

  get leader(): number | undefined {
    return this.#leader;
  }

  get running(): boolean {
    return this.#nspawn !== undefined;
  }

  /** Boots the machine and waits until systemd says it is up (running, or degraded: reported). */
  async boot(timeoutMs = 60_000): Promise<{ ms: number; state: string }> {
    if (this.#nspawn) throw new Error(`${this.name} is already running`);
    const t0 = performance.now();
    this.#console = '';
    const child = spawn(
      'systemd-nspawn',
      ['-q', '--keep-unit', '--register=no', '-D', this.root, '-M', this.name, '--private-network', '--resolv-conf=off', '--timezone=off', '--link-journal=no', '--console=passive', '-b'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (d: Buffer): void => {
      this.#console = (this.#console + d.toString()).slice(-8000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    this.#nspawn = child;
    this.#exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    void this.#exited.then(() => {
      if (this.#nspawn === child) {
        this.#nspawn = undefined;
        this.#leader = undefined;
      }
    });
    const deadline = Date.now() + timeoutMs;
    while (!this.#leader) {
      if (!this.#nspawn) throw new Error(`systemd-nspawn exited at boot: ${this.#console.trim()}`);
      if (Date.now() > deadline) throw new Error(`${this.name}: no container PID 1 after ${timeoutMs} ms`);
      this.#leader = findLeader(child.pid as number);
      if (!this.#leader) await sleep(20);
    }
    for (;;) {
      const r = this.exec(['systemctl', 'is-system-running', '--wait'], { timeoutMs: Math.max(1000, deadline - Date.now()) });
      const state = r.stdout.trim();
      if (state === 'running' || state === 'degraded') {
        if (state === 'degraded') {
          const failed = this.exec(['systemctl', '--failed', '--no-legend', '--plain']).stdout.trim();
          if (failed.includes('lab-')) throw new Error(`${this.name}: the lab's own services failed: ${failed}`);
        }
        return { ms: performance.now() - t0, state };
      }
      if (Date.now() > deadline) throw new Error(`${this.name}: not up after ${timeoutMs} ms (${state || r.stderr.trim()})`);
      await sleep(50);
    }
  }

  /** Runs argv inside the machine (all its namespaces, a clean environment). */
  exec(argv: readonly string[], opts: { timeoutMs?: number; env?: Record<string, string> } = {}): Exec {
    if (!this.#leader) throw new Error(`${this.name} is not running`);
    const env = Object.entries({ PATH: PATH_INSIDE, LANG: 'C.UTF-8', ...opts.env }).map(([k, v]) => `${k}=${v}`);
    const t0 = performance.now();
    const r = spawnSync('nsenter', ['-t', String(this.#leader), '-a', 'env', '-i', ...env, ...argv], { encoding: 'utf8', timeout: opts.timeoutMs ?? 60_000 });
    return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? (r.error ? String(r.error) : ''), ms: performance.now() - t0 };
  }

  /** Runs a shell script inside; throws with its output when it fails. */
  run(script: string, timeoutMs = 60_000): Exec {
    const r = this.exec(['sh', '-c', script], { timeoutMs });
    if (r.code !== 0) throw new Error(`${this.name}: \`${script}\` exited ${r.code}: ${(r.stderr || r.stdout).trim()}`);
    return r;
  }

  /** One lookup of who.test through the system's resolver, as an application makes it (glibc, 1 s timeout, 1 try). */
  lookup(): DnsPath {
    const r = this.exec(['getent', 'ahostsv4', 'who.test'], { env: { RES_OPTIONS: 'timeout:1 attempts:1' }, timeoutMs: 5000 });
    const addr = r.stdout.split(/\s+/)[0];
    return addr === ANSWER.private ? 'private' : addr === ANSWER.lan ? 'lan' : 'none';
  }

  /** Polls lookup() until it gives `want` or the time is up; the ms it took, or undefined. */
  async waitFor(want: DnsPath, timeoutMs: number): Promise<number | undefined> {
    const t0 = performance.now();
    for (;;) {
      if (this.lookup() === want) return performance.now() - t0;
      if (performance.now() - t0 > timeoutMs) return undefined;
      await sleep(50);
    }
  }

  /** The machine's /etc/resolv.conf as bytes (read through the overlay), or null when absent. */
  resolvConf(): Buffer | null {
    try {
      return fs.readFileSync(path.join(this.root, 'etc/resolv.conf'));
    } catch {
      return null;
    }
  }

  /** Waits for nspawn to exit (after a reboot or poweroff inside, or a power cut). */
  async waitDown(timeoutMs = 30_000): Promise<number | null> {
    const exited = this.#exited;
    if (!this.#nspawn || !exited) return null;
    const code = await Promise.race([exited, sleep(timeoutMs).then(() => 'timeout' as const)]);
    if (code === 'timeout') throw new Error(`${this.name}: systemd-nspawn still running ${timeoutMs} ms later`);
    return code;
  }

  /** A power cut: SIGKILL to the container's PID 1 (everything in it dies with it). */
  async powerCut(): Promise<void> {
    if (this.#leader) process.kill(this.#leader, 'SIGKILL');
    await this.waitDown();
  }

  /** A clean reboot from inside: systemd stops every service, nspawn exits (133), boot again. */
  async reboot(): Promise<{ downMs: number; bootMs: number }> {
    const t0 = performance.now();
    this.exec(['systemctl', 'reboot'], { timeoutMs: 10_000 });
    await this.waitDown(60_000);
    const downMs = performance.now() - t0;
    const { ms } = await this.boot();
    return { downMs, bootMs: ms };
  }

  /** Copies a host file into the machine (through the overlay); returns its path inside. */
  copyIn(file: string, inside: string): string {
    fs.mkdirSync(path.dirname(path.join(this.root, inside)), { recursive: true });
    fs.copyFileSync(file, path.join(this.root, inside));
    return inside;
  }

  /** Stops everything and removes the overlay; safe to call on every path, twice. */
  async dispose(): Promise<void> {
    try {
      if (this.#nspawn) {
        if (this.#leader) {
          try {
            process.kill(this.#leader, 'SIGKILL');
          } catch {
            // already gone
          }
        } else this.#nspawn.kill('SIGKILL');
        await this.waitDown(30_000).catch(() => this.#nspawn?.kill('SIGKILL'));
      }
    } finally {
      if (this.#mounted) {
        spawnSync('umount', [this.root]);
        if (spawnSync('mountpoint', ['-q', this.root]).status === 0) spawnSync('umount', ['-l', this.root]);
        this.#mounted = false;
      }
      fs.rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/** The machine's lab configuration for this run: the test PKI (fresh: its certificates last 2 days) and dotstub's resolver. */
export function configureLab(m: Machine): void {
  const pki = testPki();
  write(path.join(m.root, 'etc/lab/server.key'), pki.serverKey, 0o600);
  write(path.join(m.root, 'etc/lab/server.pem'), pki.serverCert);
  // dotstub's state and config dir (the unit's --config-dir), as the dashboard would have saved a custom resolver.
  const id = `custom:${DOT_ADDR}:853`;
  fs.mkdirSync(path.join(m.root, 'var/lib/dotstub'), { recursive: true, mode: 0o700 });
  write(
    path.join(m.root, 'var/lib/dotstub/resolvers.json'),
    `${JSON.stringify({ active: id, custom: [{ id, label: 'lab DoT', addresses: [DOT_ADDR], port: 853, authName: pki.authName, pins: [pki.serverPin] }] }, null, 2)}\n`,
    0o600,
  );
}

/**
 * A lab stand-in for the administrator's password in polkit's dialog: alice
 * may take the action org.dotstub.turn-on (and nothing else). With it, the
 * app's own command, run as alice, shows which polkit action pkexec found
 * for it: only the package's action lets it through.
 */
export function allowTurnOn(m: Machine, user: string): void {
  write(
    path.join(m.root, 'etc/polkit-1/rules.d/50-install-lab.rules'),
    `// install lab: ${user} stands in for a user at the machine who gave an administrator's password.
polkit.addRule(function (action, subject) {
  if (action.id === "org.dotstub.turn-on" && subject.user === "${user}") return polkit.Result.YES;
});
`,
  );
}

/** Host-side leftovers a run must not leave: mounts under the runs dir and ve-* links. */
export function leftovers(): string[] {
  const found: string[] = [];
  for (const line of fs.readFileSync('/proc/self/mounts', 'utf8').split('\n')) {
    if (line.split(' ')[1]?.startsWith(RUNS_DIR)) found.push(`mount ${line.split(' ')[1]}`);
  }
  for (const link of fs.readdirSync('/sys/class/net')) if (link.startsWith('ve-')) found.push(`link ${link}`);
  return found;
}
