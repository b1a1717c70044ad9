/**
 * GET/PUT /api/system-dns and POST /api/system-dns/leak-test against the
 * real control server, a real proxy and a real DoT upstream (unbound). The
 * "system" is a copy under a temp root (the machine's own DNS is never
 * touched): the plain resolv.conf backend writes the copy, and the leak
 * test's lookup "through the system" reads that copy as glibc would (its
 * loopback nameservers asked at the test proxy's port; nothing off the
 * machine is ever asked). The real getaddrinfo path runs in the namespace
 * lab tests (system-dns/*-lab.test.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, onTestFinished, test, vi } from 'vitest';
import { apiClient, openStream, rawRequest, startControl, type ControlHarness } from '../../test-support/control-harness.js';
import { waitFor, waitForConnected, waitForState } from '../../test-support/proxy-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { systemHost } from '../system-dns/host.js';
import { SystemDnsManager } from '../system-dns/manager.js';
import { resolvConfLookup } from '../system-dns/os-lookup.js';
import type { LeakView } from '../network/leak-watch.js';
import type { ApiError, StateChange, StatusView, StreamBatch, SystemDnsView, TimelineEvent } from './api-types.js';

// What DHCP wrote: a server off this machine (never asked by the test lookup) and an IPv6 one.
const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\nnameserver fd00:99::1\nsearch lab.test\n';

let unbound: UnboundServer;
beforeAll(async () => {
  unbound = await startUnbound({ names: 10 });
});
afterAll(async () => {
  await unbound?.stop();
});

let h: ControlHarness | undefined;
let root: string;
afterEach(async () => {
  await h?.stop();
  h = undefined;
  fs.rmSync(root, { recursive: true, force: true });
});

function makeRoot(): string {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-sysdns-api-'));
  fs.mkdirSync(path.join(root, 'etc'));
  fs.writeFileSync(path.join(root, 'etc', 'resolv.conf'), ORIGINAL);
  return root;
}

const resolvConf = (): string => fs.readFileSync(path.join(root, 'etc', 'resolv.conf'), 'utf8');
const journalExists = (): boolean => fs.existsSync(path.join(root, 'state', 'system-dns.journal.json'));

async function start(privileged: boolean, routing = false): Promise<{ h: ControlHarness; api: ReturnType<typeof apiClient> }> {
  const r = makeRoot();
  const none = path.join(r, 'none');
  h = await startControl({
    resolverArg: unbound.resolverArg,
    // Routing by name owner reads the same copy (and so does its leak watch); nothing of this machine's is run or read.
    ...(routing
      ? { names: { paths: { stateDirs: [], resolvConf: path.join(r, 'etc', 'resolv.conf'), resolvedUplink: none, leases: [], resolvconfInterfaces: none }, localNames: 'ask' as const, memoryFile: path.join(r, 'networks.json'), networkKey: () => 'test-network', run: () => Promise.resolve(null) } }
      : {}),
    systemDns: async (dnsPort) => {
      const m = new SystemDnsManager({
        host: systemHost(r),
        stateDir: path.join(r, 'state'),
        // The system is pointed at 127.0.0.1:53 (glibc has no port); the lookup reaches this proxy's port.
        port: 53,
        privileged,
        lookup: resolvConfLookup(path.join(r, 'etc', 'resolv.conf'), dnsPort),
        pollMs: 200,
        rewriteStepMs: 50,
      });
      await m.start();
      return m;
    },
  });
  // The upstream connects; the state stays off until the takeover is in force.
  await waitForConnected(h.proxy, 5000);
  return { h, api: apiClient(h) };
}

describe('/api/system-dns', () => {
  test('off until enabled; enable points the system at dotstub and the state turns private; leak test passes; disable gives the file back byte for byte', async () => {
    const { h, api } = await start(true);
    // The upstream is verified, but the system doesn't ask dotstub: the user is told so, and so is anyone who listens
    // to the proxy itself (the CLI's log prints its 'state' events): one state, one owner.
    const before = (await api.get('/api/status')).json<StatusView>();
    expect(before.state).toBe('off');
    expect(before.reason).toMatch(/not enabled for this machine/);
    expect(h.proxy.privacy.state).toMatchObject({ state: 'off', reason: before.reason, since: before.since });
    const told: StateChange[] = [];
    h.proxy.on('state', (e) => told.push(e));
    const view = (await api.get('/api/system-dns')).json<SystemDnsView>();
    expect(view).toMatchObject({ privileged: true, enabled: false, inForce: false, backend: 'resolv.conf', changed: [] });
    expect(view.backendWhy).not.toBe('');

    // Before: the lookup does not reach dotstub, and the result says so in words.
    const leaky = (await api.post('/api/system-dns/leak-test')).json<SystemDnsView>();
    expect(leaky.lastLeakTest?.passed).toBe(false);
    expect(leaky.lastLeakTest?.lines.join('\n')).toMatch(/did NOT reach dotstub/);
    expect(leaky.lastLeakTest?.lines).toContain("Firefox's canary (use-application-dns.net) was NOT answered by dotstub: Firefox may send its lookups to its own DNS-over-HTTPS provider.");

    const enabledAt = Date.now();
    const on = await api.put('/api/system-dns', { enabled: true });
    expect(on.status).toBe(200);
    const enabled = on.json<SystemDnsView>();
    expect(enabled).toMatchObject({ enabled: true, inForce: true, backend: 'resolv.conf' });
    expect(enabled.changed.join('\n')).toContain('resolv.conf');
    expect(enabled.owner).toMatchObject({ pid: process.pid, self: true, alive: true });
    expect(enabled.original.join('\n')).toContain('10.99.0.1');
    expect(resolvConf()).toMatch(/^nameserver 127\.0\.0\.1$/m);
    expect(resolvConf()).not.toContain('fd00:99::1');

    const s = (await api.get('/api/status')).json<StatusView>();
    expect(s.state).toBe('private');
    expect(told).toEqual([expect.objectContaining({ previous: 'off', state: 'private', takeover: { action: 'turned-on' } })]);
    // "Private since": when the machine's DNS became private, not when the proxy's own connection did (issue 24 item 2).
    expect(s.since).toBeGreaterThanOrEqual(enabledAt);
    // The dashboard hears of it through the timeline (a state event refetches the status).
    const events = (await api.get('/api/events/recent')).json<TimelineEvent[]>();
    expect(events.some((e) => e.kind === 'state' && e.event.previous === 'off' && e.event.state === 'private')).toBe(true);

    const tested = (await api.post('/api/system-dns/leak-test')).json<SystemDnsView>();
    expect(tested.lastLeakTest?.arrived).toBe(true);
    expect(tested.lastLeakTest?.passed).toBe(true);
    expect(tested.lastLeakTest?.lines.at(-1)).toBe('Result: no leak found.');
    // DDR and Firefox's canary, looked up through the system, were answered by dotstub itself.
    expect(tested.lastLeakTest?.local).toEqual([
      { name: '_dns.resolver.arpa', answeredLocally: true },
      { name: 'use-application-dns.net', answeredLocally: true },
    ]);
    expect(tested.lastLeakTest?.lines).toContain('Encrypted-resolver discovery (_dns.resolver.arpa) was answered by dotstub itself.');

    const disabledAt = Date.now();
    const off = await api.put('/api/system-dns', { enabled: false });
    expect(off.status).toBe(200);
    expect(off.json<SystemDnsView>()).toMatchObject({ enabled: false, inForce: false, changed: [] });
    expect(resolvConf()).toBe(ORIGINAL);
    expect(journalExists()).toBe(false);
    const after = (await api.get('/api/status')).json<StatusView>();
    expect(after.state).toBe('off');
    // "Off since": the disable, not the start.
    expect(after.since).toBeGreaterThanOrEqual(disabledAt);
    // Disabling again is nothing to do, not an error.
    expect((await api.put('/api/system-dns', { enabled: false })).status).toBe(200);
    expect(resolvConf()).toBe(ORIGINAL);
  });

  test('pause for a while: the old DNS is back at once, the state says until when, and private DNS returns by itself', async () => {
    const { api } = await start(true);
    expect((await api.put('/api/system-dns', { enabled: true, pauseSeconds: 2 })).status).toBe(400);
    expect((await api.put('/api/system-dns', { enabled: false, pauseSeconds: 2 })).status).toBe(409);
    expect((await api.put('/api/system-dns', { enabled: true })).status).toBe(200);
    expect((await api.put('/api/system-dns', { enabled: false, pauseSeconds: 0 })).status).toBe(400);
    const paused = await api.put('/api/system-dns', { enabled: false, pauseSeconds: 2 });
    expect(paused.status).toBe(200);
    const view = paused.json<SystemDnsView>();
    expect(view.pausedUntil).toBeGreaterThan(Date.now());
    expect(view.reason).toMatch(/^paused until \d\d:\d\d: this machine asks its usual resolver, unencrypted/);
    expect(resolvConf()).toBe(ORIGINAL);
    const status = (await api.get('/api/status')).json<StatusView>();
    expect(status.state).toBe('off');
    expect(status.reason).toMatch(/paused until/);
    await waitFor(() => /^nameserver 127\.0\.0\.1$/m.test(resolvConf()), 6000);
    const back = (await api.get('/api/system-dns')).json<SystemDnsView>();
    expect(back).toMatchObject({ inForce: true, pausedUntil: null });
    expect((await api.get('/api/status')).json<StatusView>().state).toBe('private');
    // Disabling during a pause ends it: nothing comes back by itself afterwards. The pause's timer is on a
    // fake clock that otherwise keeps real time: running it past the pause's end says so at once.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
    onTestFinished(() => void vi.useRealTimers());
    await api.put('/api/system-dns', { enabled: false, pauseSeconds: 1 });
    expect((await api.put('/api/system-dns', { enabled: false })).status).toBe(200);
    await vi.advanceTimersByTimeAsync(1500);
    expect((await api.get('/api/system-dns')).json<SystemDnsView>()).toMatchObject({ enabled: false, pausedUntil: null });
    expect(resolvConf()).toBe(ORIGINAL);
  });

  test('a DHCP renewal rewriting the file is caught and put back; quitting (stop) gives the old DNS back', async () => {
    const { h, api } = await start(true);
    expect((await api.put('/api/system-dns', { enabled: true })).status).toBe(200);
    fs.writeFileSync(path.join(root, 'etc', 'resolv.conf'), '# Generated by dhclient\nnameserver 10.99.0.1\n');
    await waitFor(() => /^nameserver 127\.0\.0\.1$/m.test(resolvConf()), 5000);
    expect((await api.get('/api/system-dns')).json<SystemDnsView>().inForce).toBe(true);
    await h.stop();
    expect(resolvConf()).toBe(ORIGINAL);
    expect(journalExists()).toBe(false);
  });

  test('the leak line follows the takeover at once: the PUT\'s answer, the GET after it and a pushed batch carry the clean reading (not the one from before, for 15 s)', async () => {
    const { api } = await start(true, true);
    const stream = await openStream(h as ControlHarness);
    onTestFinished(() => stream.close());
    const before = (await api.get('/api/status')).json<StatusView>().leaks;
    expect(before).toMatchObject({ measured: true, cleanSince: null });
    expect(before.paths.map((p) => p.what)).toEqual(['nameserver 10.99.0.1', 'nameserver fd00:99::1']);

    const seen = stream.events.length;
    const enabledAt = Date.now();
    expect((await api.put('/api/system-dns', { enabled: true })).status).toBe(200);
    // The GET right after the PUT: what the page reads when the PUT answers.
    const after = (await api.get('/api/status')).json<StatusView>().leaks;
    expect(after).toMatchObject({ measured: true, paths: [] });
    expect(after.checkedAt).toBeGreaterThanOrEqual(enabledAt);
    // And the stream pushes it, without waiting for its 15 s refresh.
    const clean = (): LeakView | undefined =>
      stream.events
        .slice(seen)
        .map((e) => (JSON.parse(e.data) as StreamBatch).views?.status?.leaks)
        .find((l) => l !== undefined && l.measured && l.paths.length === 0 && l.cleanSince !== null);
    await waitFor(() => clean() !== undefined, 2000, 'a batch with the clean leak reading within 2 s of Enable');
    expect(clean()?.cleanSince).toBeGreaterThanOrEqual(enabledAt);

    // Turned off: the paths are back in the next batch, also at once.
    const offAt = stream.events.length;
    expect((await api.put('/api/system-dns', { enabled: false })).status).toBe(200);
    expect((await api.get('/api/status')).json<StatusView>().leaks.paths.length).toBe(2);
    await waitFor(
      () => stream.events.slice(offAt).some((e) => ((JSON.parse(e.data) as StreamBatch).views?.status?.leaks.paths.length ?? 0) === 2),
      2000,
      'a batch with the paths back within 2 s of turning it off',
    );
  });

  test('bad input, a foreign Origin and no token change nothing', async () => {
    const { h, api } = await start(true);
    const bodies: [unknown, Record<string, string>][] = [
      [{ enabled: 'yes' }, { enabled: 'wrong_type' }],
      [{}, { enabled: 'required' }],
      [{ enabled: true, backend: 'x' }, { backend: 'unknown_field' }],
      [{ enabled: true, pauseSeconds: 60 }, { pauseSeconds: 'bad_value' }],
      [{ enabled: false, pauseSeconds: 0 }, { pauseSeconds: 'out_of_range' }],
      [null, { '(body)': 'wrong_type' }],
    ];
    for (const [body, fieldCodes] of bodies) {
      const r = await api.put('/api/system-dns', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json<ApiError>().error, JSON.stringify(body)).toMatchObject({ code: 'validation', fieldCodes });
    }
    const foreign = await rawRequest(h.url, '/api/system-dns', { method: 'PUT', headers: { authorization: `Bearer ${h.token}`, origin: 'http://evil.example' }, body: { enabled: true } });
    expect(foreign.status).toBe(403);
    expect(foreign.json<ApiError>().error.code).toBe('forbidden_origin');
    const noOrigin = await rawRequest(h.url, '/api/system-dns', { method: 'PUT', headers: { authorization: `Bearer ${h.token}` }, body: { enabled: true } });
    expect(noOrigin.status).toBe(403);
    const badHost = await rawRequest(h.url, '/api/system-dns', { method: 'PUT', headers: { authorization: `Bearer ${h.token}`, host: 'evil.example', origin: h.origin }, body: { enabled: true } });
    expect(badHost.status).toBe(403);
    expect(badHost.json<ApiError>().error.code).toBe('bad_host');
    const noToken = await rawRequest(h.url, '/api/system-dns', { method: 'PUT', headers: { origin: h.origin }, body: { enabled: true } });
    expect(noToken.status).toBe(401);
    const leakFromPage = await rawRequest(h.url, '/api/system-dns/leak-test', { method: 'POST', headers: { authorization: `Bearer ${h.token}`, origin: 'http://evil.example' } });
    expect(leakFromPage.status).toBe(403);
    expect(resolvConf()).toBe(ORIGINAL);
    expect(journalExists()).toBe(false);
    expect((await api.get('/api/system-dns')).json<SystemDnsView>().enabled).toBe(false);
  });

  test('without privileges: a clear error, nothing changed', async () => {
    const { api } = await start(false);
    const view = (await api.get('/api/system-dns')).json<SystemDnsView>();
    expect(view.privileged).toBe(false);
    expect(view.privilegeNote).toMatch(/^needs root: run with sudo, or install the service/);
    const r = await api.put('/api/system-dns', { enabled: true });
    expect(r.status).toBe(403);
    expect(r.json<ApiError>().error).toMatchObject({ code: 'needs_root' });
    expect(r.json<ApiError>().error.hint).toMatch(/sudo/);
    expect(resolvConf()).toBe(ORIGINAL);
    expect(journalExists()).toBe(false);
    expect((await api.get('/api/status')).json<StatusView>().state).toBe('off');
  });
});

test('a dotstub that does not manage system DNS says how to get it, and its state is its own', async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-sysdns-api-'));
  h = await startControl({ resolverArg: unbound.resolverArg });
  await waitForState(h.proxy, 'private', 5000);
  const api = apiClient(h);
  const r = await api.get('/api/system-dns');
  expect(r.status).toBe(404);
  expect(r.json<ApiError>().error.code).toBe('system_dns_not_managed');
  // What to do is said: start it with --system-dns.
  expect(r.json<ApiError>().error.hint).toMatch(/--system-dns/);
  expect((await api.put('/api/system-dns', { enabled: true })).status).toBe(404);
  expect((await api.get('/api/status')).json<StatusView>().state).toBe('private');
});
