/**
 * The systemd-resolved backend against a real resolved (Debian's binary,
 * run uninstalled in the lab on a private dbus-daemon; see
 * test-support/system-dns-lab.ts). /etc/resolv.conf is the usual symlink to
 * resolved's stub; the lab's veth0 has a "DHCP" server (10.99.0.1) set as
 * its per-link DNS, as NetworkManager or networkd would. dotstub is played
 * by a DNS server of the test's own on 127.0.0.1:5300 (resolved takes a port).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { labMissing, resolvedLabMissing, labForTest, type Lab, type LabDnsServer } from '../../test-support/system-dns-lab.js';
import { skipWith } from '../../test-support/skips.js';
import { LEAK_TEST_ZONE } from './leak-test.js';

const missing = labMissing() ?? resolvedLabMissing();

const STATE = '/run/dotstub-state';
const DROP_IN = '/run/systemd/resolved.conf.d/50-dotstub.conf';
const PORT = '5300';

async function resolvedLab(): Promise<{ lab: Lab; stub: LabDnsServer; dhcp: LabDnsServer }> {
  const l = await labForTest({ resolvConf: { symlink: '../run/systemd/resolve/stub-resolv.conf' }, resolved: true });
  const stub = await l.dnsServer('127.0.0.1', Number(PORT), '10.0.0.53');
  const dhcp = await l.dnsServer('10.99.0.1', 53, '10.0.0.67');
  await linkDhcp(l);
  return { lab: l, stub, dhcp };
}

/** What a network manager does on (re)connect: set the link's DHCP server. */
async function linkDhcp(l: Lab): Promise<void> {
  const r = await l.exec(['resolvectl', 'dns', 'veth0', '10.99.0.1']);
  expect(r.code, r.stderr).toBe(0);
}

async function getent(l: Lab, name: string): Promise<string> {
  return (await l.exec(['getent', 'ahostsv4', name], { timeoutMs: 20_000 })).stdout;
}

const sh = async (l: Lab, script: string): Promise<string> => (await l.exec(['sh', '-c', script])).stdout;

