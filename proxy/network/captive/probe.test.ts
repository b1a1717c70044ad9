/**
 * The portal probes' rules (Android's, RFC 8908's) against real HTTP servers
 * on loopback, and the network key's privacy: what a user would see as
 * "portal", "open" or "nothing conclusive".
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { removeOnExit } from '../../../test-support/temp.js';
import { freePort } from '../../../test-support/unbound.js';
import { detectPortal, isNonPublicAddress, parseCapport, whyUnusablePortalUrl } from './probe.js';
import { networkKey } from '../network-key.js';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
});

async function serve(handler: http.RequestListener): Promise<number> {
  const s = http.createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
}

/** The network's resolver, as the probes see it: every name at 127.0.0.1 (or `addr`). */
const lookupTo = (addr = '127.0.0.1') => async (): Promise<string[]> => [addr];

describe('detectPortal', () => {
  test('a 204 from the check is an open network; nothing intercepting', async () => {
    const port = await serve((_q, r) => r.writeHead(204).end());
    const closed = await freePort();
    const v = await detectPortal({ interceptionUrl: `http://127.0.0.1:${closed}/`, checkUrl: `http://check.test:${port}/generate_204`, capportUrl: null }, lookupTo(), { followRedirects: false });
    expect(v.kind).toBe('open');
  });

  test('an empty 200 is a broken proxy, not a portal (Android\'s rule)', async () => {
    const port = await serve((_q, r) => r.writeHead(200).end());
    const closed = await freePort();
    const v = await detectPortal({ interceptionUrl: `http://127.0.0.1:${closed}/`, checkUrl: `http://check.test:${port}/generate_204`, capportUrl: null }, lookupTo(), { followRedirects: false });
    expect(v.kind).toBe('unknown');
  });

  test('a 200 page instead of 204 is a portal, its login page the probe URL when there is no Location', async () => {
    const port = await serve((_q, r) => r.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Welcome to the hotel</h1>'));
    const closed = await freePort();
    const v = await detectPortal({ interceptionUrl: `http://127.0.0.1:${closed}/`, checkUrl: `http://check.test:${port}/generate_204`, capportUrl: null }, lookupTo(), { followRedirects: true });
    expect(v.kind).toBe('portal');
    if (v.kind === 'portal') {
      expect(v.by).toBe('check');
      expect(v.portalUrl).toBe(`http://check.test:${port}/generate_204`);
    }
  });

  test('without a network resolver only the DNS-free probe can tell; the budget of 3 s holds', async () => {
    const port = await serve((_q, r) => r.writeHead(302, { location: 'http://wifi.example.net/login' }).end());
    const t0 = Date.now();
    const v = await detectPortal({ interceptionUrl: `http://127.0.0.1:${port}/`, checkUrl: 'http://check.test/generate_204', capportUrl: null }, null, { followRedirects: false });
    expect(v.kind).toBe('portal');
    if (v.kind === 'portal') expect(v.hosts).toContain('wifi.example.net');
    expect(Date.now() - t0).toBeLessThan(3000);
  });
});

describe('the sign-in address a portal sends', () => {
  test('a Location that is a file, or a page of this machine, is no portal URL: the outcome says the network sent an unusable sign-in address', async () => {
    for (const location of ['file:///home/user/.ssh/id_ed25519', 'data:text/html,<script>1</script>', 'http://127.0.0.1:5380/#token=x', 'http://localhost:631/', 'https://[::1]/', 'http://0.0.0.0:8080/']) {
      const port = await serve((_q, r) => r.writeHead(302, { location }).end());
      const v = await detectPortal({ interceptionUrl: `http://127.0.0.1:${port}/`, checkUrl: 'http://check.test/generate_204', capportUrl: null }, null, { followRedirects: true });
      expect(v.kind, location).toBe('unknown');
      expect(JSON.stringify(v), location).not.toContain(location);
      const interception = v.outcomes.find((o) => o.probe === 'interception');
      expect(interception, location).toMatchObject({ result: 'unusable', detail: expect.stringContaining('the network sent an unusable sign-in address') });
    }
    // The check's own answer, too (a 302 instead of its 204).
    const port = await serve((_q, r) => r.writeHead(302, { location: 'file:///etc/shadow' }).end());
    const closed = await freePort();
    const v = await detectPortal({ interceptionUrl: `http://127.0.0.1:${closed}/`, checkUrl: `http://check.test:${port}/generate_204`, capportUrl: null }, lookupTo(), { followRedirects: true });
    expect(v.kind).toBe('unknown');
    expect(v.outcomes.find((o) => o.probe === 'check')).toMatchObject({ result: 'unusable', detail: expect.stringContaining('a file: address, not a web page') });
  });

  test('http and https pages of the network are usable, private addresses included; anything else says why', () => {
    for (const ok of ['http://login.hotspot.test/login', 'https://portal.example/', 'http://192.168.1.1:8080/', 'http://10.0.0.1/', 'https://[fd00::1]/']) expect(whyUnusablePortalUrl(ok), ok).toBeNull();
    expect(whyUnusablePortalUrl('file:///home/user/.ssh/id_ed25519')).toBe('a file: address, not a web page');
    expect(whyUnusablePortalUrl('javascript:alert(1)')).toBe('a javascript: address, not a web page');
    expect(whyUnusablePortalUrl('http://127.0.0.1:5380/')).toBe('127.0.0.1 is this machine (loopback)');
    expect(whyUnusablePortalUrl('http://2130706433/')).toBe('127.0.0.1 is this machine (loopback)');
    expect(whyUnusablePortalUrl('http://[::ffff:127.0.0.1]/')).toContain('is this machine (loopback)');
    expect(whyUnusablePortalUrl('http://printer.localhost/')).toBe('printer.localhost is this machine (localhost)');
    expect(whyUnusablePortalUrl('http://169.254.169.254/latest/')).toContain('the cloud metadata service');
    expect(whyUnusablePortalUrl('not a url')).toBe('not a URL');
  });
});

describe('probe rules', () => {
  test('private, shared, link-local and TEST-NET answers are not public', () => {
    for (const a of ['10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', '169.254.1.1', '192.0.2.1', '198.51.100.7', '203.0.113.9', 'fd00::1', 'fe80::1']) expect(isNonPublicAddress(a), a).toBe(true);
    for (const a of ['8.8.8.8', '172.32.0.1', '2001:4860::8888']) expect(isNonPublicAddress(a), a).toBe(false);
  });

  test('CAPPORT JSON: the right media type, a boolean captive, HTTPS pages only', () => {
    const json = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));
    expect(parseCapport(json({ captive: true, 'user-portal-url': 'https://p.example/' }), 'application/captive+json')).toEqual({ captive: true, userPortalUrl: 'https://p.example/', venueInfoUrl: undefined });
    expect(parseCapport(json({ captive: true, 'user-portal-url': 'http://p.example/' }), 'application/captive+json')?.userPortalUrl).toBeUndefined();
    expect(parseCapport(json({ captive: true }), 'application/json')).toBeNull();
    expect(parseCapport(Buffer.from('{oops'), 'application/captive+json')).toBeNull();
    expect(parseCapport(json({ captive: 'yes' }), 'application/captive+json')).toBeNull();
  });
});

