/**
 * The liveness watchdog in the lab (namespaces, a copy of /etc; see
 * test-support/system-dns-lab.ts): a real dotstub on 127.0.0.1:53, the
 * takeover tied to it the way the service does it (`enable --owner-pid
 * MAINPID --watchdog`), then dotstub is frozen with SIGSTOP: within about
 * 4 s the watchdog gives the old resolv.conf back byte for byte and a real
 * glibc lookup works again through the original ("DHCP") resolver. After
 * SIGCONT, once dotstub answers steadily, private DNS comes back by itself
 * within 5 s and status (CLI and API) says what happened; a "disable" while
 * it waits is final.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { labMissing, labForTest } from '../../test-support/system-dns-lab.js';
import { skipWith } from '../../test-support/skips.js';

const missing = labMissing();

const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\nsearch lab.test\noptions timeout:1 attempts:1\n';
const STATE = '/run/dotstub-state';
const NAME = 'www.lab.test';

describe('liveness watchdog (lab)', skipWith(missing), () => {
  test('SIGSTOP of dotstub: the old DNS is back within ~4 s and lookups work through the original resolver; after SIGCONT private DNS is back by itself within 5 s', async () => {
    const l = await labForTest({ resolvConf: { text: ORIGINAL } });
    const dhcp = await l.dnsServer('10.99.0.1', 53, '10.0.0.67');
    // A real dotstub; its resolver is unreachable, but it answers (SERVFAIL, and resolver.arpa itself): alive.
    // As the service runs it: with --system-dns, so its API says what the watchdog did.
    const proxy = l.spawnDotstub(['--listen', '127.0.0.1:53', '--resolver', '127.0.0.1:1#dns.test', '--control', '127.0.0.1:0', '--config-dir', '/run/dotstub-config', '--system-dns', '--system-dns-state-dir', STATE]);
    await proxy.waitFor('dashboard at', 20_000);
    const pid = /^LABPID (\d+)$/m.exec(proxy.output())?.[1];
    expect(pid).toBeDefined();

    const held = l.spawn([l.cli, 'system-dns', 'enable', '--owner-pid', pid as string, '--watchdog', '--state-dir', STATE, '--check-name', NAME], { env: { DOTSTUB_CLI: l.cli } });
    await held.waitFor('watching dotstub on 127.0.0.1:53');
    const resolvConf = (): string => fs.readFileSync(path.join(l.etc, 'resolv.conf'), 'utf8');
    expect(resolvConf()).toMatch(/^nameserver 127\.0\.0\.1$/m);
    const askedBefore = dhcp.queries().length;
    // Alive and answering: the watchdog leaves the takeover alone (no false alarm over 4 s).
    await new Promise((r) => setTimeout(r, 4000));
    expect(resolvConf()).toMatch(/^nameserver 127\.0\.0\.1$/m);
    expect(held.output()).not.toContain('restored the old DNS');

    await proxy.signal('STOP');
    const stoppedAt = Date.now();
    await held.waitFor(/restored the old DNS: dotstub stopped answering on 127\.0\.0\.1:53 for more than 3 s/, 10_000);
    const tookMs = Date.now() - stoppedAt;
    console.log(`liveness: old DNS back ${tookMs} ms after SIGSTOP`);
    expect(tookMs).toBeLessThan(5000);
    expect(resolvConf()).toBe(ORIGINAL);
    // The watchdog's own check, and a real glibc lookup, go to the original resolver again.
    await held.waitFor(`DNS works: ${NAME} resolves through the system (10.0.0.67`, 10_000);
    const r = await l.exec(['getent', 'ahostsv4', NAME], { timeoutMs: 20_000 });
    expect(r.stdout).toContain('10.0.0.67');
    expect(dhcp.queries().length).toBeGreaterThan(askedBefore);
    // Nothing is left to restore.
    expect((await l.exec(['test', '-e', `${STATE}/system-dns.journal.json`])).code).toBe(1);
    const off = await l.dotstub(['system-dns', 'status', '--state-dir', STATE, '--check-name', '']);
    expect(off.stdout).toMatch(/watchdog: dotstub stopped answering at \d\d:\d\d \(.*\): the old DNS was given back; private DNS comes back by itself once dotstub answers steadily again/);

    // dotstub answers again: private DNS comes back by itself, and status says what happened.
    await proxy.signal('CONT');
    const contAt = Date.now();
    await held.waitFor(/private DNS is back: dotstub stopped answering at \d\d:\d\d; private DNS resumed at \d\d:\d\d/, 10_000);
    const backMs = Date.now() - contAt;
    console.log(`liveness: private DNS back ${backMs} ms after SIGCONT`);
    expect(backMs).toBeLessThan(5000);
    expect(resolvConf()).toMatch(/^nameserver 127\.0\.0\.1$/m);
    const on = await l.dotstub(['system-dns', 'status', '--state-dir', STATE, '--check-name', '']);
    expect(on.stdout).toContain('private DNS: on');
    expect(on.stdout).toMatch(/held by: process \d+\n/);
    expect(on.stdout).toMatch(/watchdog: dotstub stopped answering at \d\d:\d\d; private DNS resumed at \d\d:\d\d/);
    // The log gives the dashboard's address, never its token (issue 43): the token is the config dir's file.
    const origin = /dashboard at (http:\/\/127\.0\.0\.1:\d+)\//.exec(proxy.output())?.[1];
    expect(origin).toBeDefined();
    const token = (await l.exec(['cat', '/run/dotstub-config/token'])).stdout.trim();
    await expect
      .poll(async () => {
        const api = await l.exec(['curl', '-s', '-H', `Authorization: Bearer ${token}`, `${origin ?? ''}/api/system-dns`]);
        return (JSON.parse(api.stdout) as { inForce: boolean; reason: string }).reason;
      }, { timeout: 10_000 })
      .toMatch(/^this machine's DNS goes to dotstub .*; dotstub stopped answering at \d\d:\d\d; private DNS resumed at \d\d:\d\d$/);

    // Frozen again, it is restored again; and the user's "off" while it waits is final.
    await proxy.signal('STOP');
    await held.waitFor(/restored the old DNS: dotstub stopped answering[^]*restored the old DNS: dotstub stopped answering/, 10_000);
    expect(resolvConf()).toBe(ORIGINAL);
    const disable = await l.dotstub(['system-dns', 'disable', '--state-dir', STATE, '--check-name', '']);
    expect(disable.code).toBe(0);
    await proxy.signal('CONT');
    await held.waitFor('private DNS was turned off or on elsewhere: not taking over again', 10_000);
    expect(resolvConf()).toBe(ORIGINAL);
    await proxy.signal('TERM');
  });
});

describe('the watchdog keeps the takeover for an owner without root (lab)', skipWith(missing), () => {
  // The service's proxy runs as its own user and can't put its settings back itself: with --rewrite-watch the root
  // watchdog does, as the proxy did when it ran as root.
  test('another program rewrites resolv.conf while the takeover holds: the watchdog puts dotstub back; after disable it stops', async () => {
    const l = await labForTest({ resolvConf: { text: ORIGINAL } });
    await l.dnsServer('10.99.0.1', 53, '10.0.0.67');
    // The owner: something alive that answers on 127.0.0.1:53 (the watchdog's probe).
    await l.dnsServer('127.0.0.1', 53, '10.0.0.53');
    const held = l.spawn([l.cli, 'system-dns', 'enable', '--owner-pid', '1', '--watchdog', '--rewrite-watch', '--state-dir', STATE, '--check-name', ''], { env: { DOTSTUB_CLI: l.cli } });
    await held.waitFor('watching dotstub on 127.0.0.1:53');
    const resolvConf = (): string => fs.readFileSync(path.join(l.etc, 'resolv.conf'), 'utf8');
    expect(resolvConf()).toMatch(/^nameserver 127\.0\.0\.1$/m);
    // A DHCP client renewing its lease writes its own file.
    await l.exec(['sh', '-c', `printf '# Generated by dhclient\\nnameserver 10.99.0.1\\n' > /etc/resolv.conf`]);
    await held.waitFor(/DNS settings were rewritten by "Generated by dhclient"; put dotstub back \(1\)/, 10_000);
    expect(resolvConf()).toMatch(/^nameserver 127\.0\.0\.1$/m);
    expect(resolvConf()).not.toMatch(/10\.99\.0\.1/);
    // Told where the service's proxy (not root) reads it: status, and through it the dashboard.
    const st = await l.dotstub(['system-dns', 'status', '--state-dir', STATE, '--check-name', '']);
    expect(st.stdout).toMatch(/^rewrites: another program rewrote the DNS settings; dotstub was put back 1 time\(s\), last by "Generated by dhclient"$/m);
    const off = await l.dotstub(['system-dns', 'disable', '--state-dir', STATE, '--check-name', '']);
    expect(off.code, off.stderr).toBe(0);
    await held.waitFor('private DNS was disabled: nothing to watch', 10_000);
    expect(resolvConf()).toBe(ORIGINAL);
  });
});
