/**
 * The networks dotstub remembers, through the control API (issue 21, item 3):
 * listed with the one we're on marked; the local-names choice editable per
 * network (on the network we're on it applies to the next query at once);
 * "Forget this network"; bad input a 400 with a sentence and nothing
 * changed; and the choices go out and come back with a settings export.
 * A real proxy and a real unbound; the OS is read from the test's own files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, onTestFinished, test } from 'vitest';
import { UdpClient } from '../../test-support/dns-client.js';
import { apiClient, startControl } from '../../test-support/control-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import type { NetworksView, RememberedNetworkView, SettingsExport, TimelineEvent } from './api-types.js';

let upstream: UnboundServer;
beforeAll(async () => {
  upstream = await startUnbound({ names: 5 });
});
afterAll(async () => {
  await upstream?.stop();
});

async function rig() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-networks-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'resolv.conf'), 'nameserver 10.99.0.1\nsearch lan\n');
  const file = path.join(dir, 'networks.json');
  // Remembered before this run: a café where 853 was dropped, and an office.
  fs.writeFileSync(file, JSON.stringify({ version: 1, networks: {
    cafe0000000000000000000000000000: { label: 'gateway 10.1.1.1', worked: 'doh', port853: { kind: 'dropped', classification: 'NET_DROPPED', at: '2026-11-20T10:00:00.000Z' }, rttMs: 41.5, rewritesDns: { seenAt: '2026-11-20T10:00:01.000Z', answeredWith: 'NXDOMAIN', asked: '2001:db8::1' }, dnsCheckedAt: '2026-11-20T10:00:01.000Z', seenAt: '2026-11-20T10:00:00.000Z', firstSeenAt: '2026-11-01T10:00:00.000Z' },
    '0ff1ce00000000000000000000000000': { label: 'gateway 10.2.2.1', worked: 'dot', localNames: 'deny', localDomains: ['corp.example'], seenAt: '2026-11-21T10:00:00.000Z' },
  } }));
  // Strict mode's sign-in answers, in their own file: the café's sign-in was allowed, the office's declined.
  const consent = path.join(dir, 'captive-consent.json');
  fs.writeFileSync(consent, JSON.stringify({ version: 1, networks: { cafe0000000000000000000000000000: 'allow', '0ff1ce00000000000000000000000000': 'decline' } }));
  const none = path.join(dir, 'none');
  // The network we're on; a test moves the machine to another by changing it (and telling the proxy).
  const on = { key: '40e00000000000000000000000000000' };
  const key = () => on.key;
  // Nothing is probed from here: the probes point at a closed port on loopback.
  const closed = 'http://127.0.0.1:9/';
  const h = await startControl({
    resolverArg: upstream.resolverArg,
    overrides: { mode: 'strict' },
    names: { paths: { stateDirs: [], resolvConf: path.join(dir, 'resolv.conf'), resolvedUplink: none, leases: [], resolvconfInterfaces: none }, localNames: 'ask', memoryFile: file, networkKey: key, run: () => Promise.resolve(null) },
    networkMemory: { file, networkKey: key, gateway: () => '192.168.1.1' },
    captive: { probes: { interceptionUrl: closed, checkUrl: closed, capportUrl: null }, networkDns: [], consentFile: consent, networkKey: key },
  });
  onTestFinished(() => h.stop());
  return { h, api: apiClient(h), file, consent, on };
}

/** Waits until this network's first connection is remembered (the warm open at start writes it). */
async function settled(file: string, key: string): Promise<void> {
  const end = Date.now() + 5000;
  while ((JSON.parse(fs.readFileSync(file, 'utf8')) as { networks: Record<string, { worked?: string }> }).networks[key]?.worked !== 'dot') {
    if (Date.now() > end) throw new Error('the first connection was not remembered');
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('GET lists every remembered network, this one marked, most recently seen first, with what worked there', async () => {
  const { api, file } = await rig();
  // As the other tests here: once the first connection on this network is remembered ("what worked there").
  await settled(file, '40e00000000000000000000000000000');
  const v = (await api.get('/api/networks')).json<NetworksView>();
  // The control harness turns no network check on: the view says so rather than implying one ran.
  expect(v).toMatchObject({ remembering: true, max: 50, dnsCheck: 'off' });
  expect(v.networks.map((n) => [n.label, n.current])).toEqual([['gateway 192.168.1.1', true], ['gateway 10.2.2.1', false], ['gateway 10.1.1.1', false]]);
  expect(v.networks[2]).toMatchObject({ worked: 'doh', port853: { kind: 'dropped' }, rttMs: 41.5, localNames: 'ask', rewritesDns: { answeredWith: 'NXDOMAIN', asked: '2001:db8::1' }, dnsCheckedAt: '2026-11-20T10:00:01.000Z' });
  expect(v.networks[1]).toMatchObject({ worked: 'dot', port853: null, localNames: 'deny', localDomains: ['corp.example'], rewritesDns: null, dnsCheckedAt: null });
});

test("PUT changes one network's local-names choice; on this network the name router applies it at once; bad input is a 400 that changes nothing", async () => {
  const { h, api, file } = await rig();
  const c = await UdpClient.open(h.dnsPort);
  onTestFinished(() => c.close());
  const home = '40e00000000000000000000000000000';
  await settled(file, home);
  const before = fs.readFileSync(file, 'utf8');
  for (const [body, field] of [[{ localNames: 'yes' }, 'localNames'], [{}, 'localNames'], [{ localNames: 'allow', label: 'mine' }, 'label']] as const) {
    const r = await api.put(`/api/networks/${home}`, body);
    expect(r.status).toBe(400);
    const error = r.json<{ error: { code: string; field: string; message: string; fields: Record<string, string> } }>().error;
    expect(error).toMatchObject({ code: 'validation', field });
    expect(error.fields[field]).toMatch(/nothing was changed$/);
  }
  const unknown = await api.put('/api/networks/nope0000000000000000000000000000', { localNames: 'allow' });
  expect([unknown.status, unknown.json<{ error: { code: string } }>().error.code]).toEqual([404, 'unknown_network']);
  const badKey = await api.put('/api/networks/..%2Fetc', { localNames: 'allow' });
  expect([badKey.status, badKey.json<{ error: { code: string; field: string } }>().error]).toMatchObject([400, { code: 'validation', field: 'key' }]);
  expect(fs.readFileSync(file, 'utf8')).toBe(before);

  // Strict, not decided here: a local name is refused; allowed: it goes to the link (unreachable 10.99.0.1 here: not a refusal any more).
  expect((await c.query('printer.lan', { timeoutMs: 5000 })).rcode).toBe('SERVFAIL');
  const allowed = await api.put(`/api/networks/${home}`, { localNames: 'allow' });
  expect(allowed.json<RememberedNetworkView>()).toMatchObject({ current: true, localNames: 'allow' });
  expect(h.proxy.routing?.view().policy).toBe('allow');
  const office = await api.put('/api/networks/0ff1ce00000000000000000000000000', { localNames: 'ask' });
  expect(office.json<RememberedNetworkView>().localNames).toBe('ask');
  expect(JSON.parse(fs.readFileSync(file, 'utf8')).networks['0ff1ce00000000000000000000000000'].localNames).toBeUndefined();
});

/** What the network's resolver designated when asked, as the check writes it: the test's unbound, under its own name. */
function offeredHere(file: string, key: string): void {
  const all = JSON.parse(fs.readFileSync(file, 'utf8')) as { version: 1; networks: Record<string, object> };
  const offer = { name: 'dns.test', protocol: 'dot', port: upstream.port, addresses: ['127.0.0.1'], verifiedFor: '127.0.0.1' };
  all.networks[key] = { ...all.networks[key], ddr: { checkedAt: '2026-12-01T10:00:00.000Z', asked: '127.0.0.1', detail: 'dns.test verified for 127.0.0.1', offer } };
  fs.writeFileSync(file, JSON.stringify(all));
}

test("PUT { ownResolver }: 'use' takes the network's verified offer on this network at once, 'ask' goes back to the user's own; no offer, a bad value or two choices at once is a 400 that changes nothing", async () => {
  const { h, api, file } = await rig();
  const home = '40e00000000000000000000000000000';
  await settled(file, home);
  const userOwn = h.proxy.resolver.id;
  offeredHere(file, home);
  const listed = (await api.get('/api/networks')).json<NetworksView>().networks.find((n) => n.current);
  expect(listed?.ownResolver).toMatchObject({ offer: { name: 'dns.test', verifiedFor: '127.0.0.1', dohUrl: null }, rejected: null, choice: 'ask', inUse: false });
  // An offer is only an offer: nothing switched.
  expect(h.proxy.resolver.id).toBe(userOwn);

  const before = fs.readFileSync(file, 'utf8');
  for (const [key, body, field] of [
    [home, { ownResolver: 'yes' }, 'ownResolver'],
    [home, { ownResolver: 'use', localNames: 'allow' }, 'ownResolver'],
    ['0ff1ce00000000000000000000000000', { ownResolver: 'use' }, 'ownResolver'],
  ] as const) {
    const r = await api.put(`/api/networks/${key}`, body);
    expect(r.status).toBe(400);
    const error = r.json<{ error: { code: string; field: string; fields: Record<string, string> } }>().error;
    expect(error).toMatchObject({ code: 'validation', field });
    expect(error.fields[field]).toMatch(/nothing was changed$/);
  }
  expect(fs.readFileSync(file, 'utf8')).toBe(before);
  expect(h.proxy.resolver.id).toBe(userOwn);

  const used = await api.put(`/api/networks/${home}`, { ownResolver: 'use' });
  expect(used.status).toBe(200);
  expect(h.proxy.resolver).toMatchObject({ id: 'network:dns.test', addresses: ['127.0.0.1'], port: upstream.port, authName: 'dns.test' });
  expect(used.json<RememberedNetworkView>().ownResolver).toMatchObject({ choice: 'use', inUse: true });
  const c = await UdpClient.open(h.dnsPort);
  onTestFinished(() => c.close());
  expect((await c.query('n1.test', { timeoutMs: 5000 })).rcode).toBe('NOERROR');
  expect(h.proxy.choice.chosen.id).toBe(userOwn);

  const back = await api.put(`/api/networks/${home}`, { ownResolver: 'ask' });
  expect(back.json<RememberedNetworkView>().ownResolver).toMatchObject({ choice: 'ask', inUse: false });
  expect(h.proxy.resolver.id).toBe(userOwn);
  // Both switches are said on the timeline, as the user's choice for this network: never a silent one.
  const said = (await api.get('/api/events/recent')).json<TimelineEvent[]>().filter((e) => e.kind === 'resolver');
  expect(said).toMatchObject([
    { from: userOwn, to: 'network:dns.test', networkChoice: true, reason: "Now using dns.test (this network's own), as you chose for this network" },
    { from: 'network:dns.test', to: userOwn, networkChoice: true },
  ]);
});

test("a resolver picked (the tray, the Resolvers page) while this network's own is in use runs here now; the network's choice is kept: its card still says so, another choice made meanwhile doesn't undo the pick, and joining the network again goes back to its own", async () => {
  const { h, api, file } = await rig();
  const home = '40e00000000000000000000000000000';
  await settled(file, home);
  const userOwn = h.proxy.resolver.id;
  offeredHere(file, home);
  expect((await api.put(`/api/networks/${home}`, { ownResolver: 'use' })).status).toBe(200);
  expect(h.proxy.resolver.id).toBe('network:dns.test');

  expect((await api.put('/api/resolvers/active', { id: userOwn })).status).toBe(200);
  expect(h.proxy.resolver.id).toBe(userOwn);
  const card = (await api.get('/api/networks')).json<NetworksView>().networks.find((n) => n.current)?.ownResolver;
  expect(card).toMatchObject({ choice: 'use', inUse: false });
  expect((await api.put(`/api/networks/${home}`, { localNames: 'deny' })).status).toBe(200);
  expect(h.proxy.resolver.id).toBe(userOwn);

  // Joining this network again: its own, as the Resolvers page said it would.
  h.proxy.networkChanged({ reason: 'route', sentence: 'the default route changed' });
  expect(h.proxy.resolver.id).toBe('network:dns.test');
  expect(h.proxy.choice.chosen.id).toBe(userOwn);
  // "Use it on this network" again on the same join, after another pick: it runs again at once.
  expect((await api.put('/api/resolvers/active', { id: userOwn })).status).toBe(200);
  expect(h.proxy.resolver.id).toBe(userOwn);
  expect((await api.put(`/api/networks/${home}`, { ownResolver: 'use' })).json<RememberedNetworkView>().ownResolver).toMatchObject({ choice: 'use', inUse: true });
  expect(h.proxy.resolver.id).toBe('network:dns.test');
});

test('DELETE forgets a network (404 the second time); on this network its choice stops applying at once; its sign-in answer goes too', async () => {
  const { h, api, consent } = await rig();
  const answers = (): Record<string, string> => (JSON.parse(fs.readFileSync(consent, 'utf8')) as { networks: Record<string, string> }).networks;
  const home = '40e00000000000000000000000000000';
  await api.put(`/api/networks/${home}`, { localNames: 'allow' });
  expect((await api.del('/api/networks/cafe0000000000000000000000000000')).status).toBe(204);
  const again = await api.del('/api/networks/cafe0000000000000000000000000000');
  expect([again.status, again.json<{ error: { code: string } }>().error.code]).toEqual([404, 'unknown_network']);
  expect((await api.del(`/api/networks/${home}`)).status).toBe(204);
  expect(h.proxy.routing?.view().policy).toBe('ask');
  expect((await api.get('/api/networks')).json<NetworksView>().networks.map((n) => n.key)).not.toContain('cafe0000000000000000000000000000');
  // "Forget everything about it?": the strict-mode sign-in answer was part of it; another network's answer stays.
  expect(answers()).toEqual({ '0ff1ce00000000000000000000000000': 'decline' });
});

test('the settings export carries the networks’ choices; an import brings them back; a file that is not an export is a 400 that changes nothing', async () => {
  const { api, file } = await rig();
  await api.put('/api/networks/cafe0000000000000000000000000000', { localNames: 'allow' });
  const exported = await api.get('/api/settings/export');
  expect(exported.status).toBe(200);
  expect(exported.headers['content-disposition']).toMatch(/attachment; filename="dotstub-settings-.*\.json"/);
  const body = exported.json<SettingsExport>();
  expect(body).toMatchObject({ dotstub: 'settings', version: 1, settings: { mode: 'strict' } });
  expect(body.networks).toEqual([
    { key: '0ff1ce00000000000000000000000000', label: 'gateway 10.2.2.1', localNames: 'deny' },
    { key: 'cafe0000000000000000000000000000', label: 'gateway 10.1.1.1', localNames: 'allow' },
  ]);

  // Elsewhere (or after forgetting them): the import brings the choices back.
  await api.del('/api/networks/cafe0000000000000000000000000000');
  await api.put('/api/networks/0ff1ce00000000000000000000000000', { localNames: 'ask' });
  await settled(file, '40e00000000000000000000000000000');
  const before = fs.readFileSync(file, 'utf8');
  for (const bad of [{ ...body, dotstub: 'other' }, { ...body, networks: [{ key: '../x', localNames: 'allow' }] }, { ...body, networks: [{ key: 'k', localNames: 'sometimes' }] }, { ...body, settings: { padding: 'maybe' } }]) {
    const r = await api.post('/api/settings/import', bad);
    expect(r.status).toBe(400);
    expect(r.json<{ error: { message: string } }>().error.message).toMatch(/nothing was changed|must be/);
  }
  expect(fs.readFileSync(file, 'utf8')).toBe(before);
  const imported = await api.post('/api/settings/import', body);
  expect(imported.status).toBe(200);
  // The office was seen here: its choice applies. The café was forgotten: its choice waits for it, unlisted.
  expect(imported.json<{ networks: number; waiting: number }>()).toMatchObject({ networks: 1, waiting: 1 });
  const v = (await api.get('/api/networks')).json<NetworksView>();
  expect(v.networks.find((n) => n.key === 'cafe0000000000000000000000000000')).toBeUndefined();
  expect(v.waiting).toBe(1);
  expect(v.networks.find((n) => n.key === '0ff1ce00000000000000000000000000')?.localNames).toBe('deny');
});

test('an import naming a network this machine has never been on (a made-up key) creates no network: the choice waits, unlisted, until the machine joins it', async () => {
  const { h, api, on } = await rig();
  const body = (await api.get('/api/settings/export')).json<SettingsExport>();
  const ghost = '0123456789abcdef0123456789abcdef';
  const before = (await api.get('/api/networks')).json<NetworksView>().networks.map((n) => n.key);
  const r = await api.post('/api/settings/import', { ...body, networks: [...body.networks, { key: ghost, label: 'gateway 192.0.2.1', localNames: 'allow' }] });
  expect(r.status).toBe(200);
  expect(r.json<{ waiting: number }>().waiting).toBe(1);
  const after = (await api.get('/api/networks')).json<NetworksView>();
  expect(after.networks.map((n) => n.key)).toEqual(before);
  expect(JSON.stringify(after)).not.toContain('192.0.2.1');
  expect(after.waiting).toBe(1);
  // A key that isn't one dotstub makes is bad input: a 400 that changes nothing.
  const bad = await api.post('/api/settings/import', { ...body, networks: [{ key: 'ghost-network-of-mine', localNames: 'allow' }] });
  expect([bad.status, bad.json<{ error: { message: string } }>().error.message]).toEqual([400, expect.stringContaining('nothing was changed') as string]);

  // The day the machine joins that network, it is a network like any other, with the imported choice.
  on.key = ghost;
  h.proxy.networkChanged({ reason: 'route', sentence: 'the default route changed' });
  await expect.poll(async () => (await api.get('/api/networks')).json<NetworksView>().networks.find((n) => n.key === ghost), { timeout: 5000 }).toMatchObject({ current: true, localNames: 'allow' });
  expect((await api.get('/api/networks')).json<NetworksView>().waiting).toBe(0);
});

test("a restart on a remembered network: its local-names choice applies from the first query, with the network's key known to the proxy alone (as on a real machine: routing is given no key of its own)", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-networks-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'resolv.conf'), 'nameserver 10.99.0.1\nsearch lan\n');
  const file = path.join(dir, 'networks.json');
  const home = '40e00000000000000000000000000000';
  // Allowed here in an earlier run.
  fs.writeFileSync(file, JSON.stringify({ version: 1, networks: { [home]: { label: 'gateway 192.168.1.1', worked: 'dot', localNames: 'allow', localDomains: ['lan'], seenAt: '2026-11-20T10:00:00.000Z' } } }));
  const none = path.join(dir, 'none');
  const h = await startControl({
    resolverArg: upstream.resolverArg,
    overrides: { mode: 'strict' },
    names: { paths: { stateDirs: [], resolvConf: path.join(dir, 'resolv.conf'), resolvedUplink: none, leases: [], resolvconfInterfaces: none }, localNames: 'ask', memoryFile: file, run: () => Promise.resolve(null) },
    networkMemory: { file, networkKey: () => home, gateway: () => '192.168.1.1' },
  });
  onTestFinished(() => h.stop());
  const api = apiClient(h);
  expect((await api.get('/api/network/local-names')).json()).toMatchObject({ knownNetwork: true, policy: 'allow', remembered: true });
});
