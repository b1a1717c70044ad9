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

const UNIT = fs.readFileSync(path.join(REPO, 'packaging/dotstub.service'), 'utf8');
const RESTORE_UNIT = fs.readFileSync(path.join(REPO, 'packaging/dotstub-restore.service'), 'utf8');
const analyze = fs.existsSync('/usr/bin/systemd-analyze') ? null : 'systemd-analyze is not installed';
const lab = labMissing();

function verify(text: string, restoreText = RESTORE_UNIT): { code: number | null; out: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-unit-'));
  try {
    // The installed paths don't exist here; systemd checks that executables do.
    // Both units together: each names the other in its ordering.
    const file = path.join(dir, 'dotstub.service');
    const restore = path.join(dir, 'dotstub-restore.service');
    fs.writeFileSync(file, text.replaceAll('/opt/dotstub/dotstub-cli', '/bin/true'));
    fs.writeFileSync(restore, restoreText.replaceAll('/opt/dotstub/dotstub-cli', '/bin/true'));
    const r = spawnSync('systemd-analyze', ['verify', file, restore], { encoding: 'utf8' });
    return { code: r.status, out: r.stdout + r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
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
    expect(UNIT).toMatch(/^ExecStartPost=.* system-dns enable --owner-pid \$\{MAINPID\} /m);
    // It waits for the proxy's first answer before taking over (no --wait-ms 0).
    expect(UNIT).not.toMatch(/^ExecStartPost=.*--wait-ms 0/m);
    expect(UNIT).toMatch(/^ExecStopPost=.* system-dns restore --state-dir \/var\/lib\/dotstub /m);
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
    // Every root line is a hook that parses no network data; ExecStart (the proxy) is not one.
    expect(UNIT).toMatch(/^ExecStart=\/opt\/dotstub\/dotstub-cli /m);
    expect(UNIT).toMatch(/^ExecStartPost=\+\/opt\/dotstub\/dotstub-cli system-dns enable /m);
    expect(UNIT).toMatch(/^ExecStopPost=\+/m);
    // The proxy changes DNS through the root units, never itself.
    expect(UNIT).toMatch(/^ExecStart=.* --system-dns-via-units/m);
  });

  test('systemd-analyze security rates the network-facing unit 2.0 or better (resolved, as Debian ships it: 2.2)', skipWith(analyze), () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-unit-'));
    try {
      const file = path.join(dir, 'dotstub.service');
      fs.writeFileSync(file, UNIT.replaceAll('/opt/dotstub/dotstub-cli', '/bin/true'));
      const r = spawnSync('systemd-analyze', ['security', '--offline=true', file], { encoding: 'utf8' });
      const level = /Overall exposure level for dotstub\.service: (\d+\.\d)/.exec(r.stdout + r.stderr)?.[1];
      expect(level, r.stdout + r.stderr).toBeDefined();
      expect(Number(level)).toBeLessThanOrEqual(2.0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
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
