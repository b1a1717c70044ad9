/**
 * What the AD bit and `options trust-ad` are for (issue 33, item 3):
 * `ssh -o VerifyHostKeyDNS=yes` trusts a host key from an SSHFP record only
 * when glibc hands it the answer as validated. On a throwaway machine
 * (test-support/system-dns-lab.ts), with real parts only:
 *
 *   LAN  veth0 10.99.0.2 ─ 10.99.0.1  Debian's unbound, validating the lab's signed
 *                                      zones (test-support/signed-zone.ts): DoT on 853,
 *                                      and plain DNS on 53 as the network's resolver;
 *                                      Debian's sshd (unpacked, run as nobody) on 2222
 *   host.signed.example  A 10.99.0.1 and the SSHFP records of sshd's key, signed
 *   host.bogus.example   A 10.99.0.1 and SSHFP records signed for another key, then
 *                        changed to sshd's: a validator answers SERVFAIL
 *
 * The client is OpenSSH's ssh as nobody, with no known hosts and strict
 * checking: DNS is its only way to trust the key (test-support/ssh-lab.ts).
 * It trusts it with dotstub verified to unbound and the resolv.conf dotstub
 * writes; not with the network's validating resolver and the original file
 * (no trust-ad: glibc drops AD), not over TLS dotstub could not verify
 * (dotstub drops AD), and not for the forged zone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signedZoneConfig, signedZoneMissing, SIGNED_ZONE } from '../../test-support/signed-zone.js';
import { skipWith } from '../../test-support/skips.js';
import { makeHostKey, sshLabMissing, sshVerdict, startSshd, type SshVerdict } from '../../test-support/ssh-lab.js';
import { labMissing, startLab, type Lab, type LabProcess } from '../../test-support/system-dns-lab.js';
import { startUnbound, unboundMissing, type UnboundServer } from '../../test-support/unbound.js';

const missing =
  labMissing() ??
  signedZoneMissing() ??
  sshLabMissing() ??
  unboundMissing() ??
  (fs.existsSync('/usr/bin/dig') ? null : '/usr/bin/dig is missing (Debian package dnsutils)');

/** The LAN's other end: the network's resolver, and the ssh server. */
const LAN = '10.99.0.1';
const SSH_PORT = 2222;
const HOST = `host.${SIGNED_ZONE}`;
const BOGUS_HOST = 'host.bogus.example';
/** As DHCP wrote it: the network's (validating) resolver, no trust-ad. */
const ORIGINAL = `# from DHCP\nnameserver ${LAN}\noptions timeout:1 attempts:1\n`;
const STATE = '/run/dotstub-state';

let lab: Lab | undefined;
let unbound: UnboundServer | undefined;
let proxy: LabProcess | undefined;
let started = 0;

/** dig's header flags and status for `name`'s SSHFP records, asked at `server` inside the lab with DO and AD set, as ssh asks through glibc. */
async function dig(l: Lab, server: string, name: string): Promise<{ flags: string[]; status: string | undefined }> {
  const { stdout } = await l.exec(['dig', `@${server}`, '+dnssec', '+adflag', '+tries=1', '+time=3', '+noall', '+comments', name, 'SSHFP']);
  return { flags: /;; flags: ([a-z ]+);/.exec(stdout)?.[1]?.split(' ') ?? [], status: /status: ([A-Z]+)/.exec(stdout)?.[1] };
}

/** dotstub itself (the CLI, from the sources) on 127.0.0.1:53 in the lab, resolving through `resolver` (unbound's DoT) with `args`. */
async function startProxy(l: Lab, args: readonly string[], resolver = `${LAN}:853#dns.test`): Promise<LabProcess> {
  const p = l.spawnDotstub(['--listen', '127.0.0.1:53', '--resolver', resolver, '--control', '127.0.0.1:0', '--config-dir', '/run/dotstub-config', '--no-portal-check', ...args]);
  await p.waitFor('dashboard at', 30_000);
  return p;
}

async function stopProxy(): Promise<void> {
  await proxy?.signal('TERM');
  await proxy?.exited;
  proxy = undefined;
}

function report(label: string, v: SshVerdict): void {
  console.log(`sshfp lab, ${label}: ${v.verdict}\n  ${v.said.replace(/\n/g, '\n  ')}`);
}

/**
 * ssh's verdict on `host`'s key, reported, with what it said about the SSHFP records: `secure` or `insecure`
 * fingerprints found (and, with `matching`, that one matched the key), or `lookup-error` (no fingerprint at all).
 */
async function sshSays(l: Lab, host: string, label: string, found: 'secure' | 'insecure' | 'lookup-error', verdict: SshVerdict['verdict'], matching = true): Promise<void> {
  const v = await sshVerdict(l, host, SSH_PORT);
  report(label, v);
  if (found === 'lookup-error') {
    expect(v.said).not.toMatch(/found \d+ (secure|insecure) fingerprints in DNS/);
    expect(v.said).toContain('DNS lookup error');
  } else {
    expect(v.said).toMatch(new RegExp(`found \\d+ ${found} fingerprints in DNS`));
    if (matching) expect(v.said).toContain('matching host key fingerprint found in DNS');
  }
  expect(v.verdict, v.output).toBe(verdict);
}

