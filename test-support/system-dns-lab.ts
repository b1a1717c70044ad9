/**
 * A throwaway "machine" for system-DNS tests: new mount, network and PID
 * namespaces (`unshare --mount --net --pid --fork --propagation private`)
 * with a tmpfs /run, a COPY of /etc bind-mounted over /etc (so resolv.conf
 * can be a file, a symlink or a bind mount, and the test's backends replace
 * it for real), loopback up, and a veth pair standing in for the LAN:
 * 10.99.0.2 (veth0, "this machine") and 10.99.0.1 (veth1, the "DHCP"
 * resolver). This machine's own /etc/resolv.conf is never touched.
 *
 * Cleanup is structural: the namespace's init (PID 1) is a shell reading
 * its stdin from the test. When the test closes it — or the test process
 * dies — PID 1 exits, the kernel kills every process in the namespace, and
 * the mount and network namespaces (tmpfs, bind mounts, veths) go with it.
 * `close()` then removes the copy directory.
 *
 * systemd-resolved runs uninstalled from Debian's .deb (extracted, see
 * `resolvedBinary()`), on a private dbus-daemon with an allow-all policy; a
 * `systemctl` stand-in on the lab's PATH restarts it the way systemd would.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import { dotstubArgv, endInit, outputWatcher } from './netlab.js';
import type { UnboundLaunch } from './unbound.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LAB_DNS_SERVER = path.join(REPO, 'test-support', 'lab-dns-server.mjs');
const LAB_ZONE_SERVER = path.join(REPO, 'test-support', 'lab-zone-server.mjs');
/** Where an extracted systemd-resolved .deb lives (dpkg-deb -x of the version matching installed systemd). */
const RESOLVED_ROOT = process.env.DOTSTUB_LAB_RESOLVED_ROOT ?? '/var/cache/dotstub-lab/root';
/** Where an extracted network-manager .deb lives (dpkg-deb -x; its libraries libnm0 and libndp0 installed). */
const NM_ROOT = process.env.DOTSTUB_LAB_NM_ROOT ?? '/var/cache/dotstub-lab/nm/root';

/**
 * The extracted resolved binary: Debian 12's package ships it under lib/, Debian 13's (merged /usr) under usr/lib/.
 * .ci/run accepts both; so does the lab.
 */
function resolvedBinary(): string | null {
  for (const rel of ['lib/systemd/systemd-resolved', 'usr/lib/systemd/systemd-resolved']) {
    const bin = path.join(RESOLVED_ROOT, rel);
    if (fs.existsSync(bin)) return bin;
  }
  return null;
}

export interface LabOptions {
  /** /etc/resolv.conf: text of a plain file, or a symlink (target relative or absolute) with the file it points at created first. */
  readonly resolvConf: { readonly text: string } | { readonly symlink: string; readonly targetText?: string; readonly targetPath?: string };
  /** Bind-mount a file over /etc/resolv.conf (as containers do), so rename can't replace it. */
  readonly bindMountResolvConf?: boolean;
  /** Start a private dbus-daemon and systemd-resolved. */
  readonly resolved?: boolean;
  /**
   * Start NetworkManager (Debian's binary, run uninstalled) managing veth0
   * with a profile "lab" (10.99.0.2/24, DNS 10.99.0.1): `dns` is its [main]
   * dns= mode ('default': it writes /etc/resolv.conf; 'systemd-resolved':
   * it hands the link's DNS to resolved, which needs `resolved` too).
   */
  readonly networkManager?: { readonly dns: 'default' | 'systemd-resolved'; /** The profile's search domain (ipv4.dns-search). */ readonly dnsSearch?: string };
}

