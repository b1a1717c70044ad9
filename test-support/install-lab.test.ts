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
 * the service enabled, which INSTALL-LAB.md saw fail 11 of 15 times, came
 * back taken over in every cut this lab made before the fix too (24 of 24),
 * and is held by the namespace test proxy/system-dns/power-cut-lab.test.ts,
 * which reproduced the race (2 of 12 rounds) before the journal lock.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { configureLab, ensureBase, labUnavailable, leftovers, Machine, type DnsPath } from './install-lab.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const RUNS = Math.max(1, Number(process.env.DOTSTUB_INSTALL_LAB_RUNS ?? 2));
const skipReason = labUnavailable();
if (skipReason) console.log(`install lab skipped: ${skipReason}`);

/** One row of the scenario table printed at the end. */
interface Row {
  readonly scenario: string;
  readonly result: string;
  readonly timings: string;
}
const rows: Row[] = [];
const ms = (v: number | undefined): string => (v === undefined ? '—' : `${Math.round(v)} ms`);
/** ['a','a','b'] → '2× a, 1× b'. */
const tally = (vs: readonly string[]): string => [...new Set(vs)].map((v) => `${vs.filter((x) => x === v).length}× ${v}`).join(', ');
const spread = (vs: readonly number[]): string => (vs.length === 0 ? '—' : `${Math.round(Math.min(...vs))}–${Math.round(Math.max(...vs))} ms`);

describe.skipIf(skipReason !== undefined)('the dotstub package in a booted Debian 12 (install lab)', { timeout: 60_000 + RUNS * 30_000 }, () => {
  let m: Machine;
  let deb: string;
  let debDir: string | undefined;
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
    if (process.env.DOTSTUB_LAB_DEB) deb = path.resolve(process.env.DOTSTUB_LAB_DEB);
    else {
      // The real package, built as the README says (gzip: the lab tests the contents, not the compression).
      debDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-lab-deb-'));
      const t0 = performance.now();
      deb = execFileSync('node', [path.join(ROOT, 'scripts/package-deb.mjs'), '--gzip', '--out', debDir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
      log(`built ${path.basename(deb)} in ${ms(performance.now() - t0)}`);
    }
  }, 600_000);

  afterAll(async () => {
    await m?.dispose();
    if (debDir) fs.rmSync(debDir, { recursive: true, force: true });
    if (rows.length) {
      const w = [Math.max(...rows.map((r) => r.scenario.length)), Math.max(...rows.map((r) => r.result.length))];
      console.log(
        [`install lab (×${RUNS} each repeated scenario):`, ...rows.map((r) => `  ${r.scenario.padEnd(w[0] as number)}  ${r.result.padEnd(w[1] as number)}  ${r.timings}`)].join('\n'),
      );
    }
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

  test('enable: systemctl enable --now dotstub turns private DNS on', async () => {
    const t0 = performance.now();
    const r = m.exec(['systemctl', 'enable', '--now', 'dotstub']);
    const startMs = performance.now() - t0;
    expect(r.code, r.stderr).toBe(0);
    const firstAnswer = await m.waitFor('private', 10_000);
    expect(firstAnswer, 'private DNS within 10 s of enable').toBeDefined();
    rows.push({
      scenario: 'enable --now',
      result: 'private DNS on',
      timings: `systemctl ${ms(startMs)}; first private answer ${ms(startMs + (firstAnswer ?? 0))} after the command`,
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
    // The package made the group and the socket: root:dotstub 0660 in /run/dotstub.
    expect(m.run('getent group dotstub').stdout).toMatch(/^dotstub:x:\d+:/);
    expect(m.run('stat -c "%U:%G %a" /run/dotstub/control.sock').stdout.trim()).toBe('root:dotstub 660');
    m.run('useradd -m -G dotstub alice && useradd -m bob');
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
    expect(as('alice', 'status').stdout).toMatch(/^paused until \d\d:\d\d/m);
    await step('alice', 'resume', 'private');
    // A preset on the Internet, which this lab has none of: lookups fail, so the switch took effect; then back.
    await step('alice', 'use quad9', 'none');
    await step('alice', "use 'lab DoT'", 'private');
    const link = as('alice', 'dashboard');
    expect(link.stdout.trim()).toMatch(/^http:\/\/127\.0\.0\.1:5380\/#token=[A-Za-z0-9_-]{43}$/);
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
