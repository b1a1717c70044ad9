/**
 * The tray asks about this network's own names (issue 34), as a user meets
 * it: app/main.ts against the stand-in `electron`, its own proxy for real
 * (bin/dotstub.js under the real supervisor, strict mode, routing by name
 * owner on) reading a copy of the system files whose resolv.conf names a
 * stand-in LAN resolver (unbound on loopback, owning `lan`); the chosen
 * resolver is unbound over DoT. This machine's resolver is never asked.
 *
 * A refused local name brings one notification and the question in the
 * tray, once per network; "Keep private" is remembered (a restarted proxy
 * still refuses, and nothing asks again); "Allow on this network" makes the
 * names resolve on the next lookup. Both answers are the Network view's
 * per-network choice (networks.json), not a second store. In opportunistic
 * mode nothing is refused and nothing asks.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ControlClient } from './control/client.js';
import { ProxySupervisor } from './proxy-process/supervisor.js';
import { LiveTrayState } from './tray/live-tray-state.js';
import { createTemplate } from './tray/template.js';
import { UdpClient } from '../test-support/dns-client.js';
import { skipWith } from '../test-support/skips.js';
import { freePort, startUnbound, type UnboundServer } from '../test-support/unbound.js';
import { rec, standInApp, trayItem, untilTray, type MenuItem } from '../test-support/electron-stand-in.js';

vi.mock('electron', async () => (await import('../test-support/electron-stand-in.js')).electronStandIn());

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(here, '..');
const missing = fs.existsSync(path.join(ROOT, 'dist', 'proxy', 'cli.js')) ? null : 'dist/proxy is not built (npm run build:proxy)';

const until = untilTray;
const item = (id: string): MenuItem | undefined => trayItem(id);
/** The notifications about local names, of all the app showed. */
const asked = (): string[] => rec.notifications.filter((n) => n.includes('“Allow on this network”'));

let dot: UnboundServer | undefined;
let lan: UnboundServer | undefined;
let dir = '';
let dns: UdpClient | undefined;

beforeAll(async () => {
  if (missing) return;
  [dot, lan] = await Promise.all([startUnbound({ names: 0, extra: { 'which.test.': '10.0.0.1' } }), startUnbound({ names: 0, extra: { 'printer.lan.': '10.99.0.7', 'nas.lan.': '10.99.0.8' } })]);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-tray-local-names-'));
  fs.mkdirSync(path.join(dir, 'root', 'etc'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'root', 'etc', 'resolv.conf'), `# from DHCP\nnameserver 127.0.0.1:${lan.port}\nsearch lan\n`);
}, 60_000);

afterAll(async () => {
  dns?.close();
  await Promise.all([dot?.stop(), lan?.stop()]);
  if (dir !== '') fs.rmSync(dir, { recursive: true, force: true });
});

/** The proxy's flags: strict (the default) unless told, routing read from the test's root, its own config dir. */
function proxyArgs(port: number, config: string, ...extra: string[]): string[] {
  const d = dot as UnboundServer;
  const root = path.join(dir, 'root');
  return ['--listen', `127.0.0.1:${port}`, '--resolver', `127.0.0.1:${d.port}#${d.pki.authName}`, '--ca', d.pki.caFile, '--config-dir', config, '--system-dns-root', root, '--system-dns-state-dir', path.join(config, 'state'), ...extra];
}