interface ExecResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Lab {
  /** Host-side directory holding the lab's /etc copy and helpers. */
  readonly dir: string;
  /** Host-side path of the lab's /etc. */
  readonly etc: string;
  /** A `dotstub` command (script) usable inside the lab, e.g. as a package script's DOTSTUB_CLI. */
  readonly cli: string;
  /** Runs a program inside the lab and waits for it (default timeout 60 s). */
  exec(argv: readonly string[], opts?: { timeoutMs?: number; env?: NodeJS.ProcessEnv }): Promise<ExecResult>;
  /** Starts a long-running program inside the lab. Killed with the lab at the latest. */
  spawn(argv: readonly string[], opts?: { env?: NodeJS.ProcessEnv }): LabProcess;
  /** `dotstub …` (the TypeScript sources through tsx) inside the lab. */
  dotstub(args: readonly string[], opts?: { timeoutMs?: number; user?: string }): Promise<ExecResult>;
  spawnDotstub(args: readonly string[]): LabProcess;
  /** A lab DNS server answering every A query with `answer`; counts what it was asked. */
  dnsServer(host: string, port: number, answer: string, logFile?: string): Promise<LabDnsServer>;
  /** A lab DNS server answering from `zone` (name → type → data; NXDOMAIN for other names), a LAN's or VPN's own resolver; counts what it was asked. */
  zoneServer(host: string, port: number, zone: Readonly<Record<string, Readonly<Record<string, string>>>>): Promise<LabDnsServer>;
  /** How to run test-support/unbound.ts's unbound inside the lab (its `launch` option), listening on `addresses`. */
  unboundLaunch(addresses: readonly string[]): UnboundLaunch;
  close(): Promise<void>;
}

export interface LabProcess {
  readonly child: ChildProcess;
  /** Sends a signal to the program itself inside the lab (nsenter doesn't forward signals). */
  signal(sig: 'TERM' | 'KILL' | 'INT' | 'STOP' | 'CONT' | 'USR2'): Promise<void>;
  output(): string;
  /** Resolves once the output contains `text`. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

export interface LabDnsServer {
  /** Names this server was asked for (lowercase, no trailing dot). */
  queries(): string[];
  stop(): Promise<void>;
}

/** What is missing for the resolved lab, or null when it can run. */
export function resolvedLabMissing(): string | null {
  if (process.geteuid?.() !== 0) return 'needs root (namespaces and mounts)';
  for (const bin of ['/usr/bin/unshare', '/usr/bin/nsenter', '/usr/bin/dbus-daemon']) if (!fs.existsSync(bin)) return `${bin} is not installed`;
  if (resolvedBinary() === null) {
    return `no systemd-resolved binary at ${RESOLVED_ROOT}/lib/systemd/ or ${RESOLVED_ROOT}/usr/lib/systemd/: run "apt-get download systemd-resolved=$(dpkg-query -W -f='\${Version}' systemd) && dpkg-deb -x systemd-resolved_*.deb ${RESOLVED_ROOT}" (set DOTSTUB_LAB_RESOLVED_ROOT to use another place)`;
  }
  return null;
}

/** What is missing for the NetworkManager lab, or null when it can run. */
export function networkManagerLabMissing(): string | null {
  if (!fs.existsSync(path.join(NM_ROOT, 'usr/sbin/NetworkManager'))) {
    return `no NetworkManager binary at ${NM_ROOT}/usr/sbin/NetworkManager: run "apt-get download network-manager && dpkg-deb -x network-manager_*.deb ${NM_ROOT} && apt-get install --no-install-recommends libnm0 libndp0" (set DOTSTUB_LAB_NM_ROOT to use another place)`;
  }
  if (!fs.existsSync('/usr/bin/dbus-daemon')) return '/usr/bin/dbus-daemon is not installed';
  const ldd = spawnSync('ldd', [path.join(NM_ROOT, 'usr/sbin/NetworkManager')], { encoding: 'utf8' });
  const missingLibs = [...(ldd.stdout ?? '').matchAll(/^\s*(\S+) => not found/gm)].map((m) => m[1]);
  if (missingLibs.length > 0) return `NetworkManager needs ${missingLibs.join(', ')}: apt-get install --no-install-recommends libnm0 libndp0`;
  return null;
}

/** What is missing for any lab, or null. */
export function labMissing(): string | null {
  if (process.platform !== 'linux') return 'Linux namespaces only';
  if (process.geteuid?.() !== 0) return 'needs root (namespaces and mounts)';
  for (const bin of ['/usr/bin/unshare', '/usr/bin/nsenter', '/usr/sbin/ip', '/usr/bin/getent']) if (!fs.existsSync(bin)) return `${bin} is not installed`;
  return null;
}

const BUS_CONF = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path=/run/dbus/system_bus_socket</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/></policy></busconfig>
`;

function systemctlShim(): string {
  const bin = resolvedBinary() ?? 'systemd-resolved';
  return `#!/bin/sh
