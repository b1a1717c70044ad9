/**
 * The plain-resolv.conf backend on a throwaway machine (namespaces, a copy
 * of /etc, test-support/system-dns-lab.ts): real glibc lookups (getent), a
 * DNS server of the test's own on 127.0.0.1:53 standing in for dotstub, and
 * a "DHCP" resolver on 10.99.0.1 that must not be asked while private DNS is
 * on. The dotstub CLI runs from the sources inside the lab.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { labMissing, labForTest, type Lab, type LabDnsServer } from '../../test-support/system-dns-lab.js';
import { skipWith } from '../../test-support/skips.js';

const missing = labMissing();

const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\nnameserver fd00:99::1\nsearch lab.test\noptions timeout:1 attempts:1\n';
const STATE = '/run/dotstub-state';
const NAME = 'www.lab.test';

async function servers(l: Lab): Promise<{ stub: LabDnsServer; dhcp: LabDnsServer }> {
  const stub = await l.dnsServer('127.0.0.1', 53, '10.0.0.53');
  const dhcp = await l.dnsServer('10.99.0.1', 53, '10.0.0.67');
  return { stub, dhcp };
}

async function getent(l: Lab, name = NAME): Promise<string> {
  const r = await l.exec(['getent', 'ahostsv4', name], { timeoutMs: 20_000 });
  return r.stdout;
}

function bytes(l: Lab, p = 'resolv.conf'): Buffer {
  return fs.readFileSync(path.join(l.etc, p));
}

/**
 * What glibc hands a program that asks for `name`'s A record through
 * res_query (as ssh's VerifyHostKeyDNS does): the answer's AD bit, read by
 * Debian's python3 calling glibc through ctypes.
 */
async function glibcAd(l: Lab, name = NAME): Promise<string> {
  const py = [
    'import ctypes, sys',
    "libc = ctypes.CDLL('libc.so.6')",
    'buf = ctypes.create_string_buffer(4096)',
    'n = libc.res_query(sys.argv[1].encode(), 1, 1, buf, 4096)',
    "print('fail' if n < 4 else ('AD' if buf.raw[3] & 0x20 else 'no AD'))",
  ].join('\n');
  return (await l.exec(['/usr/bin/python3', '-c', py, name], { timeoutMs: 20_000 })).stdout.trim();
}

