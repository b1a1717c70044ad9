/**
 * The service's start and the boot-time restore, as the units run them, in
 * the lab (test-support/system-dns-lab.ts):
 * - ExecStartPost's `enable --owner-pid MAINPID` takes over only once the
 *   proxy answers, so a lookup issued the moment it returns (the moment
 *   `systemctl start` returns) is answered by dotstub — even when the proxy
 *   is slow to start listening;
 * - the boot one-shot (`restore --only-stale`, dotstub-restore.service)
 *   gives back a takeover left by an earlier boot and leaves a live one alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { dotstubArgv } from '../../test-support/netlab.js';
import { labMissing, startLab, type Lab } from '../../test-support/system-dns-lab.js';
import { skipWith } from '../../test-support/skips.js';

const missing = labMissing() ?? (fs.existsSync('/usr/bin/dig') ? null : 'dig is not installed (apt-get install bind9-dnsutils)');

const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\nsearch lab.test\noptions timeout:1 attempts:1\n';
const STATE = '/run/dotstub-state';
const JOURNAL = `${STATE}/system-dns.journal.json`;

let lab: Lab | undefined;
afterEach(async () => {
  await lab?.close();
  lab = undefined;
});

const resolvConf = (l: Lab): string => fs.readFileSync(path.join(l.etc, 'resolv.conf'), 'utf8');

describe('the service unit\'s commands (lab)', skipWith(missing), () => {
  test('a lookup issued the moment enable --owner-pid returns is answered by dotstub, though the proxy took a second to listen', async () => {
    lab = await startLab({ resolvConf: { text: ORIGINAL } });
    const l = lab;
    await l.dnsServer('10.99.0.1', 53, '10.0.0.67');
    // The proxy loads slowly (as a bigger program does at boot); `sh -c 'sleep; exec'` keeps its PID.
    const proxyArgs = ['--listen', '127.0.0.1:53', '--resolver', '127.0.0.1:1#dns.test', '--control', '127.0.0.1:0', '--config-dir', '/run/dotstub-config', '--system-dns', '--system-dns-state-dir', STATE];
    const proxy = l.spawn(['sh', '-c', 'sleep 1; exec "$@"', 'sh', ...dotstubArgv(proxyArgs)]);
    await proxy.waitFor(/^LABPID \d+$/m, 5000);
    const pid = /^LABPID (\d+)$/m.exec(proxy.output())?.[1] as string;
    const on = await l.dotstub(['system-dns', 'enable', '--owner-pid', pid, '--state-dir', STATE, '--check-name', ''], { timeoutMs: 30_000 });
    // At once: the Firefox canary, which dotstub answers itself (NXDOMAIN) even with its resolver unreachable.
    const dig = await l.exec(['dig', '+tries=1', '+time=2', 'use-application-dns.net', 'A']);
    const why = `enable: ${on.stdout}${on.stderr}\ndig: ${dig.stdout}${dig.stderr}\nproxy: ${proxy.output()}`;
    expect(on.code, why).toBe(0);
    expect(resolvConf(l)).toMatch(/^nameserver 127\.0\.0\.1$/m);
    expect(dig.stdout, why).toContain('status: NXDOMAIN');
    expect(dig.stdout).toMatch(/SERVER: 127\.0\.0\.1#53/);
    expect(on.stdout).toMatch(/dotstub answers on 127\.0\.0\.1:53 \(after \d+ ms\)/);
    // Quitting gives the old DNS back (once the proxy has set up its handlers; the unit's ExecStopPost covers earlier).
    await proxy.waitFor('dashboard at', 20_000);
    const t0 = Date.now();
    await proxy.signal('TERM');
    await proxy.exited;
    const stopMs = Date.now() - t0;
    console.log(`resolv.conf backend: proxy stopped ${stopMs} ms after SIGTERM`);
    expect(stopMs).toBeLessThan(2000);
    expect(resolvConf(l), proxy.output()).toBe(ORIGINAL);
  });

  test('enable --owner-pid with nothing answering changes nothing and says why', async () => {
    lab = await startLab({ resolvConf: { text: ORIGINAL } });
    const l = lab;
    const r = await l.dotstub(['system-dns', 'enable', '--owner-pid', '1', '--wait-ms', '1000', '--state-dir', STATE, '--check-name', '']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('dotstub (process 1) did not answer on 127.0.0.1:53 within 1000 ms: the DNS settings were not changed');
    expect(resolvConf(l)).toBe(ORIGINAL);
    expect((await l.exec(['test', '-e', JOURNAL])).code).toBe(1);
  });

  test('restore --only-stale (the boot one-shot) gives back a takeover from an earlier boot and leaves a live one alone', async () => {
    lab = await startLab({ resolvConf: { text: ORIGINAL } });
    const l = lab;
    await l.dnsServer('127.0.0.1', 53, '10.0.0.53');
    const on = await l.dotstub(['system-dns', 'enable', '--owner-pid', '1', '--state-dir', STATE, '--check-name', '']);
    expect(on.code, on.stderr).toBe(0);
    const live = await l.dotstub(['system-dns', 'restore', '--only-stale', '--state-dir', STATE, '--check-name', '']);
    expect([live.code, live.stdout.trim()]).toEqual([0, 'left alone: private DNS is held by process 1, which is running']);
    expect(resolvConf(l)).toMatch(/^nameserver 127\.0\.0\.1$/m);

    // A power cut: the same journal, now from an earlier boot.
    const j = JSON.parse((await l.exec(['cat', JOURNAL])).stdout) as { bootId: string };
    j.bootId = '00000000-0000-4000-8000-00000000beef';
    await l.exec(['sh', '-c', `cat > ${JOURNAL} <<'EOF'\n${JSON.stringify(j)}\nEOF`]);
    const boot = await l.dotstub(['system-dns', 'restore', '--only-stale', '--state-dir', STATE, '--check-name', '']);
    expect(boot.code, boot.stderr).toBe(0);
    expect(boot.stdout).toContain('found a takeover journal with no owner (it was written in an earlier boot');
    expect(resolvConf(l)).toBe(ORIGINAL);
    expect((await l.exec(['test', '-e', JOURNAL])).code).toBe(1);
    const nothing = await l.dotstub(['system-dns', 'restore', '--only-stale', '--state-dir', STATE, '--check-name', '']);
    expect(nothing.stdout.trim()).toBe("nothing to restore: dotstub has not changed this system's DNS");
  });
});
