/**
 * The install lab (issue 20): the dotstub package built by
 * `npm run package:deb`, installed with apt into a booted Debian 12
 * container (test-support/install-lab.ts), through a user's whole life with
 * it: install, enable, stop, a crash, reboots, power cuts, a hung proxy,
 * a desktop user driving the service over its control socket (and one
 * outside the dotstub group refused), uninstall and purge. Each step checks what a user would notice: where a
 * lookup goes (private DNS, the LAN in cleartext, nowhere) and whether
 * /etc/resolv.conf is exactly what it was.
 *
 * Root only; it skips and says why otherwise. Short form by default (each
 * repeated scenario ×2, about a minute plus the package build); the full
 * form of the issue: DOTSTUB_INSTALL_LAB_RUNS=10. DOTSTUB_LAB_DEB=FILE tests
 * that package instead of building one.
 *
 * Four of these failed on the unit and scripts as they were before issue 20
 * (b3bef61): the lookup right after `systemctl start` (5 of 10 answered),
 * the power cut with the service installed but not enabled (0 of 10 with
 * their DNS), the SIGSTOP (private DNS never came back); the power cut with
 * the service enabled, which the first install-lab runs saw fail 11 of 15 boots, came
 * back taken over in every cut this lab made before the fix too (24 of 24),
 * and is held by the namespace test proxy/system-dns/power-cut-lab.test.ts,
 * which reproduced the race (2 of 12 rounds) before the journal lock.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { turnOnCommand } from '../app/proxy-process/service-connection.js';
import { allowTurnOn, configureLab, ensureBase, labUnavailable, leftovers, Machine, type BaseSpec, type DnsPath } from './install-lab.js';
import { skipWith } from './skips.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const RUNS = Math.max(1, Number(process.env.DOTSTUB_INSTALL_LAB_RUNS ?? 2));
const unavailable = labUnavailable();

/** One row of the scenario table printed at the end. */
interface Row {
  readonly scenario: string;
  readonly result: string;
  readonly timings: string;
}
const rows: Row[] = [];