describe('the tray asks about local names', skipWith(missing), () => {
  let port = 0;
  let config = '';

  beforeAll(async () => {
    port = await freePort();
    config = path.join(dir, 'config');
    fs.mkdirSync(config);
    dns = await UdpClient.open(port);
    process.env.DOTSTUB_PROXY_ARGS = proxyArgs(port, config).join(' ');
    // Routing by name owner for this app's proxy only (the test rig turns it off): it reads the test's root, never this machine's network.
    const before = process.env.DOTSTUB_NAME_ROUTING;
    process.env.DOTSTUB_NAME_ROUTING = 'on';
    try {
      await import('./main.js');
    } finally {
      process.env.DOTSTUB_NAME_ROUTING = before;
    }
    await until(() => item('open-dashboard')?.enabled, 20_000, 'the proxy to answer');
  }, 60_000);

  afterAll(async () => {
    if (!rec.exited) standInApp.quit();
    await until(() => rec.exited, 10_000).catch(() => undefined);
  });

  const ask = async (name: string): Promise<{ rcode: string; a: string[] }> => {
    const r = await (dns as UdpClient).query(name);
    return { rcode: r.rcode, a: r.packet.answers?.flatMap((x) => (x.type === 'A' ? [x.data] : [])) ?? [] };
  };
  const remembered = (): unknown => {
    const file = path.join(config, 'networks.json');
    if (!fs.existsSync(file)) return undefined;
    const networks = (JSON.parse(fs.readFileSync(file, 'utf8')) as { networks: Record<string, { localNames?: string }> }).networks;
    return Object.values(networks).map((n) => n.localNames);
  };

  test('a refused name brings the question once; "Keep private" is remembered, a restarted proxy still refuses and nothing asks again', async () => {
    // Nothing asks before a local name is refused.
    expect(item('local-names-allow')).toBeUndefined();
    expect((await ask('which.test')).a).toEqual(['10.0.0.1']);
    expect(await ask('printer.lan')).toEqual({ rcode: 'SERVFAIL', a: [] });

    await until(() => item('local-names-allow'), 10_000, 'the question in the tray');
    expect(item('local-names')?.label).toBe('This network has its own names (printer.lan)');
    expect(item('local-names-question')?.label).toBe('Send them to its resolver, unencrypted?');
    expect(item('local-names-allow')).toMatchObject({ type: 'normal', label: 'Allow on this network', enabled: true });
    expect(item('local-names-keep')).toMatchObject({ type: 'normal', label: 'Keep private', enabled: true });
    await until(() => asked().length === 1, 5000, 'a notification');
    expect(asked()[0]).toMatch(/^printer\.lan didn't resolve: /);

    // Another refused name on the same network: the same question, no second notification (counted at the end).
    expect((await ask('nas.lan')).rcode).toBe('SERVFAIL');

    item('local-names-keep')?.click?.();
    await until(() => !item('local-names-allow'), 10_000, 'the question gone');
    expect(remembered()).toEqual(['deny']);
    expect((await ask('printer.lan')).rcode).toBe('SERVFAIL');

    // A new proxy (Pause, Resume) finds the choice: still refused, and the tray doesn't ask.
    item('pause')?.click?.();
    await until(() => item('resume'), 15_000, '"Resume private DNS"');
    item('resume')?.click?.();
    await until(() => item('open-dashboard')?.enabled, 20_000, 'the proxy to answer again');
    const restarted = rec.menus.length;
    expect((await ask('printer.lan')).rcode).toBe('SERVFAIL');
    expect((await ask('which.test')).a).toEqual(['10.0.0.1']);

    // The user forgets the choice in the Network view: the next refused name asks again, naming that one
    // (so the refusal under "Keep private" before it raised no question of its own).
    item('open-dashboard')?.click?.();
    const win = await until(() => rec.windows[0], 5000, 'the dashboard window');
    const url = new URL(win.webContents.getURL());
    const token = decodeURIComponent(url.hash.replace(/^#token=/, ''));
    const headers = { Authorization: `Bearer ${token}`, Origin: url.origin, 'Content-Type': 'application/json' };
    const { networks } = (await (await fetch(`${url.origin}/api/networks`, { headers })).json()) as { networks: { key: string; current: boolean }[] };
    const current = networks.find((n) => n.current);
    expect(current).toBeDefined();
    const forgot = await fetch(`${url.origin}/api/networks/${current?.key ?? ''}`, { method: 'PUT', headers, body: JSON.stringify({ localNames: 'ask' }) });
    expect(forgot.status).toBe(200);
    expect((await ask('nas.lan')).rcode).toBe('SERVFAIL');
    await until(() => item('local-names-allow'), 10_000, 'the question again');
    expect(item('local-names')?.label).toBe('This network has its own names (nas.lan)');
    expect(rec.menus.slice(restarted).filter((m) => m.some((i) => i.id === 'local-names' && i.label?.includes('printer.lan')))).toEqual([]);

    // "Allow on this network": remembered, and the refused names resolve when asked again.
    item('local-names-allow')?.click?.();
    await until(() => !item('local-names-allow'), 10_000, 'the question gone');
    expect(remembered()).toEqual(['allow']);
    expect(await ask('nas.lan')).toEqual({ rcode: 'NOERROR', a: ['10.99.0.8'] });
    expect(await ask('printer.lan')).toEqual({ rcode: 'NOERROR', a: ['10.99.0.7'] });
    expect(item('local-names-allow')).toBeUndefined();

    // One notification each time the network had no answer: the first question and the one after "forget".
    expect(asked()).toHaveLength(2);
    expect(asked()[1]).toMatch(/^nas\.lan didn't resolve: /);
  }, 90_000);
});

describe('in opportunistic mode', skipWith(missing), () => {
  test('local names go to the network\'s resolver as before, and the tray never asks', async () => {
    const port = await freePort();
    const config = path.join(dir, 'config-opportunistic');
    fs.mkdirSync(config);
    const supervisor = new ProxySupervisor({
      script: path.join(ROOT, 'bin', 'dotstub.js'),
      args: ['--system-dns', ...proxyArgs(port, config, '--opportunistic')],
      env: { ...process.env, DOTSTUB_NAME_ROUTING: 'on' },
      readyTimeoutMs: 15_000,
    });
    const info = await supervisor.start();
    const tray = new LiveTrayState({ refreshMs: 1000 });
    let client: ControlClient | undefined;
    const udp = await UdpClient.open(port);
    try {
      client = new ControlClient({ baseUrl: info.control, token: info.token });
      tray.setSupervisor(supervisor.state);
      tray.attach(client);
      const r = await udp.query('printer.lan');
      expect(r.packet.answers?.flatMap((a) => (a.type === 'A' ? [a.data] : []))).toEqual(['10.99.0.7']);
      // The refresh attach started may predate the lookup: one more, begun after it.
      await tray.refresh();
      await tray.refresh();
      // The proxy's own words: its status answered (privacy 'off' here only because system DNS is not taken over).
      expect(tray.current).toMatchObject({ proxyRunning: true, reason: expect.stringMatching(/^private DNS is not enabled for this machine/) as unknown });
      expect(tray.current.localNames).toBeUndefined();
      expect(createTemplate(tray.current).some((i) => 'id' in i && i.id.startsWith('local-names'))).toBe(false);
      // Nobody chose for this network: it is the mode that sends them, and nothing waits for an answer.
      expect(await client.localNames()).toMatchObject({ policy: 'ask', remembered: false, firstRefused: null });
    } finally {
      udp.close();
      tray.detach();
      client?.close();
      await supervisor.stop('quit');
    }
  }, 60_000);
});
