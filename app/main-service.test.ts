/**
 * app/main.ts where the dotstub service is installed (issue 20, "one proxy
 * per machine"), against the same stand-in `electron` as main.test.ts: the
 * "service" is a real app (startApp) serving its control API on a temp
 * socket (DOTSTUB_CONTROL_SOCKET), managing the DNS of a resolv.conf copy.
 * The app starts no proxy of its own; the tray's toggle goes through the
 * socket; the window shows the service's dashboard (its link handed out on
 * the socket); "Pause private DNS for 5 minutes" from the tray gives the
 * old DNS back, and the dashboard's page (in real Chromium) counts down;
 * quitting the app leaves the service and its takeover alone.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, expect as pw, type Browser } from '@playwright/test';
import { afterAll, describe, expect, test, vi } from 'vitest';
import chromiumConfig from '../playwright.config.js';
import { Dashboard } from '../e2e/support/dashboard.js';
import { skipWith } from '../test-support/skips.js';
import { startControl, type ControlHarness } from '../test-support/control-harness.js';
import { startUnbound, type UnboundServer } from '../test-support/unbound.js';
import { systemHost } from '../proxy/system-dns/host.js';
import { SystemDnsManager } from '../proxy/system-dns/manager.js';
import { resolvConfLookup } from '../proxy/system-dns/os-lookup.js';
import { rec, standInApp, type BrowserWindow, type MenuItem } from '../test-support/electron-stand-in.js';

vi.mock('electron', async () => (await import('../test-support/electron-stand-in.js')).electronStandIn());

const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\n';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-main-service-'));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const noPage = !fs.existsSync(CHROMIUM)
  ? `no Chromium at ${CHROMIUM}`
  : !fs.existsSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'renderer', 'dist', 'index.html'))
    ? 'the dashboard is not built (npm run build:renderer)'
    : null;
let unbound: UnboundServer | undefined;
let service: ControlHarness | undefined;
let browser: Browser | undefined;
let resolvConf = '';
let win: BrowserWindow;
afterAll(async () => {
  await browser?.close();
  if (!rec.exited) standInApp.quit();
  await until(() => rec.exited, 10_000).catch(() => undefined);
  await service?.stop();
  await unbound?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function until<T>(get: () => T | undefined | false, ms = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what} not reached in ${ms} ms; last menu: ${JSON.stringify(rec.menus.at(-1)?.slice(0, 4))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const lastMenu = (): MenuItem[] => rec.menus.at(-1) ?? [];
const item = (id: string): MenuItem | undefined => lastMenu().find((i) => i.id === id);

describe('app/main.ts with the dotstub service installed', () => {
  test('no proxy of its own: the tray drives the service over its socket, the window shows the service\'s dashboard', async () => {
    unbound = await startUnbound({ names: 10 });
    const root = path.join(tmp, 'root');
    fs.mkdirSync(path.join(root, 'etc'), { recursive: true });
    resolvConf = path.join(root, 'etc', 'resolv.conf');
    fs.writeFileSync(resolvConf, ORIGINAL);
    const sock = path.join(tmp, 'control.sock');
    const u = unbound;
    service = await startControl({
      resolverArg: u.resolverArg,
      socket: { path: sock },
      systemDns: async (dnsPort) => {
        const m = new SystemDnsManager({
          host: systemHost(root),
          stateDir: path.join(root, 'state'),
          port: 53,
          privileged: true,
          lookup: resolvConfLookup(resolvConf, dnsPort),
          pollMs: 200,
          rewriteStepMs: 50,
        });
        await m.start();
        return m;
      },
    });
    process.env.DOTSTUB_CONTROL_SOCKET = sock;
    // Were the app to start a proxy of its own, this would make it fail loudly.
    process.env.DOTSTUB_PROXY_ARGS = '--no-such-flag';

    await import('./main.js');

    const toggle = await until(() => item('system-dns')?.enabled === true && item('system-dns'), 20_000, 'an enabled toggle');
    expect(toggle).toMatchObject({ type: 'checkbox', label: 'Enable private DNS', checked: false });
    expect(item('quit')?.label).toBe('Quit (private DNS stays as it is)');
    toggle.click?.();
    await until(() => rec.notifications.length > 0, 10_000, 'a notification');
    expect(rec.notifications[0]).toBe('Private DNS is on for this machine: every program now asks dotstub.');
    expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);

    item('open-dashboard')?.click?.();
    win = await until(() => rec.windows[0], 5000, 'a window');
    expect(win.webContents.getURL()).toBe(`${service.url}/#token=${encodeURIComponent(service.token)}`);
  });

  test('"Pause private DNS for 5 minutes" from the tray: the old DNS back, the tray offers Resume, the dashboard counts down', skipWith(noPage), async () => {
    browser = await chromium.launch({ ...chromiumConfig.use?.launchOptions, executablePath: CHROMIUM, headless: true });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const dashboard = new Dashboard(page);
    await dashboard.open(win.webContents.getURL());
    await pw(dashboard.banner).toHaveAttribute('data-state', 'private');

    const pause = await until(() => item('pause')?.enabled && item('pause'), 10_000, 'an enabled pause');
    expect(pause.label).toBe('Pause private DNS for 5 minutes');
    pause.click?.();
    await until(() => rec.notifications.length > 1, 10_000, 'a second notification');
    expect(rec.notifications[1]).toBe('Private DNS is paused for 5 minutes: this machine asks its usual resolver, unencrypted, until then.');
    expect(fs.readFileSync(resolvConf, 'utf8')).toBe(ORIGINAL);
    await until(() => item('resume'), 10_000, '"Resume private DNS" in the tray');
    await pw(dashboard.banner).toHaveAttribute('data-state', 'paused');
    await pw(dashboard.banner.getByTestId('pause-countdown')).toHaveText(/^back on at \d\d:\d\d · (4 min [0-5]?\d s|5 min 0 s) left$/);

    // Resume from the tray: on again at once, and the page says so.
    item('resume')?.click?.();
    await until(() => rec.notifications.length > 2, 10_000, 'a third notification');
    expect(rec.notifications[2]).toBe('Private DNS is on for this machine: every program now asks dotstub.');
    await pw(dashboard.banner).toHaveAttribute('data-state', 'private');
    await until(() => item('pause'), 10_000, 'the tray to offer Pause again');
  });

  test('Quit leaves the service and private DNS as they are', async () => {
    const sock = path.join(tmp, 'control.sock');
    item('quit')?.click?.();
    await until(() => rec.exited, 15_000, 'the app to exit');
    // The service runs on, private DNS still on.
    expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);
    expect(fs.statSync(sock).isSocket()).toBe(true);
  });
});
