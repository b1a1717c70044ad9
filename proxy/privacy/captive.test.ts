/**
 * Captive portals on loopback, with real servers on real sockets: the
 * hotspot's resolver (test-support/lab-dns-server.mjs, answering every name
 * with the portal's address), its sign-in server (test-support/fake-portal.ts:
 * 302 to its login page until POST /login), Debian's unbound as the private
 * resolver that "comes back" once the user has signed in, and dotstub in
 * between, asked with a real DNS client. The namespace version with a packet
 * capture is captive-lab.test.ts.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { describe, expect, onTestFinished, test } from 'vitest';
import { parseResolverArg } from '../config/resolvers.js';
import { defaultConfig, startDotstub, type CaptiveConfig, type StubProxy } from '../dotstub.js';
import type { QueryRecord } from '../engine/query-record.js';
import { testPki } from '../../test-support/certs.js';
import { firstA, UdpClient } from '../../test-support/dns-client.js';
import { startFakePortal, startHotspotDns, emptyDiscoveryPaths, type FakePortal, type HotspotDns } from '../../test-support/fake-portal.js';
import { waitFor, waitForEvent, waitForState } from '../../test-support/proxy-harness.js';
import { removeOnExit } from '../../test-support/temp.js';
import { freePort, startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import type { CaptiveEvent } from './captive/session.js';

const LOGIN = 'login.hotspot.test';

interface Rig {
  readonly proxy: StubProxy;
  readonly client: UdpClient;
  readonly dns: HotspotDns;
  readonly portal: FakePortal;
  readonly resolverPort: number;
  readonly events: CaptiveEvent[];
  readonly records: QueryRecord[];
  readonly consentFile: string;
}

async function rig(opts: { mode: 'strict' | 'opportunistic'; captive?: Partial<CaptiveConfig>; consentFile?: string; dns?: HotspotDns; portal?: FakePortal }): Promise<Rig> {
  const pki = testPki();
  const dns = opts.dns ?? (await startHotspotDns());
  if (!opts.dns) onTestFinished(() => dns.stop());
  const portal = opts.portal ?? (await startFakePortal({ host: '127.0.0.1', port: 0, loginHost: LOGIN }));
  if (!opts.portal) onTestFinished(() => portal.close());
  // The private resolver's port: nothing listens yet (the hotspot blocks it), unbound starts there after the sign-in.
  const resolverPort = await freePort();
  const consentFile = opts.consentFile ?? path.join(removeOnExit(fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-consent-'))), 'captive-consent.json');
  const captive: CaptiveConfig = {
    probes: {
      interceptionUrl: `http://127.0.0.1:${portal.port}/`,
      checkUrl: `http://connectivitycheck.gstatic.com:${portal.port}/generate_204`,
      capportUrl: null,
    },
    networkDns: [`127.0.0.1:${dns.port}`],
    consentFile,
    networkKey: () => 'hotspot-under-test',
    paths: emptyDiscoveryPaths(),
    reprobeMs: 300,
    ...opts.captive,
  };
  const { proxy, bound } = await startDotstub(
    defaultConfig(parseResolverArg(`127.0.0.1:${resolverPort}#dns.test`), {
      listen: [{ host: '127.0.0.1', port: 0 }],
      auth: { mode: opts.mode, ca: [pki.caPem] },
      watchNetwork: false,
      captive,
    }),
  );
  onTestFinished(() => proxy.stop(500));
  const client = await UdpClient.open(bound[0]!.port);
  onTestFinished(() => client.close());
  const events: CaptiveEvent[] = [];
  proxy.on('captive', (e) => events.push(e));
  const records: QueryRecord[] = [];
  proxy.on('query', (r) => records.push(r));
  return { proxy, client, dns, portal, resolverPort, events, records, consentFile };
}

function signIn(portal: FakePortal): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: portal.port, method: 'POST', path: '/login', headers: { host: LOGIN } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end('accept=1');
  });
}

async function unboundOn(port: number): Promise<UnboundServer> {
  const u = await startUnbound({ port, localData: [`${LOGIN}. 60 IN A 192.0.2.80`] });
  onTestFinished(() => u.stop());
  return u;
}

describe('captive portal on loopback (opportunistic: no setting touched)', () => {
  test('detected within 5 s; only the sign-in names go out in cleartext; private again by itself after signing in', async () => {
    const r = await rig({ mode: 'opportunistic' });
    const t0 = Date.now();
    // The first query fails (nothing at the resolver's port) and starts the check.
    expect((await r.client.query('example.org', { timeoutMs: 4000 })).rcode).toBe('SERVFAIL');
    await waitForState(r.proxy, 'captive', 5000);
    const detectedAfter = Date.now() - t0;
    expect(detectedAfter).toBeLessThan(5000);
    const view = r.proxy.privacy.captive;
    expect(view?.portalHost).toBe(LOGIN);
    expect(view?.exception).toBe('active');
    expect(view?.allowedNames).toContain(LOGIN);
    expect(r.proxy.privacy.state.reason).toContain(`sign in at ${LOGIN}`);
    expect(r.events.map((e) => e.type)).toEqual(expect.arrayContaining(['detected', 'allowed']));

    // The sign-in page's host resolves — in cleartext, at the hotspot's resolver.
    const login = await r.client.query(LOGIN);
    expect(login.rcode).toBe('NOERROR');
    expect(firstA(login)).toBe('127.0.0.1');
    await waitForEvent(r.proxy, 'query', () => r.records.some((q) => q.name === LOGIN && q.source === 'cleartext'), 2000);
    // Asked again: not from the cache (cleartext answers are never cached).
    await r.client.query(LOGIN);
    await waitForEvent(r.proxy, 'query', () => r.records.filter((q) => q.name === LOGIN && q.source === 'cleartext').length === 2, 2000);
    expect(r.proxy.cacheSize?.entries ?? 0).toBe(0);
    expect(r.events.some((e) => e.type === 'let-through' && e.name === LOGIN)).toBe(true);

    // Any other name: SERVFAIL at once, and the hotspot's resolver never hears of it.
    const other = await r.client.query('private-name.example', { timeoutMs: 2000 });
    expect(other.rcode).toBe('SERVFAIL');
    // At once, not after a deadline (2.5 s).
    expect(other.ms).toBeLessThan(1500);
    expect(r.dns.asked.some((q) => q.startsWith('private-name.example'))).toBe(false);
    expect(r.dns.asked.every((q) => view?.allowedNames.includes(q.split(' ')[0]!))).toBe(true);

    // Sign in; the hotspot opens (unbound answers on the resolver's port): private within 10 s, no setting touched.
    expect(await signIn(r.portal)).toBe(200);
    const signedAt = Date.now();
    await unboundOn(r.resolverPort);
    await waitForState(r.proxy, 'private', 10_000);
    const privateAfter = Date.now() - signedAt;
    expect(privateAfter).toBeLessThan(10_000);
    expect(r.proxy.privacy.captive).toBeNull();
    expect(r.events.some((e) => e.type === 'left' && e.how === 'private')).toBe(true);

    // Afterwards nothing goes to the hotspot's resolver: the login host now comes from the private resolver.
    const before = r.dns.asked.length;
    const again = await r.client.query(LOGIN);
    expect(firstA(again)).toBe('192.0.2.80');
    expect(r.dns.asked.length).toBe(before);
    const last = r.records.filter((q) => q.name === LOGIN).at(-1);
    expect(last?.source).toBe('upstream');
    console.log(`captive timeline: detected after ${detectedAfter} ms, private ${privateAfter} ms after the sign-in; let through: ${r.proxy.privacy.captive?.letThrough ?? [...new Set(r.dns.asked)].join(', ')}`);
  });

  test('a network with no portal where 853 is refused stays "blocked", not captive', async () => {
    // An honest network: nothing intercepts (the interception target refuses), the check answers 204.
    const open = http.createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => open.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => open.close(() => resolve())));
    const port = (open.address() as AddressInfo).port;
    const closed = await freePort();
    const r = await rig({
      mode: 'strict',
      captive: { probes: { interceptionUrl: `http://127.0.0.1:${closed}/`, checkUrl: `http://connectivitycheck.gstatic.com:${port}/generate_204`, capportUrl: null } },
    });
    expect((await r.client.query('example.org', { timeoutMs: 4000 })).rcode).toBe('SERVFAIL');
    await waitForEvent(r.proxy, 'captive', () => r.events.some((e) => e.type === 'checked'), 5000);
    const checked = r.events.find((e) => e.type === 'checked');
    // Strict mode: the check name is not looked up in cleartext to find out (nobody agreed to it), so the
    // verdict is "unknown", said as such; what is certain is what counts: no portal, and not one name asked.
    expect(checked?.type === 'checked' && checked.result).toBe('unknown');
    expect(checked?.sentence).toContain('not looked up (strict mode');
    expect(r.dns.asked).toEqual([]);
    expect(r.proxy.privacy.state.state).toBe('blocked');
    expect(r.proxy.privacy.captive).toBeNull();
    expect(r.proxy.privacy.network?.kind).toBe('refused');
  });
});

describe('captive portal in strict mode: ask first, remember the answer', () => {
  test('nothing in cleartext until "Allow sign-in"; the answer is remembered for the network', async () => {
    const r = await rig({ mode: 'strict' });
    await r.client.query('example.org', { timeoutMs: 4000 });
    await waitForState(r.proxy, 'captive', 5000);
    expect(r.proxy.privacy.captive?.exception).toBe('asking');
    expect(r.proxy.privacy.state.reason).toContain('Strict mode');
    const held = await r.client.query(LOGIN);
    expect(held.rcode).toBe('SERVFAIL');
    // Let the question stand through several re-probes (every 300 ms here): three more at the portal.
    const probed = r.portal.requests.length;
    await waitFor(() => r.portal.requests.length >= probed + 3, 5000, 'three re-probes');
    // Before the user answers, not one name was asked in cleartext: the portal was found without DNS.
    expect(r.dns.asked).toEqual([]);

    expect(r.proxy.privacy.captiveAction('allow', true)).toBe(true);
    expect(r.proxy.privacy.captive?.exception).toBe('active');
    expect(firstA(await r.client.query(LOGIN))).toBe('127.0.0.1');
    expect(JSON.parse(fs.readFileSync(r.consentFile, 'utf8'))).toEqual({ version: 1, networks: { 'hotspot-under-test': 'allow' } });
    await r.proxy.stop(200);

    // Back on the same network later: no question this time.
    const again = await rig({ mode: 'strict', consentFile: r.consentFile, dns: r.dns, portal: r.portal });
    await again.client.query('example.org', { timeoutMs: 4000 });
    await waitForState(again.proxy, 'captive', 5000);
    expect(again.proxy.privacy.captive?.exception).toBe('active');
    expect(again.events.some((e) => e.type === 'allowed' && e.remembered)).toBe(true);
  });

  test('"Not now" keeps every name off the network; extending is refused without an active exception', async () => {
    const r = await rig({ mode: 'strict' });
    await r.client.query('example.org', { timeoutMs: 4000 });
    await waitForState(r.proxy, 'captive', 5000);
    expect(r.proxy.privacy.captiveAction('decline', false)).toBe(true);
    expect(r.proxy.privacy.captive?.exception).toBe('declined');
    expect(r.proxy.privacy.captiveAction('extend')).toBe(false);
    expect((await r.client.query(LOGIN)).rcode).toBe('SERVFAIL');
    expect(r.dns.asked).toEqual([]);
    expect(fs.existsSync(r.consentFile)).toBe(false);
  });
});

describe('captive portal declared by an RFC 8908 CAPPORT API', () => {
  test('the API (HTTPS, captive+json) names the portal; its hosts are let through', async () => {
    const pki = testPki();
    const api = https.createServer({ key: pki.serverKey, cert: pki.serverCert }, (req, res) => {
      res.writeHead(200, { 'content-type': 'application/captive+json', 'cache-control': 'private' });
      res.end(JSON.stringify({ captive: true, 'user-portal-url': 'https://portal.hotspot.test/welcome', 'venue-info-url': 'https://venue.hotspot.test/' }));
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => api.close(() => resolve())));
    const closed = await freePort();
    const r = await rig({
      mode: 'opportunistic',
      captive: {
        probes: {
          interceptionUrl: `http://127.0.0.1:${closed}/`,
          checkUrl: `http://connectivitycheck.gstatic.com:${closed}/generate_204`,
          capportUrl: `https://dns.test:${(api.address() as AddressInfo).port}/capport`,
          ca: [pki.caPem],
        },
      },
    });
    await r.client.query('example.org', { timeoutMs: 4000 });
    await waitForState(r.proxy, 'captive', 5000);
    const view = r.proxy.privacy.captive;
    expect(view?.detectedBy).toBe('capport');
    expect(view?.portalUrl).toBe('https://portal.hotspot.test/welcome');
    expect(view?.allowedNames).toEqual(expect.arrayContaining(['portal.hotspot.test', 'venue.hotspot.test', 'dns.test']));
    expect(firstA(await r.client.query('portal.hotspot.test'))).toBe('127.0.0.1');
  });
});
