/**
 * The captive portal through the control API, as the dashboard and the tray
 * use it: the status carries the portal and the exception, POST /api/captive
 * answers strict mode's question (with the token and the dashboard's own
 * Origin, like every state change), and the timeline tells the story.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import http from 'node:http';
import type { ApiError, SignInView, StatusView, TimelineEvent } from './api-types.js';
import { apiClient, rawRequest, startControl, type ControlHarness } from '../../test-support/control-harness.js';
import { startFakePortal, startHotspotDns, emptyDiscoveryPaths, type FakePortal, type HotspotDns } from '../../test-support/fake-portal.js';
import { firstA, UdpClient } from '../../test-support/dns-client.js';
import { waitForState } from '../../test-support/proxy-harness.js';
import { freePort } from '../../test-support/unbound.js';

describe('POST /api/captive', () => {
  let h: ControlHarness;
  let dns: HotspotDns;
  let portal: FakePortal;
  let client: UdpClient;

  beforeAll(async () => {
    dns = await startHotspotDns();
    portal = await startFakePortal({ host: '127.0.0.1', port: 0, loginHost: 'login.hotspot.test' });
    h = await startControl({
      resolverArg: `127.0.0.1:${await freePort()}#dns.test`,
      forceResolver: true,
      overrides: { mode: 'strict' },
      // No connection attempt (so no portal check) before the second test's query:
      // the first test needs a proxy that has not found the portal yet.
      warm: false,
      captive: {
        probes: { interceptionUrl: `http://127.0.0.1:${portal.port}/`, checkUrl: `http://connectivitycheck.gstatic.com:${portal.port}/generate_204`, capportUrl: null },
        networkDns: [`127.0.0.1:${dns.port}`],
        consentFile: null,
        networkKey: () => null,
        paths: emptyDiscoveryPaths(),
      },
    });
    client = await UdpClient.open(h.dnsPort);
  });
  afterAll(async () => {
    client?.close();
    await h?.stop();
    await portal?.close();
    dns?.stop();
  });

  test('nothing to answer while not captive: 409, and a bad body is a validation error', async () => {
    const api = apiClient(h);
    const signIn = await api.get('/api/captive/sign-in');
    expect([signIn.status, signIn.json<ApiError>().error.code]).toEqual([409, 'sign_in_not_allowed']);
    const none = await api.post('/api/captive', { action: 'allow' });
    expect([none.status, none.json<ApiError>().error.code]).toEqual([409, 'captive_nothing_to_do']);
    const bad = await api.post('/api/captive', { action: 'open-sesame', remember: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.json<ApiError>().error).toMatchObject({ code: 'validation', field: 'action', fieldCodes: { action: 'bad_value', remember: 'wrong_type' } });
  });

  test('strict mode: the status asks, a foreign page cannot answer, the dashboard can; the timeline tells it', async () => {
    const api = apiClient(h);
    await client.query('example.org', { timeoutMs: 4000 });
    await waitForState(h.proxy, 'captive', 5000);
    const s = (await api.get('/api/status')).json<StatusView>();
    expect(s.state).toBe('captive');
    expect(s.captive).toMatchObject({ portalHost: 'login.hotspot.test', exception: 'asking', detectedBy: expect.any(String) });
    expect(s.leaves).toBeTruthy();

    const foreign = await rawRequest(h.url, '/api/captive', { method: 'POST', body: { action: 'allow' }, headers: { authorization: `Bearer ${h.token}`, origin: 'http://evil.example' } });
    expect(foreign.status).toBe(403);
    const anonymous = await rawRequest(h.url, '/api/captive', { method: 'POST', body: { action: 'allow' }, headers: { origin: h.origin } });
    expect(anonymous.status).toBe(401);
    expect((await client.query('login.hotspot.test')).rcode).toBe('SERVFAIL');

    const allowed = await api.post('/api/captive', { action: 'allow', remember: false });
    expect(allowed.status).toBe(200);
    expect(allowed.json<StatusView>().captive?.exception).toBe('active');
    expect(firstA(await client.query('login.hotspot.test'))).toBe('127.0.0.1');
    const extended = await api.post('/api/captive', { action: 'extend' });
    expect(extended.status).toBe(200);
    const c = extended.json<StatusView>().captive;
    expect((c?.expiresAt ?? 0) - Date.now()).toBeGreaterThan(9 * 60_000);

    // The sign-in window's proxy: any host the portal page pulls in resolves through the network (and only there), to the network's addresses only.
    const signIn = (await api.get('/api/captive/sign-in')).json<SignInView>();
    expect(signIn.portalUrl).toMatch(/^http:\/\/login\.hotspot\.test:\d+\/login$/);
    const proxyUrl = new URL(signIn.proxy.url);
    expect(proxyUrl.hostname).toBe('127.0.0.1');
    const viaProxy = (auth: string | null): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: Number(proxyUrl.port),
            method: 'GET',
            path: `http://cdn.hotspot-assets.test:${portal.port}/login`,
            headers: { host: `cdn.hotspot-assets.test:${portal.port}`, ...(auth ? { 'proxy-authorization': `Basic ${Buffer.from(auth).toString('base64')}` } : {}) },
          },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    // Another local program without the credential gets nothing.
    expect((await viaProxy(null)).status).toBe(407);
    expect((await viaProxy('signin:wrong')).status).toBe(407);
    // With it, the name is looked up at the network's resolver; this hotspot's answers are all 127.0.0.1, this
    // machine, which a page of the network never reaches (reaching the network is the sign-in proxy's own test's).
    const page = await viaProxy(`${signIn.proxy.username}:${signIn.proxy.password}`);
    expect(dns.asked).toContain('cdn.hotspot-assets.test a');
    expect([page.status, page.body]).toEqual([403, expect.stringContaining('127.0.0.1 is this machine (loopback)')]);
    // …but the name is not let through for the rest of the machine.
    expect((await client.query('cdn.hotspot-assets.test')).rcode).toBe('SERVFAIL');

    const events = (await api.get('/api/events/recent')).json<TimelineEvent[]>();
    const story = events.filter((e): e is Extract<TimelineEvent, { kind: 'captive' }> => e.kind === 'captive').map((e) => e.event.type);
    expect(story).toEqual(expect.arrayContaining(['detected', 'asking', 'allowed', 'let-through']));
  });
});
