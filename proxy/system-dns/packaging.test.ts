/**
 * The service unit and the deb's removal hook: the unit passes systemd's own
 * checker (with a deliberately broken copy as the control that the checker
 * catches mistakes), and the prerm script gives back the old DNS in the lab.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { labMissing, REPO, startLab, type Lab } from '../../test-support/system-dns-lab.js';
import { skipWith } from '../../test-support/skips.js';

const readUnit = (name: string): string => fs.readFileSync(path.join(REPO, 'packaging', name), 'utf8');
const UNIT = readUnit('dotstub.service');
const RESTORE_UNIT = readUnit('dotstub-restore.service');
const ENABLE_UNIT = readUnit('dotstub-enable.service');
/** Every unit the package installs, by name. */
const UNITS: Readonly<Record<string, string>> = Object.fromEntries(
  ['dotstub.service', 'dotstub-enable.service', 'dotstub-disable.service', 'dotstub-restore.service'].map((n) => [n, readUnit(n)]),
);
const analyze = fs.existsSync('/usr/bin/systemd-analyze') ? null : 'systemd-analyze is not installed';
const lab = labMissing();

/** The unit files as installed, in a temp dir (the installed paths don't exist here; systemd checks that executables do). */
function withUnits<T>(units: Readonly<Record<string, string>>, use: (dir: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-unit-'));
  try {
    for (const [name, text] of Object.entries(units)) fs.writeFileSync(path.join(dir, name), text.replaceAll('/opt/dotstub/dotstub-cli', '/bin/true'));
    return use(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function verify(text: string): { code: number | null; out: string } {
  // All units together: they name each other in their ordering and conflicts.
  return withUnits({ ...UNITS, 'dotstub.service': text }, (dir) => {
    const r = spawnSync('systemd-analyze', ['verify', ...Object.keys(UNITS).map((n) => path.join(dir, n))], { encoding: 'utf8' });
    return { code: r.status, out: r.stdout + r.stderr };
  });
}

/** `systemd-analyze security --offline=true` of one unit: its overall exposure (0 locked down … 10 unsafe). */
function exposure(name: string, text: string): number {
  return withUnits({ [name]: text }, (dir) => {
    const r = spawnSync('systemd-analyze', ['security', '--offline=true', path.join(dir, name)], { encoding: 'utf8' });
    const level = /Overall exposure level for \S+: (\d+\.\d)/.exec(r.stdout + r.stderr)?.[1];
    if (level === undefined) throw new Error(`no exposure for ${name}: ${r.stdout}${r.stderr}`);
    return Number(level);
  });
}

/** The [Service] section's command lines: key, systemd's prefixes (`+` runs outside the sandbox, as root when the unit has a User=), command. */
function execLines(text: string): { key: string; prefixes: string; command: string }[] {
  return [...text.matchAll(/^(Exec\w+)=([-+!@:|]*)(.*)$/gm)].map((m) => ({ key: m[1] as string, prefixes: m[2] as string, command: m[3] as string }));
}
const runsAsRoot = (text: string): boolean => !/^User=(?!root$)\S/m.test(text);
/** The sandbox every root unit has (the rest is rated by systemd-analyze below). */
const ROOT_SANDBOX = [/^NoNewPrivileges=yes$/m, /^ProtectSystem=(true|full|strict)$/m, /^ProtectHome=yes$/m, /^PrivateDevices=yes$/m, /^ProtectKernelModules=yes$/m, /^ProtectKernelTunables=yes$/m, /^RestrictNamespaces=yes$/m, /^SystemCallFilter=@system-service$/m];
/** What a "+" line may run: systemctl asking for one of the sandboxed root units, which returns once its job is done. */
const PRIVILEGED_ALLOWED = /^\/bin\/systemctl (start|stop|restart) dotstub-(enable|disable)\.service$/;
/** The most a root unit may be exposed (issue 43). */
const ROOT_MAX_EXPOSURE = 4.5;

/**
 * Every process that runs as root, and where: a "+" line (root, outside any
 * sandbox) may only run systemctl for a root unit (short-lived, reads
 * nothing); a unit that runs as root has the sandbox. What breaks that, in words.
 */
function unsandboxedRoot(units: Readonly<Record<string, string>>): string[] {
  const found: string[] = [];
  for (const [name, text] of Object.entries(units)) {
    for (const l of execLines(text)) {
      if (l.prefixes.includes('+') && !PRIVILEGED_ALLOWED.test(l.command)) found.push(`${name}: ${l.key}=${l.prefixes}${l.command} runs as root outside any sandbox`);
    }
    if (runsAsRoot(text)) for (const want of ROOT_SANDBOX) if (!want.test(text)) found.push(`${name}: runs as root without ${want.source.replace(/^\^|\$$/g, '')}`);
  }
  return found;
}

describe('packaging', () => {
  test('the unit passes systemd-analyze verify; a broken copy does not', skipWith(analyze), () => {
    expect(verify(UNIT)).toEqual({ code: 0, out: '' });
    const broken = verify(UNIT.replace('ExecStopPost=', 'ExecStopPots='));
    // systemd-analyze exits 0 on unknown keys; what it prints is the verdict (hence out: '' above).
    expect(broken.out).toContain("Unknown key 'ExecStopPots' in section [Service]");
  });

  test('the unit binds 53 with a capability, ties the takeover to the proxy, and restores on every stop', () => {
    expect(UNIT).toMatch(/^AmbientCapabilities=CAP_NET_BIND_SERVICE$/m);
    // The takeover runs in dotstub-enable.service, and the start waits for it (a blocking restart: no --no-block),
    // so `systemctl start dotstub` returns once it is done; every stop stops that unit, whose stop gives the DNS back.
    expect(execLines(UNIT).filter((l) => l.key === 'ExecStartPost')).toEqual([{ key: 'ExecStartPost', prefixes: '+', command: '/bin/systemctl restart dotstub-enable.service' }]);
    expect(execLines(UNIT).filter((l) => l.key === 'ExecStopPost')).toEqual([{ key: 'ExecStopPost', prefixes: '+', command: '/bin/systemctl stop dotstub-enable.service' }]);
    expect(ENABLE_UNIT).toMatch(/^ExecStart=.* system-dns enable --owner-pid "\$\$\(\/bin\/systemctl show -P MainPID dotstub\.service\)" --watchdog --rewrite-watch /m);
    // It waits for the proxy's first answer before taking over (no --wait-ms 0).
    expect(ENABLE_UNIT).not.toMatch(/--wait-ms 0/);
    expect(ENABLE_UNIT).toMatch(/^ExecStopPost=.* system-dns restore --state-dir \/var\/lib\/dotstub /m);
    // No ordering towards dotstub.service: its hooks wait on this unit's jobs.
    expect(ENABLE_UNIT).not.toMatch(/^(After|Before|Requires|BindsTo|PartOf)=.*\bdotstub\.service/m);
    // The proxy's own state; /var/lib/dotstub (the journal root acts on) stays root's.
    expect(UNIT).toMatch(/^StateDirectory=dotstub\/proxy$/m);
  });

  test('a proxy that dies at every start does not spin: systemd stops restarting it after 4 starts in 2 minutes (in [Unit], where systemd 252 reads it)', () => {
    const unitSection = UNIT.slice(UNIT.indexOf('[Unit]'), UNIT.indexOf('[Service]'));
    expect(unitSection).toMatch(/^StartLimitIntervalSec=120$/m);
    expect(unitSection).toMatch(/^StartLimitBurst=4$/m);
    expect(UNIT).toMatch(/^Restart=on-failure$/m);
  });

  test('the network-facing unit runs as its own user with no capability beyond port 53; only the start/stop hooks run as root (+)', () => {
    expect(UNIT).toMatch(/^User=_dotstub$/m);
    expect(UNIT).toMatch(/^Group=_dotstub$/m);
    // The control socket's group (the desktop users allowed to drive it): the proxy chowns the socket to it.
    expect(UNIT).toMatch(/^SupplementaryGroups=dotstub$/m);
    expect(UNIT).toMatch(/^CapabilityBoundingSet=CAP_NET_BIND_SERVICE$/m);
    expect(UNIT).toMatch(/^NoNewPrivileges=yes$/m);
    expect(UNIT).toMatch(/^ProtectSystem=strict$/m);
    // Every root line is a hook that only asks systemd for a root unit; ExecStart (the proxy) is not one.
    expect(UNIT).toMatch(/^ExecStart=\/opt\/dotstub\/dotstub-cli /m);
    expect(UNIT).toMatch(/^ExecStartPost=\+\/bin\/systemctl /m);
    expect(UNIT).toMatch(/^ExecStopPost=\+\/bin\/systemctl /m);
    // The proxy changes DNS through the root units, never itself.
    expect(UNIT).toMatch(/^ExecStart=.* --system-dns-via-units/m);
  });

  test('systemd-analyze security rates the network-facing unit 2.0 or better (resolved, as Debian ships it: 2.2)', skipWith(analyze), () => {
    expect(exposure('dotstub.service', UNIT)).toBeLessThanOrEqual(2.0);
  });

  test('no root process runs outside a sandbox: the "+" hooks only ask systemctl for a root unit, and every root unit has the sandbox', () => {
    expect(unsandboxedRoot(UNITS)).toEqual([]);
    // The watchdog (long-lived, root) is started only by a sandboxed root unit, never on a "+" line.
    const watchdogs = Object.entries(UNITS).flatMap(([name, text]) => execLines(text).filter((l) => /--watchdog\b|system-dns watchdog\b/.test(l.command)).map((l) => ({ name, ...l })));
    expect(watchdogs.map((w) => `${w.name} ${w.key}=${w.prefixes}`)).toEqual(['dotstub-enable.service ExecStart=']);
    // The controls: the service's start hook as it was (the takeover and its watchdog as root, outside any sandbox)
    // and a root unit without its sandbox are both caught.
    const before = UNIT.replace(/^ExecStartPost=.*$/m, 'ExecStartPost=+/opt/dotstub/dotstub-cli system-dns enable --owner-pid ${MAINPID} --watchdog --rewrite-watch --state-dir /var/lib/dotstub --check-name ""');
    expect(unsandboxedRoot({ ...UNITS, 'dotstub.service': before })).toEqual([expect.stringMatching(/^dotstub\.service: ExecStartPost=\+\/opt\/dotstub\/dotstub-cli system-dns enable .*--watchdog.* runs as root outside any sandbox$/)]);
    expect(unsandboxedRoot({ ...UNITS, 'dotstub.service': UNIT.replace(/^ExecStopPost=.*$/m, "ExecStopPost=+/bin/sh -c 'systemctl stop dotstub-enable.service; sleep infinity'") })).toHaveLength(1);
    const bare = ENABLE_UNIT.replace(/^(NoNewPrivileges|Protect\w+|Private\w+|Restrict\w+|LockPersonality|SystemCall\w+)=.*\n/gm, '');
    expect(unsandboxedRoot({ ...UNITS, 'dotstub-enable.service': bare })).toHaveLength(ROOT_SANDBOX.length);
  });

  test(`systemd-analyze security rates every root unit, the watchdog's among them, ${ROOT_MAX_EXPOSURE} or better, as docs/rights.md's table says`, skipWith(analyze), () => {
    const rights = fs.readFileSync(path.join(REPO, 'docs/rights.md'), 'utf8');
    const measured: Record<string, number> = {};
    for (const [name, text] of Object.entries(UNITS)) {
      measured[name] = exposure(name, text);
      if (runsAsRoot(text)) expect(measured[name], name).toBeLessThanOrEqual(ROOT_MAX_EXPOSURE);
      // The table's row for the unit names the same rating (measured with systemd 252, as Debian 12 ships it).
      const rated = rights
        .split('\n')
        .map((l) => l.split('|').map((c) => c.trim()))
        .filter((c) => c[1]?.includes(`\`${name}\``) && !c[1].includes('before') && /^\**\d+\.\d /.test(c[2] ?? ''))
        .map((c) => Number(/\d+\.\d/.exec(c[2] as string)?.[0]));
      expect(rated, `docs/rights.md's exposure table has one row for ${name}`).toHaveLength(1);
      if (/^systemd 252\b/.test(spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' }).stdout)) expect(rated[0], name).toBe(measured[name]);
    }
    expect(Object.keys(measured).filter((n) => runsAsRoot(UNITS[n] as string))).toEqual(['dotstub-enable.service', 'dotstub-disable.service', 'dotstub-restore.service']);
    // The control: the watchdog's unit without its sandbox is rated above the bar.
    const bare = ENABLE_UNIT.replace(/^(NoNewPrivileges|Protect\w+|Private\w+|Restrict\w+|LockPersonality|SystemCall\w+)=.*\n/gm, '');
    expect(exposure('dotstub-enable.service', bare)).toBeGreaterThan(ROOT_MAX_EXPOSURE);
  });

  test("the service's user may start exactly the two root units that take over and give back, nothing else", () => {
    const rules = fs.readFileSync(path.join(REPO, 'packaging/50-dotstub.rules'), 'utf8');
    expect(rules).toContain('subject.user == "_dotstub"');
    expect(rules).toContain('action.id == "org.freedesktop.systemd1.manage-units"');
    expect(rules).toMatch(/unit == "dotstub-enable\.service" && verb == "restart"/);
    expect(rules).toMatch(/unit == "dotstub-disable\.service" && verb == "start"/);
    for (const name of ['dotstub-enable.service', 'dotstub-disable.service']) {
      const unit = fs.readFileSync(path.join(REPO, 'packaging', name), 'utf8');
      // Fixed command lines: the request carries no data from the proxy at all.
      expect(unit).toMatch(/^Type=oneshot$/m);
      expect(unit).toMatch(/^Conflicts=dotstub-(enable|disable)\.service$/m);
      expect(unit).not.toMatch(/^User=/m);
    }
  });

  test('nothing orders dotstub directly after resolved (a restart of resolved queued at our stop would wait for it), and it starts after the boot restore', () => {
    const after = UNIT.split('\n').filter((l) => /^After=/.test(l)).join(' ');
    expect(after).not.toContain('systemd-resolved.service');
    expect(after).toContain('dotstub-restore.service');
  });

  test('the boot-time restore runs early, before name lookups, the network and the services a takeover changes, whether or not dotstub.service is enabled', () => {
    expect(RESTORE_UNIT).toMatch(/^Type=oneshot$/m);
    expect(RESTORE_UNIT).toMatch(/^ExecStart=\/opt\/dotstub\/dotstub-cli system-dns restore --only-stale --state-dir \/var\/lib\/dotstub /m);
    expect(RESTORE_UNIT).toMatch(/^DefaultDependencies=no$/m);
    const before = RESTORE_UNIT.split('\n').filter((l) => /^Before=/.test(l)).join(' ');
    for (const u of ['nss-lookup.target', 'network-pre.target', 'systemd-resolved.service', 'NetworkManager.service', 'dotstub.service']) expect(before).toContain(u);
    expect(RESTORE_UNIT).toMatch(/^WantedBy=sysinit\.target$/m);
    // Not tied to dotstub.service: neither needs the other to be enabled.
    expect(RESTORE_UNIT).not.toMatch(/^(Requires|BindsTo|PartOf)=.*dotstub\.service/m);
    const install = fs.readFileSync(path.join(REPO, 'packaging/deb/after-install.sh'), 'utf8');
    expect(install).toMatch(/^systemctl enable dotstub-restore\.service/m);
    expect(install).not.toMatch(/^systemctl enable dotstub\.service/m);
  });

  test('enabling the boot-time restore (as the install script does) hooks it into sysinit.target', skipWith(fs.existsSync('/usr/bin/systemctl') ? null : 'systemctl is not installed'), () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-root-'));
    try {
      fs.mkdirSync(path.join(root, 'lib/systemd/system'), { recursive: true });
      fs.mkdirSync(path.join(root, 'etc/systemd/system'), { recursive: true });
      fs.writeFileSync(path.join(root, 'lib/systemd/system/dotstub-restore.service'), RESTORE_UNIT);
      fs.writeFileSync(path.join(root, 'lib/systemd/system/dotstub.service'), UNIT);
      const r = spawnSync('systemctl', [`--root=${root}`, 'enable', 'dotstub-restore.service'], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(fs.readlinkSync(path.join(root, 'etc/systemd/system/sysinit.target.wants/dotstub-restore.service'))).toBe('/lib/systemd/system/dotstub-restore.service');
      expect(fs.existsSync(path.join(root, 'etc/systemd/system/multi-user.target.wants/dotstub.service'))).toBe(false);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  for (const script of ['packaging/deb/before-remove.sh', 'packaging/deb/after-remove.sh', 'packaging/deb/after-install.sh', 'packaging/dotstub-turn-on']) {
    test(`${script} is valid sh`, () => {
      const r = spawnSync('sh', ['-n', path.join(REPO, script)], { encoding: 'utf8' });
      expect([r.status, r.stderr]).toEqual([0, '']);
    });
  }
});

let running: Lab | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('deb removal hook (lab)', skipWith(lab), () => {
  test('removing the package while private DNS is on gives back resolv.conf byte for byte, and removal never fails', async () => {
    const original = 'nameserver 10.99.0.1\nsearch lab.test\n';
    running = await startLab({ resolvConf: { text: original } });
    await running.dnsServer('10.99.0.1', 53, '10.0.0.67');
    // enable --owner-pid takes over only once something answers where the system will point.
    await running.dnsServer('127.0.0.1', 53, '10.0.0.53');
    const on = await running.dotstub(['system-dns', 'enable', '--owner-pid', '1', '--state-dir', '/run/dotstub', '--check-name', '']);
    expect(on.code, on.stderr).toBe(0);
    expect(fs.readFileSync(path.join(running.etc, 'resolv.conf'), 'utf8')).not.toBe(original);
    const script = path.join(REPO, 'packaging/deb/before-remove.sh');
    const r = await running.exec(['sh', script, 'remove'], { env: { DOTSTUB_CLI: running.cli, DOTSTUB_STATE_DIR: '/run/dotstub' } });
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(running.etc, 'resolv.conf'), 'utf8')).toBe(original);
    expect((await running.exec(['test', '-e', '/run/dotstub/system-dns.journal.json'])).code).toBe(1);
    // With nothing to restore (or no dotstub at all), removal still succeeds.
    expect((await running.exec(['sh', script, 'remove'], { env: { DOTSTUB_CLI: running.cli, DOTSTUB_STATE_DIR: '/run/dotstub' } })).code).toBe(0);
    expect((await running.exec(['sh', script, 'remove'], { env: { DOTSTUB_CLI: '/nonexistent/dotstub', DOTSTUB_STATE_DIR: '/run/dotstub' } })).code).toBe(0);
  });
});