describe('system-dns, systemd-resolved backend (real resolved in the lab)', skipWith(missing), () => {
  test('enable: resolved sends every lookup to dotstub, the link\'s DHCP server gets none, also after a reconnect rewrites the link; restore gives resolved its old servers', async () => {
    const { lab: l, stub, dhcp } = await resolvedLab();
    expect(await getent(l, 'before.lab.test')).toContain('10.0.0.67');
    expect(dhcp.queries()).toContain('before.lab.test');
    const dhcpBefore = dhcp.queries().length;

    const r = await l.dotstub(['system-dns', 'enable', '--port', PORT, '--owner-pid', '1', '--state-dir', STATE, '--check-name', '']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("backend: systemd-resolved (/etc/resolv.conf → ../run/systemd/resolve/stub-resolv.conf");
    expect(await sh(l, `cat ${DROP_IN}`)).toContain(`DNS=127.0.0.1:${PORT}\nDomains=~.`);
    expect(await sh(l, 'cat /run/lab-systemctl.log')).toContain('try-reload-or-restart systemd-resolved.service');
    // The DHCP server is still on the link (so zero below is not for lack of one)…
    await linkDhcp(l);
    expect(await sh(l, 'resolvectl dns')).toMatch(/veth0\): 10\.99\.0\.1/);

    for (const name of ['a.lab.test', 'b.example.org', 'c.lab.test']) expect(await getent(l, name)).toContain('10.0.0.53');
    expect(stub.queries()).toEqual(expect.arrayContaining(['a.lab.test', 'b.example.org', 'c.lab.test']));
    expect(dhcp.queries().length).toBe(dhcpBefore);
    // The leak test's probe zone reaches dotstub through resolved; a name under .invalid never does (resolved answers
    // RFC 6761's .invalid itself), which is why the probe is not made there.
    const probe = `probe-${process.pid}.${LEAK_TEST_ZONE}`;
    await getent(l, probe);
    expect(stub.queries()).toContain(probe);
    await getent(l, `probe-${process.pid}.dotstub-leak-test.invalid`);
    expect(stub.queries().filter((n) => n.endsWith('.invalid'))).toEqual([]);

    // A reconnect: the network manager drops and re-sets the link's servers.
    await l.exec(['resolvectl', 'revert', 'veth0']);
    await linkDhcp(l);
    expect(await getent(l, 'after-reconnect.lab.test')).toContain('10.0.0.53');
    expect(dhcp.queries().length).toBe(dhcpBefore);

    const status = await l.dotstub(['system-dns', 'status', '--port', PORT, '--state-dir', STATE, '--check-name', '']);
    expect(status.stdout).toContain('private DNS: on (resolved sends every domain to 127.0.0.1:5300)');
    // No dotstub service in the lab: one reading of resolved's own state, said as one (never "none seen").
    expect(status.stdout).toMatch(/^leaks \(one reading now, not a watch: no dotstub answered on \/run\/dotstub\/control\.sock\): no path around dotstub in this reading$/m);

    // Another link that also claims every domain is a leak status must name.
    await l.exec(['resolvectl', 'domain', 'veth0', '~.']);
    const leaky = await l.dotstub(['system-dns', 'status', '--port', PORT, '--state-dir', STATE, '--check-name', '']);
    expect(leaky.stdout).toMatch(/^leaks \(one reading now, not a watch[^)]*\): bypass possible: veth0 routes every domain \(~\.\) to its own resolver 10\.99\.0\.1: systemd-resolved sends some lookups there unencrypted instead of to dotstub\./m);
    await l.exec(['resolvectl', 'domain', 'veth0', '']);

    const d = await l.dotstub(['system-dns', 'disable', '--state-dir', STATE, '--check-name', 'restored.lab.test']);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toContain('DNS works: restored.lab.test resolves through the system (10.0.0.67');
    expect((await l.exec(['test', '-e', DROP_IN])).code).toBe(1);
    expect(await sh(l, 'resolvectl dns')).toMatch(/^Global:\s*$/m);
    expect(fs.readlinkSync(path.join(l.etc, 'resolv.conf'))).toBe('../run/systemd/resolve/stub-resolv.conf');
  });

  test('kill -9 of the enabling process, then restore: the drop-in goes, resolved is reloaded and asks the DHCP server again', async () => {
    const { lab: l, dhcp } = await resolvedLab();
    const held = l.spawnDotstub(['system-dns', 'enable', '--port', PORT, '--state-dir', STATE, '--check-name', '']);
    await held.waitFor('private DNS enabled', 30_000);
    await held.signal('KILL');
    await held.exited;
    expect((await l.exec(['test', '-e', DROP_IN])).code).toBe(0); // left behind by the crash

    const r = await l.dotstub(['system-dns', 'restore', '--state-dir', STATE, '--check-name', 'back.lab.test']);
    expect(r.code, r.stderr).toBe(0);
    expect((await l.exec(['test', '-e', DROP_IN])).code).toBe(1);
    expect(r.stdout).toContain('reloaded systemd-resolved');
    await linkDhcp(l);
    expect(await getent(l, 'again.lab.test')).toContain('10.0.0.67');
    expect(dhcp.queries()).toContain('again.lab.test');
    const twice = await l.dotstub(['system-dns', 'restore', '--state-dir', STATE, '--check-name', '']);
    expect([twice.code, twice.stdout]).toEqual([0, "nothing to restore: dotstub has not changed this system's DNS\n"]);
  });

  test('a journal from a previous boot is replayed at start: drop-in removed, resolved reloaded', async () => {
    const { lab: l } = await resolvedLab();
    const r = await l.dotstub(['system-dns', 'enable', '--port', PORT, '--owner-pid', '1', '--state-dir', STATE, '--check-name', '']);
    expect(r.code, r.stderr).toBe(0);
    const file = `${STATE}/system-dns.journal.json`;
    const j = JSON.parse(await sh(l, `cat ${file}`)) as { bootId: string };
    j.bootId = 'previous-boot';
    await l.exec(['sh', '-c', `printf '%s' '${JSON.stringify(j)}' > ${file}`]);
    const calls = (await sh(l, 'cat /run/lab-systemctl.log')).split('\n').filter(Boolean).length;

    const s = await l.dotstub(['system-dns', 'status', '--port', PORT, '--state-dir', STATE, '--check-name', '']);
    expect(s.stdout).toContain('written in an earlier boot');
    expect(s.stdout).toContain('private DNS: off');
    expect((await l.exec(['test', '-e', DROP_IN])).code).toBe(1);
    expect((await sh(l, 'cat /run/lab-systemctl.log')).split('\n').filter(Boolean).length).toBe(calls + 1);
    expect(await sh(l, 'resolvectl dns')).toMatch(/^Global:\s*$/m);
  });
});