describe('system-dns, plain resolv.conf backend (lab)', skipWith(missing), () => {
  test('trust-ad: with the file dotstub writes, glibc hands programs the AD bit its stub sets (dotstub relays it only from a resolver it authenticated); with the original file, glibc drops it', skipWith(fs.existsSync('/usr/bin/python3') ? null : '/usr/bin/python3 is missing (it calls glibc)'), async () => {
    const lab = await labForTest({ resolvConf: { text: ORIGINAL } });
    // Both say "validated" when asked: what differs is whether glibc passes it on.
    await lab.dnsServer('127.0.0.1', 53, '10.0.0.53/ad');
    await lab.dnsServer('10.99.0.1', 53, '10.0.0.67/ad');
    expect(await glibcAd(lab)).toBe('no AD');

    const held = lab.spawnDotstub(['system-dns', 'enable', '--state-dir', STATE, '--check-name', NAME]);
    await held.waitFor('private DNS enabled');
    expect(bytes(lab).toString()).toMatch(/^options trust-ad$/m);
    expect(await glibcAd(lab)).toBe('AD');

    // At once, as a script that saw the line would: the signal is caught from before the file changed (it once killed
    // the process here, before its handler was set, and left the machine pointing at nothing).
    await held.signal('TERM');
    const code = await held.exited;
    if (code !== 0) console.log(held.output());
    expect(code).toBe(0);
    expect(bytes(lab).toString()).toBe(ORIGINAL);
    expect(await glibcAd(lab)).toBe('no AD');
  });

  test('enable: every lookup goes to dotstub, none to the DHCP resolver (IPv6 server dropped too); SIGTERM gives the file back byte for byte', async () => {
    const lab = await labForTest({ resolvConf: { text: ORIGINAL } });
    const { stub, dhcp } = await servers(lab);
    // Before: the lab's lookups do reach the DHCP resolver (so zero below means something).
    expect(await getent(lab)).toContain('10.0.0.67');
    expect(dhcp.queries()).toContain(NAME);
    const before = dhcp.queries().length;

    const held = lab.spawnDotstub(['system-dns', 'enable', '--state-dir', STATE, '--check-name', NAME]);
    await held.waitFor('private DNS enabled');
    expect(held.output()).toContain('backend: resolv.conf');
    const written = bytes(lab).toString();
    expect(written).toMatch(/^nameserver 127\.0\.0\.1$/m);
    expect(written).not.toContain('10.99.0.1');
    expect(written).not.toContain('fd00:99::1');
    expect(written).toContain('search lab.test');

    expect(await getent(lab)).toContain('10.0.0.53');
    expect(await getent(lab, 'other.lab.test')).toContain('10.0.0.53');
    expect(stub.queries()).toEqual(expect.arrayContaining([NAME, 'other.lab.test']));
    expect(dhcp.queries().length).toBe(before);

    const status = await lab.dotstub(['system-dns', 'status', '--state-dir', STATE, '--check-name', '']);
    expect(status.stdout).toContain('private DNS: on');
    // No dotstub service in the lab: one reading of the system's DNS settings, said as one (never "none seen").
    expect(status.stdout).toMatch(/^leaks \(one reading now, not a watch: no dotstub answered on \/run\/dotstub\/control\.sock\): no path around dotstub in this reading$/m);

    await held.signal('TERM');
    expect(await held.exited).toBe(0);
    expect(bytes(lab).toString()).toBe(ORIGINAL);
    // The post-restore check resolved through the OS, now via the DHCP resolver again.
    expect(held.output()).toContain(`DNS works: ${NAME} resolves through the system (10.0.0.67`);
  });

  test('kill -9 of the enabling process, then restore: byte-identical file; restore twice is a no-op', async () => {
    const lab = await labForTest({ resolvConf: { text: ORIGINAL } });
    await servers(lab);
    const held = lab.spawnDotstub(['system-dns', 'enable', '--state-dir', STATE, '--check-name', '']);
    await held.waitFor('private DNS enabled');
    await held.signal('KILL');
    expect(await held.exited).not.toBe(0);
    expect(bytes(lab).toString()).not.toBe(ORIGINAL); // left pointing at a dead dotstub

    const status = await lab.dotstub(['system-dns', 'status', '--state-dir', STATE, '--check-name', '']);
    // status replays a journal whose owner is gone
    expect(status.stdout).toMatch(/no owner \(its owner, process \d+, is gone\)/);
    expect(bytes(lab).toString()).toBe(ORIGINAL);

    const again = await lab.dotstub(['system-dns', 'restore', '--state-dir', STATE, '--check-name', NAME]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing to restore');
    expect(bytes(lab).toString()).toBe(ORIGINAL);
  });

  test('kill -9, then an explicit restore (nothing else running) puts back a symlink into the resolvconf directory with its target', async () => {
    const lab = await labForTest({ resolvConf: { symlink: '../run/resolvconf/resolv.conf', targetPath: '/run/resolvconf/resolv.conf', targetText: ORIGINAL } });
    await servers(lab);
    const held = lab.spawnDotstub(['system-dns', 'enable', '--state-dir', STATE, '--check-name', '']);
    await held.waitFor('private DNS enabled');
    expect(fs.lstatSync(path.join(lab.etc, 'resolv.conf')).isFile()).toBe(true);
    await held.signal('KILL');
    await held.exited;

    const r = await lab.dotstub(['system-dns', 'restore', '--state-dir', STATE, '--check-name', NAME]);
    expect(r.code).toBe(0);
    expect(fs.readlinkSync(path.join(lab.etc, 'resolv.conf'))).toBe('../run/resolvconf/resolv.conf');
    // the target (in the lab's /run) was never written through
    expect((await lab.exec(['cat', '/run/resolvconf/resolv.conf'])).stdout).toBe(ORIGINAL);
    expect(r.stdout).toContain(`DNS works: ${NAME}`);
    const twice = await lab.dotstub(['system-dns', 'restore', '--state-dir', STATE, '--check-name', '']);
    expect([twice.code, twice.stdout.trim()]).toEqual([0, "nothing to restore: dotstub has not changed this system's DNS"]);
  });

  test('a journal left by a previous boot is replayed at the next start, even though its pid is alive', async () => {
    const lab = await labForTest({ resolvConf: { text: ORIGINAL } });
    await servers(lab);
    // --owner-pid 1: the lab's init, alive for the whole test.
    const r = await lab.dotstub(['system-dns', 'enable', '--owner-pid', '1', '--state-dir', STATE, '--check-name', '']);
    expect(r.code).toBe(0);
    const live = await lab.dotstub(['system-dns', 'status', '--state-dir', STATE, '--check-name', '']);
    expect(live.stdout).toContain('private DNS: on');
    expect(bytes(lab).toString()).not.toBe(ORIGINAL); // a live owner in this boot: nothing replayed

    const journalFile = `${STATE}/system-dns.journal.json`;
    const j = JSON.parse((await lab.exec(['cat', journalFile])).stdout) as { bootId: string };
    j.bootId = '00000000-0000-4000-8000-000000000000';
    await lab.exec(['sh', '-c', `cat > ${journalFile} <<'EOF'\n${JSON.stringify(j)}\nEOF`]);

    const next = await lab.dotstub(['system-dns', 'status', '--state-dir', STATE, '--check-name', NAME]);
    expect(next.stdout).toContain('written in an earlier boot');
    expect(next.stdout).toContain('private DNS: off');
    expect(bytes(lab).toString()).toBe(ORIGINAL);
    expect((await lab.exec(['test', '-e', journalFile])).code).toBe(1);
  });

  test('a bind-mounted resolv.conf (rename refused) is written in place and restored byte for byte', async () => {
    const lab = await labForTest({ resolvConf: { text: ORIGINAL }, bindMountResolvConf: true });
    const { stub, dhcp } = await servers(lab);
    const r = await lab.dotstub(['system-dns', 'enable', '--owner-pid', '1', '--state-dir', STATE, '--check-name', '']);
    expect(r.code, r.stderr).toBe(0);
    const seen = (await lab.exec(['cat', '/etc/resolv.conf'])).stdout;
    expect(seen).toMatch(/^nameserver 127\.0\.0\.1$/m);
    expect(await getent(lab)).toContain('10.0.0.53');
    expect(stub.queries()).toContain(NAME);
    expect(dhcp.queries()).toEqual([]);
    const d = await lab.dotstub(['system-dns', 'disable', '--state-dir', STATE, '--check-name', NAME]);
    expect(d.code).toBe(0);
    expect((await lab.exec(['cat', '/etc/resolv.conf'])).stdout).toBe(ORIGINAL);
    expect(fs.readFileSync(path.join(lab.dir, 'resolv.conf.bind'), 'utf8')).toBe(ORIGINAL);
  });

  test('bad input and missing privileges: a clear error, nothing changed, no journal', async () => {
    const lab = await labForTest({ resolvConf: { text: ORIGINAL } });
    const port = await lab.dotstub(['system-dns', 'enable', '--port', '5300', '--state-dir', STATE]);
    expect(port.code).toBe(1);
    expect(port.stderr).toContain('needs dotstub on 127.0.0.1:53');
    const backend = await lab.dotstub(['system-dns', 'enable', '--backend', 'bogus', '--state-dir', STATE]);
    expect(backend.code).toBe(2);
    expect(backend.stderr).toContain('--backend bogus: choose one of systemd-resolved, networkmanager, resolv.conf');
    const unavailable = await lab.dotstub(['system-dns', 'enable', '--backend', 'systemd-resolved', '--state-dir', STATE]);
    expect(unavailable.code).toBe(1);
    expect(unavailable.stderr).toContain("not resolved's stub");
    const verb = await lab.dotstub(['system-dns', 'enabel']);
    expect([verb.code, verb.stderr.trim()]).toEqual([2, 'dotstub: unknown command "enabel": use enable, disable, status, restore or watchdog']);
    const user = await lab.dotstub(['system-dns', 'enable', '--state-dir', '/tmp/nobody-state'], { user: '65534' });
    expect(user.code).toBe(1);
    expect(user.stderr).toContain('needs root: run with sudo, or install the service');
    expect(bytes(lab).toString()).toBe(ORIGINAL);
    expect((await lab.exec(['test', '-e', `${STATE}/system-dns.journal.json`])).code).toBe(1);
  });
});

describe('system-dns, a DHCP client rewriting resolv.conf while enabled (lab)', skipWith(missing), () => {
  test('a rewrite is caught and dotstub put back; after 10 the holder gives up and says who; SIGTERM still restores the original bytes', async () => {
    const lab = await labForTest({ resolvConf: { text: ORIGINAL } });
    const { stub, dhcp } = await servers(lab);
    const held = lab.spawnDotstub(['system-dns', 'enable', '--state-dir', STATE, '--check-name', '']);
    await held.waitFor('private DNS enabled');
    // What dhclient does on renewal: a new file renamed over resolv.conf.
    const renew = "printf '# Generated by dhclient-script\\nnameserver 10.99.0.1\\n' > /etc/.rc.new && mv /etc/.rc.new /etc/resolv.conf";
    await lab.exec(['sh', '-c', renew]);
    await held.waitFor('DNS settings were rewritten by "Generated by dhclient-script"; put dotstub back (1)');
    expect(bytes(lab).toString()).toMatch(/^nameserver 127\.0\.0\.1$/m);
    expect(await getent(lab, 'after-renewal.lab.test')).toContain('10.0.0.53');
    expect(stub.queries()).toContain('after-renewal.lab.test');
    expect(dhcp.queries()).toEqual([]);

    // A client that keeps rewriting: dotstub stops fighting after 10 and names it.
    const loop = lab.spawn(['sh', '-c', `while true; do ${renew}; sleep 0.3; done`]);
    await held.waitFor('another program keeps changing DNS: "Generated by dhclient-script"', 60_000);
    await loop.signal('KILL');
    await loop.exited;
    expect(held.output().match(/put dotstub back \(\d+\)/g)?.length).toBe(10);

    await held.signal('TERM');
    expect(await held.exited).toBe(0);
    expect(bytes(lab).toString()).toBe(ORIGINAL);
  }, 120_000);
});