describe('ssh -o VerifyHostKeyDNS=yes against SSHFP records, through dotstub (lab)', skipWith(missing), () => {
  beforeAll(async () => {
    started = Date.now();
    lab = await startLab({ resolvConf: { text: ORIGINAL } });
    const l = lab;
    const keys = path.join(l.dir, 'keys');
    fs.mkdirSync(keys);
    const key = makeHostKey(keys, 'host_key', 'host');
    // The forger's zone was signed with another key's fingerprints; then sshd's replaced them (what an attacker can do to the answer, not to its signatures).
    const decoy = makeHostKey(keys, 'decoy_key', 'host');
    const zones = path.join(l.dir, 'zones');
    fs.mkdirSync(zones);
    const extraConfig = signedZoneConfig(zones, true, {
      signed: [`host IN A ${LAN}`, ...key.sshfp],
      bogus: [`host IN A ${LAN}`, ...decoy.sshfp],
      bogusForgeries: decoy.digests.map((from, i) => ({ from, to: key.digests[i] as string })),
    });
    unbound = await startUnbound({ names: 0, port: 853, plainPort: 53, launch: l.unboundLaunch([LAN]), extraConfig });
    await startSshd(l, key, LAN, SSH_PORT);
    // unbound reads the trust anchor's DNSKEY first: its first answers may come before the zone is secure.
    for (const deadline = Date.now() + 10_000; !(await dig(l, LAN, HOST)).flags.includes('ad'); ) {
      if (Date.now() > deadline) throw new Error(`unbound never validated ${HOST}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });
  afterAll(async () => {
    await unbound?.stop();
    await lab?.close();
    console.log(`sshfp lab: ${Date.now() - started} ms in all`);
  });

  test("the original resolv.conf (the network's validating resolver, no trust-ad): the answer says validated, glibc drops it, ssh refuses the key", async () => {
    const l = lab as Lab;
    // The resolver did validate: what is missing is glibc's trust in it.
    expect((await dig(l, LAN, HOST)).flags).toContain('ad');
    await sshSays(l, HOST, 'original resolv.conf', 'insecure', 'refused');
  });

  test('dotstub, strict to unbound over verified DoT, and the resolv.conf it writes (trust-ad): ssh trusts the key from DNS', async () => {
    const l = lab as Lab;
    proxy = await startProxy(l, ['--strict', '--ca', (unbound as UnboundServer).pki.caFile]);
    // The takeover as the service does it; held by the lab's init, so the proxy behind it can change.
    const on = await l.dotstub(['system-dns', 'enable', '--owner-pid', '1', '--state-dir', STATE, '--check-name', '']);
    expect(on.code, on.stderr).toBe(0);
    const written = fs.readFileSync(path.join(l.etc, 'resolv.conf'), 'utf8');
    expect(written).toMatch(/^nameserver 127\.0\.0\.1$/m);
    expect(written).toMatch(/^options trust-ad$/m);
    expect((await dig(l, '127.0.0.1', HOST)).flags).toContain('ad');
    await proxy.waitFor(/^dotstub: private: /m, 5000);

    await sshSays(l, HOST, 'dotstub strict + trust-ad', 'secure', 'trusted');
  });

  test('the forged zone through the same dotstub: SERVFAIL, no fingerprint, ssh refuses the key', async () => {
    const l = lab as Lab;
    expect((await dig(l, '127.0.0.1', BOGUS_HOST)).status).toBe('SERVFAIL');
    await sshSays(l, BOGUS_HOST, 'forged zone', 'lookup-error', 'refused');
  });

  test('dotstub over TLS it could not verify (opportunistic), the same resolv.conf: the answer comes without AD, ssh refuses the key', async () => {
    const l = lab as Lab;
    await stopProxy();
    proxy = await startProxy(l, ['--opportunistic']);
    expect(fs.readFileSync(path.join(l.etc, 'resolv.conf'), 'utf8')).toMatch(/^options trust-ad$/m);
    const asked = await dig(l, '127.0.0.1', HOST);
    expect(asked.status).toBe('NOERROR');
    expect(asked.flags).not.toContain('ad');
    await proxy.waitFor(/^dotstub: private-unverified: /m, 5000);

    await sshSays(l, HOST, 'dotstub opportunistic, unverified', 'insecure', 'refused');
  });

  test("dotstub in degraded mode (encrypted DNS blocked, the network's resolver in cleartext), the same resolv.conf: that resolver validated, but nobody authenticated it; no AD, ssh refuses the key", async () => {
    const l = lab as Lab;
    await stopProxy();
    // Port 1 on the lab's loopback: nothing listens, so encrypted DNS fails at once.
    proxy = await startProxy(l, ['--opportunistic', '--cleartext-fallback', '--network-dns', LAN], '127.0.0.1:1#dns.test');
    const from = Date.now();
    let asked = await dig(l, '127.0.0.1', HOST);
    for (; asked.status !== 'NOERROR'; asked = await dig(l, '127.0.0.1', HOST)) {
      if (Date.now() - from > 15_000) throw new Error(`dotstub never answered from the network's resolver:\n${proxy.output()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    console.log(`sshfp lab: degraded mode answered ${Date.now() - from} ms after dotstub started`);
    expect(asked.flags).not.toContain('ad');
    await proxy.waitFor(/^dotstub: degraded: /m, 5000);
    expect((await dig(l, LAN, HOST)).flags).toContain('ad');

    await sshSays(l, HOST, 'dotstub degraded, cleartext', 'insecure', 'refused', false);
  });
});
