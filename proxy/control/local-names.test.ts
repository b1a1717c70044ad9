/**
 * The local-names choice through the control API (issue 21): the Network
 * view reads which names the network's links own and where they go, and the
 * user allows or refuses them for this network, remembered for it. The OS
 * is read from the test's own files; the link's resolver (10.99.0.1, never
 * reached from here) is only named: that an allowed name really goes there
 * is proxy/network/name-routing-lab.test.ts's, in namespaces.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, onTestFinished, test } from 'vitest';
import { UdpClient } from '../../test-support/dns-client.js';
import { apiClient, startControl } from '../../test-support/control-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { runCtl } from '../cli/ctl.js';
import type { LocalNamesView } from './api-types.js';

let upstream: UnboundServer;
beforeAll(async () => {
  upstream = await startUnbound({ names: 5 });
});
afterAll(async () => {
  await upstream?.stop();
});

test('the network view lists what the link owns and the choice for this network; allow and refuse are remembered; strict refuses local names until allowed; bad input changes nothing', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-local-names-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'resolv.conf'), 'nameserver 10.99.0.1\nsearch lan\n');
  const none = path.join(dir, 'none');
  const sock = path.join(dir, 'control.sock');
  const h = await startControl({
    resolverArg: upstream.resolverArg,
    socket: { path: sock },
    overrides: { mode: 'strict' },
    names: {
      paths: { stateDirs: [], resolvConf: path.join(dir, 'resolv.conf'), resolvedUplink: none, leases: [], resolvconfInterfaces: none },
      localNames: 'ask',
      memoryFile: path.join(dir, 'networks.json'),
      networkKey: () => 'test-network',
      run: () => Promise.resolve(null),
    },
  });
  onTestFinished(() => h.stop());
  const api = apiClient(h);
  const c = await UdpClient.open(h.dnsPort);
  onTestFinished(() => c.close());

  const view = (await api.get('/api/network/local-names')).json<LocalNamesView>();
  expect(view).toMatchObject({ knownNetwork: true, policy: 'ask', remembered: false, firstRefused: null });
  expect(view.owners.find((o) => o.suffix === 'lan')?.servers).toEqual(['10.99.0.1']);
  // Strict, nobody asked yet: refused, not sent; the view names the first name refused on this network (what the tray asks about).
  const before = Date.now();
  expect((await c.query('printer.lan', { timeoutMs: 5000 })).rcode).toBe('SERVFAIL');
  expect((await c.query('NAS.lan', { timeoutMs: 5000 })).rcode).toBe('SERVFAIL');
  const refused = (await api.get('/api/network/local-names')).json<LocalNamesView>().firstRefused;
  expect(refused).toMatchObject({ name: 'printer.lan', suffix: 'lan' });
  expect(refused?.at).toBeGreaterThanOrEqual(before);

  expect((await api.put('/api/network/local-names', { allow: 'yes' })).status).toBe(400);
  expect((await api.get('/api/network/local-names')).json<LocalNamesView>().policy).toBe('ask');

  // Not decided yet, in the dashboard's words (renderer/src/components/LocalNames.tsx): both modes said, as both apply.
  const undecided: string[] = [];
  expect(await runCtl(['local-names', '--socket', sock], { out: (l) => undecided.push(l), err: (l) => undecided.push(l) })).toBe(0);
  expect(undecided.join('\n')).toMatch(/^local names on this network: not decided for this network yet: in strict mode they get an error until you allow them; in opportunistic mode they go to the network’s resolver\n/);

  const allowed = await api.put('/api/network/local-names', { allow: true });
  expect(allowed.status).toBe(200);
  // Answered: nothing is waiting for a choice any more.
  expect(allowed.json<LocalNamesView>()).toMatchObject({ policy: 'allow', remembered: true, firstRefused: null });
  expect(JSON.parse(fs.readFileSync(path.join(dir, 'networks.json'), 'utf8')).networks['test-network']).toMatchObject({ localNames: 'allow' });

  // The same from a terminal, over the control socket.
  const lines: string[] = [];
  expect(await runCtl(['local-names', 'deny', '--socket', sock], { out: (l) => lines.push(l), err: (l) => lines.push(l) })).toBe(0);
  expect(lines.join('\n')).toMatch(/^local names on this network: never sent: they get an error here, and nothing about them leaves this machine \(remembered for this network\)\n {2}lan → 10\.99\.0\.1 /);
  expect((await api.get('/api/network/local-names')).json<LocalNamesView>().policy).toBe('deny');
  expect((await c.query('printer.lan', { timeoutMs: 5000 })).rcode).toBe('SERVFAIL');
  expect(await runCtl(['local-names', 'maybe', '--socket', sock], { out: () => undefined, err: () => undefined })).toBe(2);
});