describe('the service on systemd-resolved 252 (real proxy on port 53 in the lab)', skipWith(missing), () => {
  test('status reads "on" from resolved itself, the proxy leaves its drop-in alone, and stopping never waits on a resolved job', async () => {
    const { lab: l, dhcp } = await resolvedLab();
    const proxy = l.spawnDotstub(['--listen', '127.0.0.1:53', '--resolver', '127.0.0.1:1#dns.test', '--control', '127.0.0.1:0', '--config-dir', '/run/dotstub-config', '--system-dns', '--system-dns-state-dir', STATE]);
    onTestFinished(() => void l.exec(['rm', '-f', '/run/lab-stop-job']));
    await proxy.waitFor(/^LABPID \d+$/m, 5000);
    const pid = /^LABPID (\d+)$/m.exec(proxy.output())?.[1] as string;
    // As the unit's ExecStartPost does it.
    const on = await l.dotstub(['system-dns', 'enable', '--owner-pid', pid, '--state-dir', STATE, '--check-name', ''], { timeoutMs: 30_000 });
    expect(on.code, on.stderr).toBe(0);
    // 252 prints the server without its port 53: the shape status must read as "on".
    expect(await sh(l, 'resolvectl dns')).toMatch(/^Global: 127\.0\.0\.1\s*$/m);
    const status = await l.dotstub(['system-dns', 'status', '--state-dir', STATE, '--check-name', '']);
    expect(status.stdout, proxy.output()).toContain('private DNS: on (resolved sends every domain to 127.0.0.1:53, and /etc/resolv.conf names dotstub itself)');
    // On port 53 glibc asks dotstub directly (names under a link's search domain don't go around it through resolved's stub), with resolved's search list.
    const rc = fs.readFileSync(path.join(l.etc, 'resolv.conf'), 'utf8');
    expect(rc).toMatch(/^nameserver 127\.0\.0\.1$/m);
    expect(rc.match(/^nameserver/gm)).toHaveLength(1);

    // The proxy holds the takeover (it polls the journal every 2 s): nothing to re-apply, ever.
    const reloads = (): number => fs.readFileSync(path.join(l.dir, 'systemctl.log.copy'), 'utf8').split('\n').filter((x) => x.includes('systemd-resolved')).length;
    await l.exec(['sh', '-c', `cp /run/lab-systemctl.log ${l.dir}/systemctl.log.copy`]);
    const before = reloads();
    await new Promise((r) => setTimeout(r, 5000));
    await l.exec(['sh', '-c', `cp /run/lab-systemctl.log ${l.dir}/systemctl.log.copy`]);
    expect(reloads()).toBe(before);
    expect(proxy.output()).not.toContain('were rewritten');
    // What the proxy tells the app and the dashboard.
    // The log gives the dashboard's address, never its token (issue 43): the token is the config dir's file.
    const origin = /dashboard at (http:\/\/127\.0\.0\.1:\d+)\//.exec(proxy.output())?.[1];
    expect(origin).toBeDefined();
    const token = (await l.exec(['cat', '/run/dotstub-config/token'])).stdout.trim();
    const api = await l.exec(['curl', '-s', '-H', `Authorization: Bearer ${token}`, `${origin ?? ''}/api/system-dns`]);
    expect(JSON.parse(api.stdout)).toMatchObject({ enabled: true, inForce: true, reason: expect.stringContaining('resolved sends every domain to 127.0.0.1:53') });

    // `systemctl stop dotstub`: while its stop job runs, a job on resolved waits for it.
    await l.exec(['touch', '/run/lab-stop-job']);
    const t0 = Date.now();
    await proxy.signal('TERM');
    const exited = await Promise.race([proxy.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
    const stopMs = Date.now() - t0;
    console.log(`resolved backend: proxy stopped ${stopMs} ms after SIGTERM`);
    expect(exited).toBe(true);
    expect(stopMs).toBeLessThan(2000);
    // The stop job ends; ExecStopPost's restore finds nothing left; the queued restart of resolved runs.
    await l.exec(['rm', '-f', '/run/lab-stop-job']);
    const post = await l.dotstub(['system-dns', 'restore', '--state-dir', STATE, '--check-name', '']);
    expect(post.stdout).toContain('nothing to restore');
    expect((await l.exec(['test', '-e', DROP_IN])).code).toBe(1);
    await expect.poll(async () => sh(l, 'resolvectl dns'), { timeout: 10_000 }).toMatch(/^Global:\s*$/m);
    expect(fs.readlinkSync(path.join(l.etc, 'resolv.conf'))).toBe('../run/systemd/resolve/stub-resolv.conf');
    await linkDhcp(l);
    expect(await getent(l, 'after-stop.lab.test')).toContain('10.0.0.67');
    expect(dhcp.queries()).toContain('after-stop.lab.test');
  });
});