describe('networkKey', () => {
  test('a hash of the gateway\'s MAC: stable, never the MAC itself, different per network', () => {
    const dir = removeOnExit(fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-netkey-')));
    const route = path.join(dir, 'route');
    const arp = path.join(dir, 'arp');
    // Gateway 192.168.1.1, little-endian hex in /proc/net/route.
    fs.writeFileSync(route, 'Iface\tDestination\tGateway\tFlags\nwlan0\t00000000\t0101A8C0\t0003\n');
    fs.writeFileSync(arp, 'IP address HW type Flags HW address Mask Device\n192.168.1.1 0x1 0x2 aa:bb:cc:dd:ee:ff * wlan0\n');
    const k = networkKey(route, arp);
    expect(k).toMatch(/^[0-9a-f]{32}$/);
    expect(networkKey(route, arp)).toBe(k);
    expect(k).not.toContain('aa:bb');
    fs.writeFileSync(arp, 'IP address HW type Flags HW address Mask Device\n192.168.1.1 0x1 0x2 11:22:33:44:55:66 * wlan0\n');
    expect(networkKey(route, arp)).not.toBe(k);
    // No default route of either family (this machine's own IPv6 routes are not this test's: an empty table).
    fs.writeFileSync(route, 'Iface\tDestination\tGateway\tFlags\n');
    const route6 = path.join(dir, 'ipv6_route');
    fs.writeFileSync(route6, '');
    expect(networkKey(route, arp, route6)).toBeNull();
  });
});