/** The package under test: DOTSTUB_LAB_DEB, or the real one built as docs/packages.md says, once per run (gzip: the lab tests the contents, not the compression). */
let built: { deb: string; dir?: string } | undefined;
function theDeb(log: (s: string) => void): string {
  if (built) return built.deb;
  if (process.env.DOTSTUB_LAB_DEB) built = { deb: path.resolve(process.env.DOTSTUB_LAB_DEB) };
  else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-lab-deb-'));
    const t0 = performance.now();
    built = { dir, deb: execFileSync('node', [path.join(ROOT, 'scripts/package-deb.mjs'), '--gzip', '--no-desktop', '--out', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim() };
    log(`built ${path.basename(built.deb)} in ${ms(performance.now() - t0)}`);
  }
  return built.deb;
}
afterAll(() => {
  if (built?.dir) fs.rmSync(built.dir, { recursive: true, force: true });
  if (rows.length) {
    const w = [Math.max(...rows.map((r) => r.scenario.length)), Math.max(...rows.map((r) => r.result.length))];
    console.log([`install lab (×${RUNS} each repeated scenario):`, ...rows.map((r) => `  ${r.scenario.padEnd(w[0] as number)}  ${r.result.padEnd(w[1] as number)}  ${r.timings}`)].join('\n'));
  }
});
const ms = (v: number | undefined): string => (v === undefined ? '—' : `${Math.round(v)} ms`);
/** ['a','a','b'] → '2× a, 1× b'. */
const tally = (vs: readonly string[]): string => [...new Set(vs)].map((v) => `${vs.filter((x) => x === v).length}× ${v}`).join(', ');
const spread = (vs: readonly number[]): string => (vs.length === 0 ? '—' : `${Math.round(Math.min(...vs))}–${Math.round(Math.max(...vs))} ms`);

describe('the dotstub package in a booted Debian 12 (install lab)', { ...skipWith(unavailable), timeout: 60_000 + RUNS * 30_000 }, () => {
  let m: Machine;
  let deb: string;
  let original: Buffer;

  const resolvIsOriginal = (): boolean => m.resolvConf()?.equals(original) ?? false;
  const mainPid = (): number => Number(m.run('systemctl show -p MainPID --value dotstub').stdout.trim());
  const waitUntil = async (ok: () => boolean, timeoutMs: number): Promise<number | undefined> => {
    const t0 = performance.now();
    while (!ok()) {
      if (performance.now() - t0 > timeoutMs) return undefined;
      await new Promise((r) => setTimeout(r, 50));
    }
    return performance.now() - t0;
  };

  beforeAll(() => {
    const log = (s: string): void => console.log(`install lab: ${s}`);
    ensureBase(log);
    deb = theDeb(log);
  }, 600_000);

  afterAll(async () => {
    await m?.dispose();
  });

  test('boot: the machine is up with the LAN resolver as its DNS', async () => {
    m = Machine.create(ensureBase(), 'dotstub-lab');
    configureLab(m);
    const { ms: bootMs } = await m.boot();
    original = m.resolvConf() as Buffer;
    expect(m.lookup()).toBe<DnsPath>('lan');
    rows.push({ scenario: 'boot (before install)', result: 'lookups to the LAN', timings: `boot ${ms(bootMs)}` });
  });

  test('install: apt installs the .deb offline; the service is there, not enabled, and the DNS untouched', () => {
    const inside = m.copyIn(deb, `/var/tmp/${path.basename(deb)}`);
    const r = m.exec(['apt-get', 'install', '-y', '-q', inside], { env: { DEBIAN_FRONTEND: 'noninteractive' } });
    expect(r.code, r.stderr).toBe(0);
    expect(m.exec(['systemctl', 'is-enabled', 'dotstub']).stdout.trim()).toBe('disabled');
    expect(m.exec(['systemctl', 'is-active', 'dotstub']).stdout.trim()).toBe('inactive');
    expect(resolvIsOriginal()).toBe(true);
    const version = m.exec(['dotstub', '--version']);
    expect(version.code).toBe(0);
    rows.push({ scenario: 'install (apt install ./dotstub_*.deb)', result: 'ok, disabled, DNS untouched', timings: `apt ${ms(r.ms)}; dotstub --version ${ms(version.ms)}` });
  });

  test("polkit knows the package's action: dotstub's own message, an administrator's password for a user at the machine, the helper as its program", () => {
    const r = m.exec(['pkaction', '--verbose', '--action-id', 'org.dotstub.turn-on']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\s*message:\s+Turn on private DNS for this machine$/m);
    expect(r.stdout).toMatch(/^\s*implicit any:\s+no$/m);
    expect(r.stdout).toMatch(/^\s*implicit inactive:\s+no$/m);
    expect(r.stdout).toMatch(/^\s*implicit active:\s+auth_admin_keep$/m);
    expect(r.stdout).toMatch(/^\s*annotation:\s+org\.freedesktop\.policykit\.exec\.path -> \/usr\/lib\/dotstub\/turn-on$/m);
    expect(m.run('stat -c "%U:%G %a" /usr/lib/dotstub/turn-on').stdout.trim()).toBe('root:root 755');
    rows.push({ scenario: 'pkaction --action-id org.dotstub.turn-on', result: '"Turn on private DNS for this machine", active: auth_admin_keep, any/inactive: no', timings: ms(r.ms) });
  });

  test("enable from the app's side: the app's command through pkexec turns private DNS on for an allowed user; refused for others, and the generic command is not this action", async () => {
    m.run('useradd -m -G dotstub alice && useradd -m -G dotstub bob');
    allowTurnOn(m, 'alice');
    // What the app runs (app/proxy-process/service-connection.ts), decided on this machine's files.
    const argv = turnOnCommand((f) => fs.existsSync(path.join(m.root, f)));
    expect(argv).toEqual(['pkexec', '/usr/lib/dotstub/turn-on']);
    const as = (user: string, cmd: readonly string[]): ReturnType<Machine['exec']> => m.exec(['runuser', '-u', user, '--', ...cmd]);
    // bob has no session at the machine and no rule: allow_any=no refuses him, nothing changes.
    const bob = as('bob', argv);
    expect(bob.code, bob.stdout + bob.stderr).toBe(127);
    expect(bob.stderr).toContain('Not authorized');
    // The generic command is polkit's org.freedesktop.policykit.exec, which alice's rule does not allow.
    const generic = as('alice', ['pkexec', 'systemctl', 'enable', '--now', 'dotstub']);
    expect(generic.code).toBe(127);
    expect(m.exec(['systemctl', 'is-enabled', 'dotstub']).stdout.trim()).toBe('disabled');
    expect(m.lookup()).toBe<DnsPath>('lan');
    const t0 = performance.now();
    const r = as('alice', argv);
    const startMs = performance.now() - t0;
    expect(r.code, r.stderr).toBe(0);
    expect(m.exec(['systemctl', 'is-enabled', 'dotstub']).stdout.trim()).toBe('enabled');
    const firstAnswer = await m.waitFor('private', 10_000);
    expect(firstAnswer, 'private DNS within 10 s of turning on').toBeDefined();
    rows.push({ scenario: 'pkexec /usr/lib/dotstub/turn-on (the app\'s command), a user outside the rule / the generic command', result: 'refused (127), refused (127)', timings: `${ms(bob.ms)}; ${ms(generic.ms)}` });
    rows.push({
      scenario: 'pkexec /usr/lib/dotstub/turn-on, allowed user (enable --now)',
      result: 'enabled, private DNS on',
      timings: `pkexec ${ms(startMs)}; first private answer ${ms(startMs + (firstAnswer ?? 0))} after the command`,
    });
  });

  test(`a lookup issued the moment systemctl start returns is answered, ×${RUNS}`, async () => {
    const got: DnsPath[] = [];
    const late: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      m.run('systemctl stop dotstub');
      expect(resolvIsOriginal()).toBe(true);
      // Many starts in a row: keep systemd's start rate limit (5 in 10 s) out of the measurement.
      m.run('systemctl reset-failed dotstub');
      m.run('systemctl start dotstub');
      got.push(m.lookup());
      const t = await m.waitFor('private', 10_000);
      if (t !== undefined) late.push(t);
    }
    const ok = got.filter((g) => g === 'private').length;
    rows.push({ scenario: 'lookup right after `systemctl start` returns', result: `${ok}/${RUNS} answered (${tally(got)})`, timings: `private after ${spread(late)} more` });
    expect(got).toEqual(Array(RUNS).fill('private'));
  });

  test('stop: within 2 s, no SIGKILL, resolv.conf byte for byte, lookups to the LAN', async () => {
    await m.waitFor('private', 10_000);
    const r = m.exec(['systemctl', 'stop', 'dotstub']);
    const journal = m.exec(['journalctl', '-b', '-u', 'dotstub', '--no-pager', '-o', 'cat']).stdout;
    const sigkill = /SIGKILL/.test(journal);
    const same = resolvIsOriginal();
    const path1 = m.lookup();
    rows.push({ scenario: 'systemctl stop', result: `${same ? 'resolv.conf restored' : 'resolv.conf NOT restored'}, ${sigkill ? 'SIGKILL' : 'no SIGKILL'}, lookups: ${path1}`, timings: `stop ${ms(r.ms)}` });
    expect(r.code).toBe(0);
    expect(r.ms).toBeLessThanOrEqual(2000);
    expect(sigkill).toBe(false);
    expect(same).toBe(true);
    expect(path1).toBe<DnsPath>('lan');
  });

  test('kill -9 of the proxy: the old DNS comes back at once, then Restart= turns private DNS on again', async () => {
    m.run('systemctl start dotstub');
    expect(await m.waitFor('private', 10_000)).toBeDefined();
    m.run(`kill -9 ${mainPid()}`);
    const restored = await waitUntil(resolvIsOriginal, 5000);
    const back = await m.waitFor('private', 15_000);
    rows.push({ scenario: 'kill -9 of the proxy', result: `${restored !== undefined ? 'restored' : 'NOT restored'}, ${back !== undefined ? 'private again' : 'private NOT back'}`, timings: `restored ${ms(restored)}; private again ${ms(back)} later` });
    expect(restored).toBeDefined();
    expect(back).toBeDefined();
  });

  test(`clean reboot ×${RUNS} with the service enabled: private DNS on after each boot`, async () => {
    const got: DnsPath[] = [];
    const times: number[] = [];
    const downs: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await m.waitFor('private', 10_000);
      const { downMs, bootMs } = await m.reboot();
      downs.push(downMs);
      const t = await m.waitFor('private', 10_000);
      got.push(t === undefined ? m.lookup() : 'private');
      if (t !== undefined) times.push(bootMs + t);
    }
    rows.push({ scenario: 'clean reboot, enabled', result: `${got.filter((g) => g === 'private').length}/${RUNS} private`, timings: `shutdown ${spread(downs)}; private ${spread(times)} after boot start` });
    expect(got).toEqual(Array(RUNS).fill('private'));
  });

  test(`power cut ×${RUNS} with the service enabled: every boot comes back taken over`, async () => {
    const got: string[] = [];
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      if ((await m.waitFor('private', 10_000)) === undefined) m.exec(['systemctl', 'restart', 'dotstub']);
      await m.waitFor('private', 10_000);
      await m.powerCut();
      const { ms: bootMs } = await m.boot();
      const t = await m.waitFor('private', 10_000);
      if (t !== undefined) times.push(bootMs + t);
      got.push(t !== undefined ? 'private' : `${m.lookup()}${resolvIsOriginal() ? ' (original resolv.conf)' : ''}`);
    }
    rows.push({ scenario: 'power cut, enabled', result: `${got.filter((g) => g === 'private').length}/${RUNS} private (${tally(got)})`, timings: `private ${spread(times)} after boot start` });
    expect(got).toEqual(Array(RUNS).fill('private'));
  });

  test(`power cut ×${RUNS} installed but not enabled: every boot has the original DNS`, async () => {
    m.run('systemctl disable --now dotstub');
    const got: string[] = [];
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      m.exec(['systemctl', 'start', 'dotstub']);
      await m.waitFor('private', 10_000);
      await m.powerCut();
      const { ms: bootMs } = await m.boot();
      const t = await waitUntil(resolvIsOriginal, 5000);
      if (t !== undefined) times.push(bootMs + t);
      got.push(`${m.lookup()}${t !== undefined ? '' : ' (resolv.conf not restored)'}`);
    }
    rows.push({ scenario: 'power cut, installed not enabled', result: `${got.filter((g) => g === 'lan').length}/${RUNS} original DNS (${tally(got)})`, timings: `restored ${spread(times)} after boot start` });
    expect(got).toEqual(Array(RUNS).fill('lan'));
  });

  test('a 5 s SIGSTOP of the proxy: the old DNS meanwhile, private DNS back within 5 s of SIGCONT', async () => {
    m.exec(['systemctl', 'enable', '--now', 'dotstub']);
    expect(await m.waitFor('private', 10_000)).toBeDefined();
    const pid = mainPid();
    m.run(`kill -STOP ${pid}`);
    const t0 = performance.now();
    const restored = await waitUntil(resolvIsOriginal, 4500);
    const during = m.lookup();
    await new Promise((r) => setTimeout(r, Math.max(0, 5000 - (performance.now() - t0))));
    m.run(`kill -CONT ${pid}`);
    const back = await m.waitFor('private', 5000);
    rows.push({
      scenario: '5 s SIGSTOP of the proxy',
      result: `during: ${during}; after SIGCONT: ${back !== undefined ? 'private' : `${m.lookup()} (private NOT back)`}`,
      timings: `old DNS ${ms(restored)} after SIGSTOP; private ${ms(back)} after SIGCONT`,
    });
    expect(restored, 'the watchdog gives the old DNS back while the proxy is stopped').toBeDefined();
    expect(during).toBe<DnsPath>('lan');
    expect(back, 'private DNS back within 5 s of SIGCONT').toBeDefined();
  });

  test('a user in the dotstub group drives the service over its socket without sudo: disable, enable, pause, resume, switch resolver; a user outside it is refused with what to do', async () => {
    if ((await m.waitFor('private', 5000)) === undefined) m.exec(['systemctl', 'restart', 'dotstub']);
    expect(await m.waitFor('private', 10_000)).toBeDefined();
    // The package made the group and the socket: _dotstub:dotstub 0660 in /run/dotstub (the proxy's own user owns it).
    expect(m.run('getent group dotstub').stdout).toMatch(/^dotstub:x:\d+:/);
    expect(m.run('stat -c "%U:%G %a" /run/dotstub/control.sock').stdout.trim()).toBe('_dotstub:dotstub 660');
    // alice and bob (made at the turn-on step); bob leaves the dotstub group here.
    m.run('gpasswd -d bob dotstub');
    const as = (user: string, args: string): ReturnType<Machine['exec']> => m.exec(['runuser', '-u', user, '--', 'sh', '-c', `dotstub ctl ${args}`]);
    const steps: string[] = [];
    const step = async (user: string, args: string, want: DnsPath): Promise<void> => {
      const r = as(user, args);
      expect(r.code, `${user}: dotstub ctl ${args}: ${r.stderr}`).toBe(0);
      const t = await m.waitFor(want, 5000);
      steps.push(`${args} ${ms(r.ms)}${t !== undefined && t > 0 ? ` (+${ms(t)})` : ''}`);
      expect(t, `${user}: dotstub ctl ${args} → lookups ${want}`).toBeDefined();
    };
    const status = as('alice', 'status');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^private DNS: on — /m);
    await step('alice', 'disable', 'lan');
    expect(resolvIsOriginal()).toBe(true);
    await step('alice', 'enable', 'private');
    await step('alice', 'pause 5m', 'lan');
    expect(as('alice', 'status').stdout).toMatch(/^private DNS: paused until \d\d:\d\d — .*To turn it back on now: dotstub ctl resume$/m);
    await step('alice', 'resume', 'private');
    // A preset on the Internet, which this lab has none of: ctl asks it first and refuses (nothing changes);
    // --anyway switches all the same and lookups fail, so the switch took effect; then back.
    const probed = as('alice', 'use quad9');
    expect(probed.code).toBe(1);
    expect(probed.stderr).toMatch(/Quad9 didn’t answer \(.*\)\. Nothing was changed: lab DoT still answers your lookups\. To switch anyway: dotstub ctl use quad9 --anyway/);
    await step('alice', 'use quad9 --anyway', 'none');
    await step('alice', "use 'lab DoT'", 'private');
    const link = as('alice', 'dashboard');
    expect(link.stdout.trim()).toMatch(/^http:\/\/127\.0\.0\.1:5380\/#token=[A-Za-z0-9_-]{43}$/);
    // The link is the socket's to hand out, never the journal's (adm and systemd-journal read it): no line holds the token.
    const token = link.stdout.trim().split('#token=')[1] ?? '';
    const journal = m.exec(['journalctl', '-u', 'dotstub', '--no-pager', '-o', 'cat']).stdout;
    expect(journal).toContain('dotstub ctl dashboard prints it');
    expect(journal).not.toContain(token);
    const refused = as('bob', 'disable');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('you are not in the dotstub group; an administrator adds you with "sudo adduser bob dotstub", then log out and in again');
    expect(m.lookup()).toBe<DnsPath>('private');
    m.run('systemctl stop dotstub');
    const down = as('alice', 'status');
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('the dotstub service is not running');
    expect(down.stderr).toContain('sudo systemctl enable --now dotstub');
    m.run('systemctl start dotstub');
    expect(await m.waitFor('private', 10_000)).toBeDefined();
    rows.push({ scenario: 'user in the dotstub group, dotstub ctl (no sudo)', result: 'disable, enable, pause, resume, use ×2 all took effect', timings: steps.join('; ') });
    rows.push({ scenario: 'user outside the group / service stopped', result: 'refused: "not in the dotstub group … adduser"; "not running … enable --now"', timings: `${ms(refused.ms)}; ${ms(down.ms)}` });
  });

  // The sandbox's syscall filter kills the proxy on a call outside @system-service: a steady load (UDP and TCP, cache hits
  // and round trips to the resolver) must leave the same process answering everything. DOTSTUB_INSTALL_LAB_LOAD_S: its length.
  test('under load, the sandboxed proxy answers everything and never trips its syscall filter (same process, no SIGSYS)', async () => {
    if ((await m.waitFor('private', 5000)) === undefined) m.exec(['systemctl', 'restart', 'dotstub']);
    expect(await m.waitFor('private', 10_000)).toBeDefined();
    const pid = mainPid();
    // What the process holds, before and after (the soak's other figures: memory that grows, descriptors that leak).
    const held = (): string => {
      const rss = /^VmRSS:\s+(\d+) kB/m.exec(m.exec(['cat', `/proc/${pid}/status`]).stdout)?.[1];
      const fds = m.exec(['sh', '-c', `ls /proc/${pid}/fd | wc -l`]).stdout.trim();
      return `RSS ${rss === undefined ? '?' : (Number(rss) / 1024).toFixed(1)} MiB, ${fds} fds`;
    };
    const before = held();
    const seconds = Number(process.env.DOTSTUB_INSTALL_LAB_LOAD_S ?? 20);
    m.copyIn(path.join(ROOT, 'test-support/install-lab-load.mjs'), '/var/tmp/install-lab-load.mjs');
    const load = m.exec(['/opt/dotstub/node/bin/node', '/var/tmp/install-lab-load.mjs', String(seconds), '500'], { timeoutMs: (seconds + 30) * 1000 });
    const r = JSON.parse(load.stdout.trim().split('\n').pop() ?? '{}') as { sent: number; answered: number; tcpSent: number; tcpAnswered: number };
    const killed = m.exec(['journalctl', '-b', '-u', 'dotstub', '--no-pager', '-o', 'cat']).stdout.split('\n').filter((l) => /SIGSYS|signal=SYS/.test(l));
    rows.push({ scenario: `load on the sandboxed proxy, ${seconds} s at 500 q/s`, result: `UDP ${r.answered}/${r.sent}, TCP ${r.tcpAnswered}/${r.tcpSent} answered; ${mainPid() === pid ? 'same process' : 'RESTARTED'}; SIGSYS: ${killed.length}`, timings: `${ms(load.ms)}; ${before} → ${mainPid() === pid ? held() : 'gone'}` });
    expect(load.code, load.stderr).toBe(0);
    expect(r.sent).toBeGreaterThan(seconds * 400);
    expect(r.answered).toBe(r.sent);
    expect(r.tcpAnswered).toBe(r.tcpSent);
    expect(mainPid()).toBe(pid);
    expect(killed).toEqual([]);
  });

  test('the proxy runs as _dotstub with no capability but port 53, its unit rates 2.0 or better, and a stand-in for a compromised proxy can write, read, load and trace nothing beyond its own', async () => {
    if ((await m.waitFor('private', 5000)) === undefined) m.exec(['systemctl', 'restart', 'dotstub']);
    expect(await m.waitFor('private', 10_000)).toBeDefined();
    expectLeastPrivilege(m, mainPid(), '');
  });

  test('uninstall (apt-get remove, service enabled and running): resolv.conf byte for byte, lookups to the LAN, unit gone', async () => {
    if ((await m.waitFor('private', 5000)) === undefined) m.exec(['systemctl', 'restart', 'dotstub']);
    await m.waitFor('private', 10_000);
    const r = m.exec(['apt-get', 'remove', '-y', '-q', 'dotstub'], { env: { DEBIAN_FRONTEND: 'noninteractive' } });
    const same = resolvIsOriginal();
    const after = m.lookup();
    const unit = m.exec(['systemctl', 'cat', 'dotstub']).code;
    rows.push({ scenario: 'uninstall (apt-get remove)', result: `${same ? 'resolv.conf restored' : 'resolv.conf NOT restored'}, lookups: ${after}`, timings: `apt ${ms(r.ms)}` });
    expect(r.code, r.stderr).toBe(0);
    expect(same).toBe(true);
    expect(after).toBe<DnsPath>('lan');
    expect(unit, 'the unit is gone').not.toBe(0);
  });

  test('purge: /etc/resolv.conf byte-identical to before install, the state dir gone', () => {
    const r = m.exec(['apt-get', 'purge', '-y', '-q', 'dotstub'], { env: { DEBIAN_FRONTEND: 'noninteractive' } });
    const same = resolvIsOriginal();
    const state = fs.existsSync(path.join(m.root, 'var/lib/dotstub'));
    rows.push({ scenario: 'purge', result: `${same ? 'resolv.conf as before install' : 'resolv.conf CHANGED'}${state ? ', /var/lib/dotstub left' : ''}`, timings: `apt ${ms(r.ms)}` });
    expect(r.code, r.stderr).toBe(0);
    expect(same).toBe(true);
    expect(state).toBe(false);
  });

  test('cleanup: the container, its overlay and links are gone', async () => {
    await m.dispose();
    expect(leftovers()).toEqual([]);
  });
});

