/**
 * The leak self-test through the lab's real getaddrinfo: with the takeover
 * on, a fresh random name reaches "dotstub" (the lab's server on
 * 127.0.0.1:53) and no other resolver is known; with the machine's own
 * resolv.conf, the same test says the lookup did not reach dotstub and names
 * the resolvers it would go to.
 */
import { describe, expect, test } from 'vitest';
import { skipWith } from '../../test-support/skips.js';
import { labMissing, labForTest, type Lab } from '../../test-support/system-dns-lab.js';

const missing = labMissing();

// Runs inside the lab: the leak test with "arrived" read from the lab server's log.
const SCRIPT = `
import fs from 'node:fs';
const { runLeakTest } = await import('./proxy/system-dns/leak-test.ts');
const { ResolvConfBackend } = await import('./proxy/system-dns/resolv-conf-backend.ts');
const { systemHost } = await import('./proxy/system-dns/host.ts');
const backend = new ResolvConfBackend(systemHost('/'));
const r = await runLeakTest({
  zone: 'lab.test',
  arrived: async (name) => { try { return fs.readFileSync('/run/stub.log', 'utf8').toLowerCase().includes('q ' + name + ' '); } catch { return false; } },
  otherResolvers: () => backend.leaks({ port: 53 }),
});
console.log(JSON.stringify(r));
`;

interface Result {
  passed: boolean;
  name: string;
  lines: string[];
}

async function leakTest(l: Lab): Promise<Result> {
  const r = await l.exec([process.execPath, '--import', 'tsx', '--input-type=module', '-e', SCRIPT]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as Result;
}

describe('leak self-test (lab)', skipWith(missing), () => {
  test('passes with the takeover on; with the DHCP resolv.conf it says the lookup missed dotstub and names the other servers', async () => {
    const lab = await labForTest({ resolvConf: { text: 'nameserver 10.99.0.1\nnameserver fd00:99::1\noptions timeout:1 attempts:1\n' } });
    await lab.dnsServer('127.0.0.1', 53, '10.0.0.53', '/run/stub.log');
    const dhcp = await lab.dnsServer('10.99.0.1', 53, '10.0.0.67');

    const off = await leakTest(lab);
    expect(off.passed).toBe(false);
    expect(off.lines[0]).toContain(`A lookup of ${off.name} through the system did NOT reach dotstub`);
    expect(off.lines).toContain('Another way around dotstub: /etc/resolv.conf still names nameserver 10.99.0.1: programs that read it may ask 10.99.0.1 directly');
    expect(off.lines).toContain('Another way around dotstub: /etc/resolv.conf still names nameserver fd00:99::1: programs that read it may ask fd00:99::1 directly');
    expect(dhcp.queries()).toContain(off.name);

    const en = await lab.dotstub(['system-dns', 'enable', '--owner-pid', '1', '--state-dir', '/run/dotstub', '--check-name', '']);
    expect(en.code, en.stderr).toBe(0);
    const on = await leakTest(lab);
    expect(on.lines).toEqual([`A lookup of ${on.name} through the system reached dotstub.`, 'The system knows no other resolver.', 'Result: no leak found.']);
    expect(on.passed).toBe(true);
    expect(dhcp.queries()).not.toContain(on.name);
  });
});
