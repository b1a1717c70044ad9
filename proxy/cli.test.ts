/** The command line's --doh flag: parsed beside --resolver, validated, documented. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { HELP, parseCli } from './cli/flags.js';
import { DEFAULT_DNS_CHECK } from './network/dns-interception.js';
import { resolveRun } from './run/run-config.js';
import { DEFAULT_SETTINGS } from './run/settings.js';

describe('--resolver of a retired preset (issue 29)', () => {
  // Parsed, not run: on code that still had the preset, running it would send queries to the Internet.
  test('is refused saying it was retired, when, and what to use instead (exit 2 before anything is read or written)', () => {
    expect(() => parseCli(['--resolver', 'mullvad'], {})).toThrow(
      '"mullvad" was retired: Mullvad DNS closed on 2 Nov 2026 (Mullvad: "Shutting down our public encrypted DNS servers and sponsoring Quad9 instead"); use --resolver quad9 instead',
    );
    expect(HELP).not.toMatch(/mullvad/i);
    expect(HELP).toMatch(/--resolver R {8}cloudflare \| quad9 \| google \| adguard\n/);
  });
});

describe('--doh', () => {
  test('gives the resolver its DNS-over-HTTPS URL for this run', () => {
    const p = parseCli(['--resolver', '127.0.0.1:8853#dns.test', '--doh', 'https://dns.test:8443/dns-query'], {});
    expect(p.resolver).toMatchObject({ addresses: ['127.0.0.1'], port: 8853, authName: 'dns.test', dohUrl: 'https://dns.test:8443/dns-query' });
    expect(parseCli(['--resolver', 'quad9'], {}).resolver?.dohUrl).toBe('https://dns.quad9.net/dns-query');
    expect(HELP).toMatch(/--doh URL/);
  });

  test('is refused without --resolver, or when it is not an https URL with a path', () => {
    expect(() => parseCli(['--doh', 'https://dns.test/dns-query'], {})).toThrow(/--doh needs --resolver/);
    expect(() => parseCli(['--resolver', '127.0.0.1#dns.test', '--doh', 'http://dns.test/dns-query'], {})).toThrow(/must start with https:\/\//);
    expect(() => parseCli(['--resolver', '127.0.0.1#dns.test', '--doh', 'https://dns.test'], {})).toThrow(/add the path/);
  });
});

describe('captive-portal flags', () => {
  test('--network-dns names the network resolver; --no-portal-check and DOTSTUB_PORTAL_CHECK=off turn probing off', () => {
    const p = parseCli(['--network-dns', '192.168.1.1', '--network-dns', '[fe80::1%wlan0]:53', '--capport-url', 'https://portal.example/api'], {});
    expect(p.overrides.networkDns).toEqual(['192.168.1.1', '[fe80::1%wlan0]:53']);
    expect(p.capportUrl).toBe('https://portal.example/api');
    expect(p.portalCheckAllowed).toBe(true);
    expect(parseCli(['--no-portal-check'], {}).overrides.portalCheck).toBe(false);
    expect(parseCli([], { DOTSTUB_PORTAL_CHECK: 'off' }).portalCheckAllowed).toBe(false);
    expect(HELP).toMatch(/--network-dns ADDR/);
  });

  test('the DNS-interception check goes with the portal checks: on as users run dotstub, off with --no-portal-check or DOTSTUB_PORTAL_CHECK=off', () => {
    const run = (argv: string[], env: Record<string, string>) => resolveRun(parseCli(['--resolver', '127.0.0.1#dns.test', ...argv], env), DEFAULT_SETTINGS, undefined).config;
    expect(run([], {}).dnsCheck).toEqual(DEFAULT_DNS_CHECK);
    expect(DEFAULT_DNS_CHECK).toMatchObject({ addresses: ['192.0.2.1', '2001:db8::1'], port: 53 });
    expect(run(['--no-portal-check'], {}).dnsCheck).toBeNull();
    expect(run([], { DOTSTUB_PORTAL_CHECK: 'off' }).dnsCheck).toBeNull();
    expect(HELP).toMatch(/nor check\s+whether a network answers DNS for every address/);
  });

  test('bad addresses and a non-HTTPS CAPPORT URL are refused with what to write instead', () => {
    expect(() => parseCli(['--network-dns', 'router.local'], {})).toThrow(/expected an address like 192.168.1.1/);
    expect(() => parseCli(['--capport-url', 'http://portal.example/api'], {})).toThrow(/must be an https:\/\/ URL/);
  });
});

describe('--burst-connections', () => {
  test('sets the extra connections for bursts, 0 included; anything else is refused and says the range', () => {
    expect(parseCli(['--burst-connections', '0'], {}).overrides.burstConnections).toBe(0);
    expect(parseCli(['--burst-connections', '8'], {}).overrides.burstConnections).toBe(8);
    expect(parseCli([], {}).overrides.burstConnections).toBeUndefined();
    expect(() => parseCli(['--burst-connections', '9'], {})).toThrow(/--burst-connections 9: expected a whole number from 0 to 8/);
    expect(() => parseCli(['--burst-connections', '1.5'], {})).toThrow(/from 0 to 8/);
    expect(HELP).toContain('--burst-connections N');
  });
});

describe('output whose reader went away (`dotstub ctl status | head -3`)', () => {
  // Issue 44: it ended in an EPIPE stack trace. The reader here is `true`, which exits at once, so every write after
  // it fails: the command ends quietly with its own exit code.
  test.each([{ command: 'ctl --help' }, { command: '--help' }])('dotstub $command | true: no stack trace, exit 0', ({ command }) => {
    const args = command.split(' ');
    const cli = `${JSON.stringify(process.execPath)} --import tsx -e "import('./proxy/cli.ts').then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })" -- ${args.join(' ')}`;
    const r = spawnSync('bash', ['-c', `set -o pipefail; ${cli} | true`], { cwd: path.resolve(import.meta.dirname, '..'), encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).not.toMatch(/EPIPE|Error/);
    expect(r.status).toBe(0);
  });
});