/**
 * Least privilege, as a reviewer checks it on a booted machine: the proxy
 * (process `pid`, the running service) is `_dotstub` with no capability but
 * port 53; `systemd-analyze security` rates its unit 2.0 or better; a
 * stand-in for a compromised proxy (the installed unit as it is, its
 * ExecStart replaced by a probe) can write, read, load and trace nothing
 * beyond its own directories, and a setuid binary gives it nothing.
 */
function expectLeastPrivilege(m: Machine, pid: number, prefix: string): void {
  // ps is not in the lab's minbase root: the fields ps shows, read where ps reads them.
  const psLine = m.run(`echo "$(stat -c %U /proc/${pid}) ${pid} $(tr '\\0' ' ' < /proc/${pid}/cmdline)"`).stdout.trim();
  const caps = /^CapEff:\s+([0-9a-f]+)$/m.exec(m.run(`cat /proc/${pid}/status`).stdout)?.[1];
  const exposure = (unit: string): string => /Overall exposure level for \S+: (\d+\.\d \S+)/.exec(m.run(`systemd-analyze security ${unit}`).stdout)?.[1] ?? '?';
  const levels = Object.fromEntries(['dotstub.service', 'dotstub-enable.service', 'dotstub-disable.service', 'dotstub-restore.service'].map((u) => [u, exposure(u)]));
  // The stand-in: the installed unit as it is (user, capabilities, sandbox), its ExecStart replaced by the probe, no root hooks.
  const probe = path.join(os.tmpdir(), `dotstub-compromised-probe-${process.pid}`);
  execFileSync('cc', ['-static', '-O1', '-o', probe, path.join(ROOT, 'test-support/compromised-probe.c')]);
  try {
    m.copyIn(probe, '/usr/local/bin/compromised-probe');
  } finally {
    fs.rmSync(probe, { force: true });
  }
  // A setuid-root copy: outside the sandbox it gives euid 0 (the control); inside, NoNewPrivileges must not.
  m.run('chmod 0755 /usr/local/bin/compromised-probe && install -m 4755 /usr/local/bin/compromised-probe /usr/local/bin/compromised-probe-suid');
  const p = '/usr/local/bin/compromised-probe';
  const unit = m.run(
    `sed -e '/^ExecStart/d' -e '/^ExecStopPost/d' -e '/^Restart/d' -e '/^Type=/d' -e '/^\\[Install\\]/,$d' /lib/systemd/system/dotstub.service`,
  ).stdout;
  const standIn = unit.replace(
    /^\[Service\]$/m,
    [
      '[Service]',
      'Type=oneshot',
      // The real proxy's /run/dotstub (its control socket) stays when the stand-in stops.
      'RuntimeDirectoryPreserve=yes',
      `ExecStart=${p} write /etc/passwd /etc/shadow /etc/resolv.conf /var/lib/dotstub/system-dns.journal.json /lib/systemd/system/dotstub.service /opt/dotstub/dotstub-cli`,
      `ExecStart=${p} create /etc /var/lib/dotstub /usr/local/bin /var/lib/dotstub/proxy /run/dotstub`,
      `ExecStart=${p} read /root /home`,
      `ExecStart=${p} module`,
      `ExecStart=${p} ptrace ${pid} 1`,
      `ExecStart=${p}-suid euid`,
    ].join('\n'),
  );
  fs.writeFileSync(path.join(m.root, 'etc/systemd/system/dotstub-stand-in.service'), standIn);
  m.run('systemctl daemon-reload');
  const ran = m.exec(['systemctl', 'start', 'dotstub-stand-in.service']);
  const said = m.exec(['journalctl', '-b', '-u', 'dotstub-stand-in', '--no-pager', '-o', 'cat']).stdout;
  // Outside the sandbox, for the record: the same user tracing the proxy (the kernel refuses that too: the proxy holds a
  // capability its tracer lacks), and the setuid copy run by nobody, which gives root: the control for the euid check.
  const bare = m.run(`setpriv --reuid _dotstub --regid _dotstub --clear-groups ${p} ptrace ${pid}; setpriv --reuid nobody --regid nogroup --clear-groups ${p}-suid euid`).stdout;
  m.run('rm -f /etc/systemd/system/dotstub-stand-in.service /usr/local/bin/compromised-probe /usr/local/bin/compromised-probe-suid; systemctl daemon-reload');
  const lines = said.split('\n').filter((l) => /^(write|create|read|module|ptrace|euid) /.test(l));
  console.log(`install lab ${prefix}: ${psLine}\ninstall lab: CapEff ${caps ?? '?'}; exposure ${JSON.stringify(levels)}\ninstall lab: stand-in for a compromised proxy:\n  ${lines.join('\n  ')}\ninstall lab: without the sandbox: ${bare.trim().replace(/\n/g, '; ')}`);
  rows.push({ scenario: `${prefix}the proxy (ps fields: user pid command)`, result: psLine.slice(0, 120), timings: `CapEff ${caps ?? '?'}` });
  rows.push({ scenario: `${prefix}systemd-analyze security (booted)`, result: Object.entries(levels).map(([u, l]) => `${u} ${l}`).join(', '), timings: '' });
  rows.push({ scenario: `${prefix}stand-in for a compromised proxy`, result: `${lines.filter((l) => l.includes(' denied ')).length} denied, ${lines.filter((l) => l.includes(' ALLOWED')).length} allowed (its own dirs)`, timings: lines.filter((l) => !l.includes('/var/lib/dotstub/proxy') && !l.includes('/run/dotstub')).map((l) => l.replace(/ denied \((.*)\)$/, ': $1')).join('; ') });
  expect(ran.code, ran.stderr + said).toBe(0);
  expect(psLine).toMatch(new RegExp(`^_dotstub ${pid} /opt/dotstub/`));
  // CAP_NET_BIND_SERVICE (bit 10) and nothing else.
  expect(caps).toBe('0000000000000400');
  expect(Number(levels['dotstub.service']?.split(' ')[0])).toBeLessThanOrEqual(2.0);
  for (const f of ['/etc/passwd', '/etc/shadow', '/etc/resolv.conf', '/var/lib/dotstub/system-dns.journal.json', '/lib/systemd/system/dotstub.service', '/opt/dotstub/dotstub-cli']) {
    expect(said).toMatch(new RegExp(`^write ${f} denied `, 'm'));
  }
  for (const d of ['/etc', '/var/lib/dotstub', '/usr/local/bin']) expect(said).toMatch(new RegExp(`^create ${d} denied `, 'm'));
  // What it may write: its own state and runtime dirs (the control: the probe can write where it should).
  expect(said).toMatch(/^create \/var\/lib\/dotstub\/proxy ALLOWED$/m);
  expect(said).toMatch(/^create \/run\/dotstub ALLOWED$/m);
  expect(said).toMatch(/^read \/root denied /m);
  expect(said).toMatch(/^read \/home denied /m);
  expect(said).toMatch(/^module {2}denied /m);
  expect(said).toMatch(new RegExp(`^ptrace ${pid} denied `, 'm'));
  expect(said).toMatch(/^ptrace 1 denied /m);
  expect(said).not.toMatch(/^(write|read|module|ptrace) .* ALLOWED$/m);
  // setuid: euid stays _dotstub's inside; the same copy gives root outside.
  expect(said).toMatch(/^euid [1-9]\d*$/m);
  expect(bare).toMatch(/^euid 0$/m);
}