# The lab's stand-in for systemctl: systemd is not PID 1 here, so
# "try-reload-or-restart systemd-resolved.service" restarts the uninstalled
# resolved the way systemd would (only if it is running). Logs each call.
# While /run/lab-stop-job exists, a job on resolved waits for it, as a
# restart of resolved waits for the stop job of a unit ordered after it:
# blocking, systemctl waits too (the stop that runs it never ends);
# with --no-block it returns and the restart runs once the file is gone.
echo "systemctl $*" >> /run/lab-systemctl.log
case "$*" in *systemd-resolved*) ;; *) exit 0 ;; esac
restart() {
  while [ -e /run/lab-stop-job ]; do sleep 0.05; done
  p=$(cat /run/lab-resolved.pid 2>/dev/null) || return 0
  alive() { [ -d /proc/$1 ] && ! grep -q '^State:.*zombie' /proc/$1/status 2>/dev/null; }
  alive "$p" || return 0
  kill "$p"
  while alive "$p"; do sleep 0.05; done
  setsid ${bin} >>/run/lab-resolved.log 2>&1 < /dev/null &
  echo $! > /run/lab-resolved.pid
}
case " $* " in
  *" --no-block "*) (restart) >/dev/null 2>&1 < /dev/null & ;;
  *) restart ;;