/**
 * The same package on other machines, the scenarios that differ by Debian
 * release and DNS setup: install, turn on (the package's helper, as pkexec
 * runs it, here as root), status, a lookup, stop, power cuts with the
 * service enabled, uninstall. With systemd-resolved: the drop-in goes
 * through resolved, status reads resolved's own state, stop must not wait
 * on a resolved restart, and uninstall leaves resolved's configuration as
 * it was (the resolv.conf link, both drop-in dirs, the servers it uses).
 */
function otherMachine(spec: BaseSpec, title: string, optIn: string | null = null): void {
  const tag = `${spec.suite}, ${spec.dns}`;
  describe(title, { ...skipWith(unavailable ?? optIn), timeout: 60_000 + RUNS * 30_000 }, () => {
    let m: Machine;
    let deb: string;
      let before: string;

    /** What the machine's DNS configuration is, as one text: resolv.conf (link or bytes), resolved's drop-in dirs and servers. */
    const dnsConfig = (): string =>
      m.run(
        [
          'if [ -L /etc/resolv.conf ]; then echo "resolv.conf -> $(readlink /etc/resolv.conf)"; else echo "resolv.conf:"; cat /etc/resolv.conf; fi',
          'for d in /etc/systemd/resolved.conf.d /run/systemd/resolved.conf.d; do if [ -d $d ]; then echo "== $d"; for f in $d/*; do [ -e "$f" ] && { echo "-- $f"; cat "$f"; }; done; else echo "== $d (none)"; fi; done',
          'if systemctl -q is-active systemd-resolved; then resolvectl dns; resolvectl domain; fi',
          'if [ -d /etc/NetworkManager/conf.d ]; then for f in /etc/NetworkManager/conf.d/*; do [ -e "$f" ] && { echo "-- $f"; cat "$f"; }; done; fi',
        ].join('; '),
      ).stdout;

    beforeAll(() => {
      const log = (s: string): void => console.log(`install lab (${tag}): ${s}`);
      ensureBase(log, spec);
      deb = theDeb(log);
    }, 900_000);

    afterAll(async () => {
      await m?.dispose();
    });

    test(`boot (${tag}), install, turn on with the package's helper: private DNS on and status says so`, async () => {
      m = Machine.create(ensureBase(undefined, spec), `dotstub-lab-${spec.suite}-${{ resolved: 'rd', networkmanager: 'nm', 'resolv.conf': 'rc' }[spec.dns]}`);
      configureLab(m);
      const { ms: bootMs } = await m.boot();
      const systemd = m.run('systemctl --version').stdout.split('\n')[0] as string;
      expect(await m.waitFor('lan', 10_000), 'lookups reach the LAN resolver before install').toBeDefined();
      before = dnsConfig();
      const inside = m.copyIn(deb, `/var/tmp/${path.basename(deb)}`);
      const apt = m.exec(['apt-get', 'install', '-y', '-q', inside], { env: { DEBIAN_FRONTEND: 'noninteractive' } });
      expect(apt.code, apt.stderr).toBe(0);
      expect(dnsConfig()).toBe(before);
      const t0 = performance.now();
      const on = m.exec(['/usr/lib/dotstub/turn-on', 'ignored', '--arguments']);
      const onMs = performance.now() - t0;
      expect(on.code, on.stderr).toBe(0);
      expect(m.exec(['systemctl', 'is-enabled', 'dotstub']).stdout.trim()).toBe('enabled');
      // The first lookup once the command returns (the unit takes over only after the proxy answers).
      const first = m.lookup();
      const firstAnswer = first === 'private' ? 0 : await m.waitFor('private', 10_000);
      expect(firstAnswer, 'private DNS within 10 s of turning on').toBeDefined();
      // The control socket comes up a moment after the unit's start returns (measured, not hidden): the app waits for it.
      const t1 = performance.now();
      while (m.exec(['test', '-S', '/run/dotstub/control.sock']).code !== 0 && performance.now() - t1 < 10_000) await new Promise((r) => setTimeout(r, 50));
      const socketMs = performance.now() - t1;
      const ctl = m.run('dotstub ctl status').stdout;
      expect(ctl).toMatch(/^private DNS: on — /m);
      // The sandboxed proxy and the root hook that wrote the journal agree on the boot (in a container a unit with
      // ProtectKernelTunables= sees the kernel's boot id, not the container's: the units pass systemd's %b).
      expect(ctl).not.toMatch(/has no owner|earlier boot/);
      const sys = m.run('dotstub system-dns status --state-dir /var/lib/dotstub').stdout;
      expect(sys).toMatch(new RegExp(`^backend: ${{ resolved: 'systemd-resolved', networkmanager: 'networkmanager', 'resolv.conf': 'resolv.conf' }[spec.dns]} `, 'm'));
      expect(sys).toMatch(/^private DNS: on /m);
      rows.push({ scenario: `[${tag}] boot, ${systemd}`, result: 'lookups to the LAN', timings: `boot ${ms(bootMs)}` });
      rows.push({ scenario: `[${tag}] install; /usr/lib/dotstub/turn-on as root`, result: `enabled; first lookup: ${first}; status: ${/^private DNS: .*$/m.exec(ctl)?.[0] ?? '?'}`, timings: `apt ${ms(apt.ms)}; turn-on ${ms(onMs)}; private ${ms(onMs + (firstAnswer ?? 0))}, control socket ${ms(onMs + socketMs)} after the command` });
    });

    // The system's Chromium (.ci/run installs it, as for the dashboard's tests); without it the test says so and skips.
    test(`[${tag}] the dashboard's System DNS page, as the installed service serves it (screenshots)`, skipWith(fs.existsSync('/usr/bin/chromium') ? null : 'Chromium is not installed (apt-get install chromium)'), () => {
      const link = m.run('dotstub ctl dashboard').stdout.trim();
      expect(link).toMatch(/^http:\/\/127\.0\.0\.1:5380\/#token=/);
      const out = path.join(ROOT, 'e2e/screenshots', `install-lab-system-dns-${spec.suite}-${spec.dns.replace('.', '-')}`);
      // The browser runs on this host but in the machine's network namespace: its 127.0.0.1 is the machine's.
      const shot = execFileSync('nsenter', ['-t', String(m.leader), '-n', process.execPath, path.join(ROOT, 'test-support/install-lab-screenshot.mjs'), link, out], {
        encoding: 'utf8',
        cwd: ROOT,
        timeout: 120_000,
      });
      // The leak test passes behind resolved too: its probe is made under resolver.arpa, which resolved forwards (under
      // .invalid, which resolved answers itself, it said "can leak" on every resolved machine).
      expect(shot).toMatch(/^light: Private DNS is on for this machine; leak test: No leak found/m);
      rows.push({ scenario: `[${tag}] dashboard, System DNS page`, result: shot.trim().replace(/\n/g, '; '), timings: `${path.relative(ROOT, out)}-{light,dark}.png` });
    });

    // Only behind resolved (not registered elsewhere: it doesn't apply, it isn't skipped).
    if (spec.dns === 'resolved') test(`[${tag}] the drop-in stays put (no re-apply loop) and queries go only to dotstub`, async () => {
      const stamp = (): string => m.run('stat -c "%i %Y" /run/systemd/resolved.conf.d/50-dotstub.conf').stdout.trim();
      const s0 = stamp();
      await new Promise((r) => setTimeout(r, 5000));
      const s1 = stamp();
      const domains = m.run('resolvectl domain').stdout;
      rows.push({ scenario: `[${tag}] drop-in over 5 s`, result: s0 === s1 ? 'unchanged' : `rewritten (${s0} → ${s1})`, timings: `resolvectl domain: ${domains.trim().replace(/\n/g, ' | ')}` });
      expect(s1).toBe(s0);
      expect(domains).toMatch(/^Global: ~\.$/m);
      expect(m.lookup()).toBe<DnsPath>('private');
    });

    test(`[${tag}] the proxy runs as _dotstub with no capability but port 53, its unit rates 2.0 or better, and a stand-in for a compromised proxy can do nothing beyond its own`, async () => {
      expect(await m.waitFor('private', 10_000)).toBeDefined();
      expectLeastPrivilege(m, Number(m.run('systemctl show -p MainPID --value dotstub').stdout.trim()), `[${tag}] `);
    });

    test(`[${tag}] systemctl stop: within 2 s, no SIGKILL, the DNS configuration as before, lookups to the LAN`, async () => {
      expect(await m.waitFor('private', 10_000)).toBeDefined();
      const r = m.exec(['systemctl', 'stop', 'dotstub']);
      const journal = m.exec(['journalctl', '-b', '-u', 'dotstub', '--no-pager', '-o', 'cat']).stdout;
      const sigkill = /SIGKILL/.test(journal);
      const same = dnsConfig() === before;
      const after = await m.waitFor('lan', 5000);
      rows.push({ scenario: `[${tag}] systemctl stop`, result: `${same ? 'configuration as before' : 'configuration CHANGED'}, ${sigkill ? 'SIGKILL' : 'no SIGKILL'}, lookups: ${after !== undefined ? 'lan' : m.lookup()}`, timings: `stop ${ms(r.ms)}` });
      expect(r.code).toBe(0);
      expect(r.ms).toBeLessThanOrEqual(2000);
      expect(sigkill).toBe(false);
      expect(dnsConfig()).toBe(before);
      expect(after).toBeDefined();
    });

    test(`[${tag}] power cut ×${RUNS} with the service enabled: every boot comes back taken over`, async () => {
      m.run('systemctl start dotstub');
      const got: string[] = [];
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        if ((await m.waitFor('private', 10_000)) === undefined) m.exec(['systemctl', 'restart', 'dotstub']);
        await m.waitFor('private', 10_000);
        await m.powerCut();
        const { ms: bootMs } = await m.boot();
        const t = await m.waitFor('private', 10_000);
        if (t !== undefined) times.push(bootMs + t);
        got.push(t !== undefined ? 'private' : m.lookup());
      }
      const status = m.run('dotstub ctl status').stdout;
      rows.push({ scenario: `[${tag}] power cut, enabled`, result: `${got.filter((g) => g === 'private').length}/${RUNS} private (${tally(got)}); then ${/^private DNS: \S+/m.exec(status)?.[0] ?? '?'}`, timings: `private ${spread(times)} after boot start` });
      expect(got).toEqual(Array(RUNS).fill('private'));
      expect(status).toMatch(/^private DNS: on — /m);
      expect(status).not.toMatch(/has no owner|earlier boot/);
    });

    test(`[${tag}] uninstall (service enabled and running): the DNS configuration as before install, lookups to the LAN`, async () => {
      await m.waitFor('private', 10_000);
      const r = m.exec(['apt-get', 'purge', '-y', '-q', 'dotstub'], { env: { DEBIAN_FRONTEND: 'noninteractive' } });
      expect(r.code, r.stderr).toBe(0);
      const after = dnsConfig();
      const lookup = await m.waitFor('lan', 5000);
      rows.push({ scenario: `[${tag}] purge`, result: `${after === before ? 'configuration as before install' : 'configuration CHANGED'}, lookups: ${lookup !== undefined ? 'lan' : m.lookup()}`, timings: `apt ${ms(r.ms)}` });
      expect(after).toBe(before);
      expect(lookup).toBeDefined();
      await m.dispose();
      expect(leftovers()).toEqual([]);
    });
  });
}

otherMachine({ suite: 'bookworm', dns: 'resolved' }, 'the dotstub package in a booted Debian 12 with systemd-resolved (install lab)');
// NetworkManager writing resolv.conf (no resolved): on request, it builds one more root. Registered always, so that a run
// that leaves them out counts them as skipped and says how to run them.
const onRequest = (name: string, what: string): string | null => (process.env[name] === '1' ? null : `set ${name}=1 to run (${what})`);
otherMachine({ suite: 'bookworm', dns: 'networkmanager' }, 'the dotstub package in a booted Debian 12 with NetworkManager (install lab)', onRequest('DOTSTUB_INSTALL_LAB_NM', 'it builds one more root'));
// Debian 13: the full form only; it builds two more roots the first time.
const trixie = onRequest('DOTSTUB_INSTALL_LAB_TRIXIE', 'the full form: it builds two more roots the first time');
otherMachine({ suite: 'trixie', dns: 'resolv.conf' }, 'the dotstub package in a booted Debian 13 (install lab)', trixie);
otherMachine({ suite: 'trixie', dns: 'resolved' }, 'the dotstub package in a booted Debian 13 with systemd-resolved (install lab)', trixie);