esac
`;
}

function sh(script: string): void {
  const r = spawnSync('sh', ['-c', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`lab setup: ${script}: ${r.stderr}`);
}

/** A lab for the test that calls this, closed when that test finishes, whatever its outcome. */
export async function labForTest(opts: LabOptions): Promise<Lab> {
  const lab = await startLab(opts);
  onTestFinished(() => lab.close());
  return lab;
}

export async function startLab(opts: LabOptions): Promise<Lab> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-sysdns-lab-'));
  const etc = path.join(dir, 'etc');
  const processes = new Set<ChildProcess>();
  let init: ChildProcess | undefined;
  const close = async (): Promise<void> => {
    for (const c of processes) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    if (init) await endInit(init);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    sh(`cp -a /etc ${etc}`);
    fs.appendFileSync(path.join(etc, 'passwd'), 'systemd-resolve:x:991:991:systemd Resolver:/:/usr/sbin/nologin\n');
    fs.appendFileSync(path.join(etc, 'group'), 'systemd-resolve:x:991:\n');
    // Only the test's own servers: no NSS module that reaches anything else.
    fs.writeFileSync(path.join(etc, 'nsswitch.conf'), 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n');
    fs.writeFileSync(path.join(etc, 'hosts'), '127.0.0.1 localhost\n');
    fs.rmSync(path.join(etc, 'resolv.conf'), { force: true });
    const rc = opts.resolvConf;
    let runSetup = '';
    if ('text' in rc) fs.writeFileSync(path.join(etc, 'resolv.conf'), rc.text);
    else {
      fs.symlinkSync(rc.symlink, path.join(etc, 'resolv.conf'));
      if (rc.targetText !== undefined && rc.targetPath !== undefined) {
        fs.writeFileSync(path.join(dir, 'symlink-target'), rc.targetText);
        runSetup = `mkdir -p ${path.dirname(rc.targetPath)} && cp ${dir}/symlink-target ${rc.targetPath}`;
      }
    }
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.writeFileSync(path.join(dir, 'bin', 'systemctl'), systemctlShim(), { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'bus.conf'), BUS_CONF);
    fs.writeFileSync(
      path.join(dir, 'bin', 'dotstub'),
      `#!/bin/sh\ncd ${REPO} && exec ${process.execPath} --import tsx -e "import('./proxy/cli.ts').then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })" -- "$@"\n`,
      { mode: 0o755 },
    );
    if (opts.networkManager) {
      const nm = path.join(etc, 'NetworkManager');
      fs.rmSync(nm, { recursive: true, force: true });
      fs.mkdirSync(path.join(nm, 'conf.d'), { recursive: true });
      fs.mkdirSync(path.join(nm, 'system-connections'));
      fs.mkdirSync(path.join(dir, 'nm-state'));
      fs.writeFileSync(
        path.join(nm, 'NetworkManager.conf'),
        `[main]\nplugins=keyfile\ndns=${opts.networkManager.dns}\n${opts.networkManager.dns === 'default' ? 'rc-manager=file\n' : ''}auth-polkit=false\n[keyfile]\nunmanaged-devices=none\n[device-lab]\nmatch-device=interface-name:veth0\nmanaged=1\n`,
      );
      fs.writeFileSync(
        path.join(nm, 'system-connections', 'lab.nmconnection'),
        `[connection]\nid=lab\ntype=ethernet\ninterface-name=veth0\nautoconnect=true\n[ipv4]\nmethod=manual\naddress1=10.99.0.2/24\ndns=10.99.0.1;\n${opts.networkManager.dnsSearch ? `dns-search=${opts.networkManager.dnsSearch};\n` : ''}[ipv6]\nmethod=disabled\n`,
        { mode: 0o600 },
      );
    }
    if (opts.bindMountResolvConf) fs.copyFileSync(path.join(etc, 'resolv.conf'), path.join(dir, 'resolv.conf.bind'));
    const setup = [
      'set -e',
      'ip link set lo up',
      'ip link add veth0 type veth peer name veth1',
      'ip addr add 10.99.0.2/24 dev veth0',
      'ip addr add 10.99.0.1/24 dev veth1',
      'ip link set veth0 up',
      'ip link set veth1 up',
      'mount -t tmpfs tmpfs /run',
      // The lab's own PIDs in /proc (ps, /proc/PID of lab processes); boot_id is the machine's.
      'mount -t proc proc /proc',
      `mount --bind ${etc} /etc`,
      opts.bindMountResolvConf ? `mount --bind ${dir}/resolv.conf.bind /etc/resolv.conf` : ':',
      runSetup || ':',
      'echo LAB-READY',
      // PID 1 of the lab: lives exactly as long as the test holds stdin.
      'read _ || true',
    ].join('\n');
    init = spawn('unshare', ['--mount', '--net', '--pid', '--fork', '--kill-child', '--propagation', 'private', 'sh', '-c', setup], { stdio: ['pipe', 'pipe', 'pipe'] });
    let initOut = '';
    init.stdout?.on('data', (d: Buffer) => (initOut += d.toString()));
    init.stderr?.on('data', (d: Buffer) => (initOut += d.toString()));
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`lab did not start: ${initOut}`)), 10_000);
      const check = (): void => {
        if (initOut.includes('LAB-READY')) {
          clearTimeout(t);
          resolve();
        }
      };
      init?.stdout?.on('data', check);
      init?.once('exit', (code) => {
        clearTimeout(t);
        reject(new Error(`lab setup failed (exit ${String(code)}): ${initOut}`));
      });
    });
    const unsharePid = init.pid as number;
    const children = fs.readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim().split(/\s+/);
    const nsPid = Number(children[0]);
    if (!nsPid) throw new Error('lab: cannot find the namespace init');
    const labPath = `${dir}/bin:${path.join(RESOLVED_ROOT, 'usr/bin')}:${path.join(NM_ROOT, 'usr/bin')}:${path.join(NM_ROOT, 'usr/sbin')}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;
    const enter = (argv: readonly string[]): string[] => ['--target', String(nsPid), '--mount', '--net', '--pid', `--wd=${REPO}`, '--', ...argv];
    // Name routing on inside the lab (its own network and resolv.conf: a link's resolver here is the lab's); test rigs keep it off elsewhere.
    const labEnv = (extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({ ...process.env, PATH: labPath, NO_COLOR: '1', DOTSTUB_NAME_ROUTING: 'on', ...extra });

    const labSpawn = (argv: readonly string[], o?: { env?: NodeJS.ProcessEnv }): LabProcess => {
      // The shell prints the program's PID inside the lab, then becomes it.
      const child = spawn('nsenter', enter(['sh', '-c', 'echo "LABPID $$" >&2; exec "$@"', 'sh', ...argv]), { env: labEnv(o?.env), stdio: ['ignore', 'pipe', 'pipe'] });
      processes.add(child);
      const watch = outputWatcher(child);
      const self: LabProcess = {
        child,
        signal: async (sig) => {
          await self.waitFor(/^LABPID \d+$/m, 5000);
          const pid = /^LABPID (\d+)$/m.exec(watch.output())?.[1] as string;
          await exec(['kill', `-${sig}`, pid]);
        },
        ...watch,
      };
      return self;
    };
    const exec = async (argv: readonly string[], o?: { timeoutMs?: number; env?: NodeJS.ProcessEnv }): Promise<ExecResult> => {
      const child = spawn('nsenter', enter(argv), { env: labEnv(o?.env), stdio: ['ignore', 'pipe', 'pipe'] });
      processes.add(child);
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const t = setTimeout(() => {
        // A grandchild may hold the pipes open: stop waiting for them too.
        child.kill('SIGKILL');
        child.stdout?.destroy();
        child.stderr?.destroy();
        child.emit('close', null);
      }, o?.timeoutMs ?? 60_000);
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      clearTimeout(t);
      processes.delete(child);
      return { code, stdout, stderr };
    };
    const server = async (argv: readonly string[]): Promise<LabDnsServer> => {
      const p = labSpawn(argv);
      await p.waitFor('READY');
      return {
        queries: () => [...p.output().matchAll(/^Q (\S+) /gm)].map((m) => (m[1] as string).toLowerCase().replace(/\.$/, '')),
        stop: async () => {
          // The server itself: nsenter does not forward signals to it.
          await p.signal('TERM');
          await p.exited;
        },
      };
    };
    const lab: Lab = {
      dir,
      etc,
      cli: path.join(dir, 'bin', 'dotstub'),
      exec,
      spawn: labSpawn,
      dotstub: (args, o) => exec(o?.user ? ['setpriv', `--reuid=${o.user}`, `--regid=${o.user}`, '--clear-groups', ...dotstubArgv(args)] : dotstubArgv(args), o),
      spawnDotstub: (args) => labSpawn(dotstubArgv(args)),
      dnsServer: (host, port, answer, logFile) => server([process.execPath, LAB_DNS_SERVER, host, String(port), answer, ...(logFile ? [logFile] : [])]),
      zoneServer: (host, port, zone) => server([process.execPath, LAB_ZONE_SERVER, host, String(port), JSON.stringify(zone)]),
      unboundLaunch: (addresses) => ({
        addresses,
        spawn: (argv) => {
          const p = labSpawn(argv);
          return { child: p.child, signal: (sig) => void p.signal(sig.replace(/^SIG/, '') as 'TERM' | 'KILL') };
        },
        ready: async (ports) => {
          for (const deadline = Date.now() + 10_000; ; ) {
            const listening = (await exec(['ss', '-Hltn'])).stdout;
            if (ports.every((p) => new RegExp(`:${p}\\s`).test(listening))) return;
            if (Date.now() > deadline) throw new Error(`unbound did not listen on ${ports.join(', ')} in the lab`);
            await new Promise((r) => setTimeout(r, 100));
          }
        },
      }),
      close,
    };
    if (opts.resolved) {
      const missing = resolvedLabMissing();
      if (missing) throw new Error(missing);
      const bin = resolvedBinary() ?? 'systemd-resolved';
      const r = await exec([
        'sh',
        '-c',
        [
          'set -e',
          'mkdir -p /run/dbus /run/systemd/resolve',
          'chown 991:991 /run/systemd/resolve',
          `dbus-daemon --config-file=${dir}/bus.conf --fork --nopidfile`,
          `setsid ${bin} >>/run/lab-resolved.log 2>&1 < /dev/null &`,
          'echo $! > /run/lab-resolved.pid',
          'for i in $(seq 100); do [ -S /run/systemd/resolve/io.systemd.Resolve ] && exit 0; sleep 0.1; done',
          'cat /run/lab-resolved.log; exit 1',
        ].join('\n'),
      ]);
      if (r.code !== 0) throw new Error(`systemd-resolved did not start in the lab: ${r.stdout}${r.stderr}`);
    }
    if (opts.networkManager) {
      const missing = networkManagerLabMissing();
      if (missing) throw new Error(missing);
      const r = await exec([
        'sh',
        '-c',
        [
          'set -e',
          // No udev here: NetworkManager manages devices it sees in a sysfs of this network namespace.
          'mount -t sysfs -o ro sysfs /sys',
          `mkdir -p /var/lib/NetworkManager && mount --bind ${dir}/nm-state /var/lib/NetworkManager`,
          // veth0 is NetworkManager's to configure (its profile sets the same address): configured already, it would count as external.
          'ip addr flush dev veth0 && ip link set veth0 down',
          'mkdir -p /run/dbus',
          `[ -S /run/dbus/system_bus_socket ] || dbus-daemon --config-file=${dir}/bus.conf --fork --nopidfile`,
          `setsid ${path.join(NM_ROOT, 'usr/sbin/NetworkManager')} --no-daemon >>/run/lab-nm.log 2>&1 < /dev/null &`,
          'echo $! > /run/lab-nm.pid',
          'for i in $(seq 100); do nmcli -t -f DEVICE,STATE device 2>/dev/null | grep -q "^veth0:connected$" && exit 0; sleep 0.1; done',
          'nmcli device || true; cat /run/lab-nm.log; exit 1',
        ].join('\n'),
      ]);
      if (r.code !== 0) throw new Error(`NetworkManager did not bring up veth0 in the lab: ${r.stdout}${r.stderr}`);
    }
    return lab;
  } catch (err) {
    await close();
    throw err;
  }
}
