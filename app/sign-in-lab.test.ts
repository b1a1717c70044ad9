/**
 * The "Sign in to network" window's whole path, at a fake hotspot: the
 * hotspot and the proxy in network namespaces (test-support/netlab.ts,
 * hotspot-lab.ts; the proxy as the CLI in the client namespace, strict, as
 * proxy/privacy/captive-lab.test.ts runs it), and app/main.ts against the
 * stand-in `electron`, driving that proxy through its control socket as the
 * app drives the installed service.
 *
 * The tray offers the sign-in; taken from the tray, it opens the sign-in
 * window in its own session, through the proxy's sign-in proxy, whose 407
 * is answered for that window alone. The stand-in can't render, so Debian's
 * Chromium, started inside the client namespace, gets exactly what the
 * window got (the proxy and the credential the app answered with) and loads
 * the portal URL the window was given: the page comes through dotstub's
 * sign-in proxy; a page going elsewhere lands back on the portal, which the
 * app's guards let the window follow, while they keep it from this
 * machine's pages; signing in on the page opens the hotspot, the proxy
 * returns to private DNS, and the app closes the window.
 *
 * Needs root and the lab's tools (netlab.ts), unbound and /usr/bin/chromium.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page, type Request } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import chromiumConfig from '../playwright.config.js';
import { ControlClient, fetchDashboardLink } from './control/client.js';
import type { SignInView } from '../proxy/control/api-types.js';
import { startHotspot, type Hotspot } from '../test-support/hotspot-lab.js';
import { dotstubArgv, netlabMissing, startNetlab, unboundIn, type Netlab, type NetlabProcess } from '../test-support/netlab.js';
import { skipWith } from '../test-support/skips.js';
import { startUnbound, type UnboundServer } from '../test-support/unbound.js';
import { rec, standInApp, trayItem, untilTray, type BrowserWindow } from '../test-support/electron-stand-in.js';

vi.mock('electron', async () => (await import('../test-support/electron-stand-in.js')).electronStandIn());

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = netlabMissing() ?? (fs.existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM}`);
const LOGIN = 'login.hotspot.test';
const PARTITION = 'dotstub-captive-sign-in';

let lab: Netlab | undefined;
let unbound: UnboundServer | undefined;
let hotspot: Hotspot | undefined;
let proxy: NetlabProcess | undefined;
let client: ControlClient | undefined;
let browser: Browser | undefined;

/** The proxy's own account of the sign-in (the same view the app was given). */
let view: SignInView;
let win: BrowserWindow;
let page: Page;
/** The hosts the sign-in proxy let through, as the proxy said while captive. */
let letThrough: readonly string[] = [];

/** The URLs a page went through to get where it is: first asked, each redirect, last. */
function chain(request: Request): string[] {
  const urls: string[] = [];
  for (let r: Request | null = request; r; r = r.redirectedFrom()) urls.unshift(r.url());
  return urls;
}

async function state(): Promise<string> {
  return (await (client as ControlClient).status()).state;
}

describe('the sign-in window at a fake hotspot', skipWith(missing), () => {
  beforeAll(async () => {
    lab = await startNetlab();
    const a = lab.addresses;
    unbound = await startUnbound({ port: 853, dohPort: 443, extra: { [`${LOGIN}.`]: '192.0.2.80' }, launch: unboundIn(lab.server, [a.server4]) });
    hotspot = await startHotspot(lab, { variant: 'drop', loginHost: LOGIN, unbound });
    const socket = path.join(lab.dir, 'control.sock');
    const readyFile = path.join(lab.dir, 'ready.json');
    proxy = lab.client.spawn(
      dotstubArgv([
        '--listen', '127.0.0.1:53',
        '--resolver', `${a.server4}:853#dns.test`,
        '--ca', unbound.pki.caFile,
        '--strict',
        '--network-dns', a.routerClientSide4,
        '--control', '127.0.0.1:0',
        '--control-socket', socket,
        '--config-dir', path.join(lab.dir, 'config'),
        '--ready-file', readyFile,
      ]),
      // Probing is on inside the lab: every address it can reach is the lab's own.
      { env: { DOTSTUB_PORTAL_CHECK: 'on' } },
    );
    const deadline = Date.now() + 20_000;
    while (!fs.existsSync(readyFile)) {
      if (Date.now() > deadline || proxy.child.exitCode !== null) throw new Error(`dotstub did not start in the lab:\n${proxy.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    client = new ControlClient({ socketPath: socket, dashboardUrl: (await fetchDashboardLink(socket)).url });
    // The socket, a Unix one, reaches across namespaces: the app takes the lab's proxy for the installed service.
    process.env.DOTSTUB_CONTROL_SOCKET = socket;
    await import('./main.js');
  }, 90_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    if (!rec.exited) standInApp.quit();
    await untilTray(() => rec.exited, 10_000).catch(() => undefined);
    delete process.env.DOTSTUB_CONTROL_SOCKET;
    client?.close();
    await proxy?.stop();
    await hotspot?.stop();
    await unbound?.stop();
    // The namespaces, and whatever still runs in them (Chromium included), go with the lab.
    await lab?.close();
  }, 60_000);

  test('the tray offers the sign-in; taken there, it opens the portal in its own session through the sign-in proxy, whose 407 is answered for it alone', async () => {
    // Strict mode asks first: the tray's one-click answer, and one notification saying so.
    const allow = await untilTray(() => trayItem('captive-allow'), 30_000, '"Allow sign-in" in the tray');
    expect(allow.label).toBe(`Allow sign-in to ${LOGIN}`);
    expect(rec.notifications).toContainEqual(expect.stringContaining(`Sign-in page: ${LOGIN}. Strict mode`));
    expect(rec.windows).toEqual([]);
    allow.click?.();

    win = await untilTray(() => rec.windows.find((w) => w.webContents.session.partition === PARTITION), 10_000, 'the sign-in window');
    view = await (client as ControlClient).signIn();
    const hostPort = view.proxy.url.replace(/^http:\/\//, '');
    expect(hostPort).toMatch(/^127\.0\.0\.1:\d+$/);
    // Its own partition, every request through the sign-in proxy; no other session was given a proxy.
    expect(rec.proxies).toEqual([{ partition: PARTITION, config: { proxyRules: `http=${hostPort};https=${hostPort}`, proxyBypassRules: '' } }]);
    expect(win.webContents.getURL()).toBe(view.portalUrl);
    expect(new URL(view.portalUrl).hostname).toBe(LOGIN);
    expect(win.isVisible()).toBe(true);
    expect(win.options.webPreferences).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false });

    // The proxy's 407: answered with the sign-in's credential for this window, for no other page and no server's 401.
    const port = Number(hostPort.split(':')[1]);
    const proxyAuth = { isProxy: true, scheme: 'basic', host: '127.0.0.1', port, realm: 'dotstub sign-in' };
    expect(standInApp.login(win.webContents, proxyAuth)).toEqual({ username: view.proxy.username, password: view.proxy.password });
    expect(standInApp.login(win.webContents, { ...proxyAuth, isProxy: false })).toBeUndefined();
    rec.trays[0]?.click();
    const dashboard = await untilTray(() => rec.windows.find((w) => w !== win), 5000, 'the dashboard window');
    expect(standInApp.login(dashboard.webContents, proxyAuth)).toBeUndefined();

    // The sign-in proxy wants exactly that credential: without it, 407.
    const portal = `http://${LOGIN}/login`;
    const curl = (auth: string[]) => (lab as Netlab).client.exec(['curl', '-sS', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '5', '-x', view.proxy.url, ...auth, portal]);
    expect((await curl([])).stdout).toBe('407');
    expect((await curl(['--proxy-user', `${view.proxy.username}:wrong`])).stdout).toBe('407');
    expect((await curl(['--proxy-user', `${view.proxy.username}:${view.proxy.password}`])).stdout).toBe('200');
  }, 60_000);

  test('in Chromium with what the window got, the portal comes through the sign-in proxy; a page going elsewhere lands back on the portal, and the guards keep the window to the network', async () => {
    const l = lab as Netlab;
    // Chromium in the client namespace, where the proxy and its sign-in proxy listen.
    const inClient = path.join(l.dir, 'chromium-in-client.sh');
    const quoted = l.client.command([CHROMIUM]).map((w) => `'${w.replace(/'/g, `'\\''`)}'`);
    fs.writeFileSync(inClient, `#!/bin/sh\nexec ${quoted.join(' ')} "$@"\n`, { mode: 0o755 });
    // The window's proxy rules name the sign-in proxy for http and https alike: one proxy server here. Its bypass
    // list is empty, so loopback goes direct as in Electron (Playwright would otherwise send it through the proxy).
    const [rules] = rec.proxies.map((p) => p.config.proxyRules ?? '');
    const hostPort = /^http=([^;]+);https=\1$/.exec(rules ?? '')?.[1];
    expect(hostPort, rules).toBeDefined();
    const port = Number(hostPort?.split(':')[1]);
    const credential = standInApp.login(win.webContents, { isProxy: true, scheme: 'basic', host: '127.0.0.1', port, realm: 'dotstub sign-in' });
    process.env.PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK = '1';
    try {
      browser = await chromium.launch({
        ...chromiumConfig.use?.launchOptions,
        executablePath: inClient,
        headless: true,
        proxy: { server: `http://${hostPort}`, username: credential?.username ?? '', password: credential?.password ?? '' },
      });
    } finally {
      delete process.env.PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK;
    }
    page = await browser.newPage();

    // (a) The portal URL the window was given, through dotstub's sign-in proxy: its form, and the proxy names the host it let through.
    const loaded = await page.goto(win.webContents.getURL());
    expect(loaded?.status()).toBe(200);
    await page.getByRole('button', { name: 'Accept and connect' }).waitFor();
    const status = await (client as ControlClient).status();
    expect(status.state).toBe('captive');
    expect(status.captive?.letThrough).toContain(LOGIN);

    // (b) The page goes elsewhere: the hotspot sends it back to its login page. The window follows the same way.
    const away = await page.goto('http://news.example/');
    const seen = chain(away?.request() as Request);
    expect(seen).toEqual(['http://news.example/', `http://${LOGIN}/login`]);
    letThrough = (await (client as ControlClient).status()).captive?.letThrough ?? [];
    expect(letThrough).toContain('news.example');
    const [first, ...redirects] = seen as [string, ...string[]];
    expect(win.webContents.navigateFromPage(first)).toBe(true);
    for (const url of redirects) expect(win.webContents.redirect(url), url).toBe(true);
    expect(win.webContents.getURL()).toBe(`http://${LOGIN}/login`);
    // A window the portal opens opens in the sign-in window itself, and comes back to the portal too.
    const [popup] = await Promise.all([page.waitForEvent('popup'), page.evaluate(() => void window.open('http://pay.hotspot.example/'))]);
    await popup.waitForURL(`http://${LOGIN}/login`);
    await popup.close();
    const windows = rec.windows.length;
    expect(win.webContents.openFromPage('http://pay.hotspot.example/')).toEqual({ action: 'deny' });
    expect(rec.windows).toHaveLength(windows);
    expect(win.webContents.getURL()).toBe('http://pay.hotspot.example/');
    expect(win.webContents.redirect(`http://${LOGIN}/login`)).toBe(true);
    // Never this machine's pages (the dashboard's origin, which Chromium would reach without the proxy), nor a file.
    const dashboardOrigin = new URL((await fetchDashboardLink(process.env.DOTSTUB_CONTROL_SOCKET as string)).url).origin;
    for (const url of [`${dashboardOrigin}/`, 'file:///etc/passwd']) {
      expect(win.webContents.navigateFromPage(url), url).toBe(false);
      expect(win.webContents.openFromPage(url), url).toEqual({ action: 'deny' });
    }
    expect(win.webContents.getURL()).toBe(`http://${LOGIN}/login`);
    expect(win.isDestroyed()).toBe(false);
  }, 60_000);

  test('signing in on the portal\'s page opens the hotspot: the proxy returns to private DNS and the app closes the sign-in window', async () => {
    await page.getByRole('button', { name: 'Accept and connect' }).click();
    await page.getByText('You are online').waitFor();
    await (hotspot as Hotspot).portal.waitFor('LOGIN');
    const signedAt = Date.now();
    // The proxy re-probes every 5 s while captive: private within two rounds and a connection.
    for (;;) {
      if ((await state()) === 'private') break;
      if (Date.now() - signedAt > 20_000) throw new Error(`not private 20 s after the sign-in: ${await state()}\n${proxy?.output() ?? ''}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await untilTray(() => win.isDestroyed(), 10_000, 'the app to close the sign-in window');
    const closedAt = Date.now();
    expect(rec.events.filter((e) => e === 'window closed')).toHaveLength(1);
    expect(trayItem('status')?.label).toMatch(/^Private DNS: on/);
    expect(trayItem('sign-in')).toBeUndefined();
    // Its credential is answered no more.
    expect(standInApp.login(win.webContents, { isProxy: true, scheme: 'basic', host: '127.0.0.1', port: 1, realm: 'dotstub sign-in' })).toBeUndefined();
    console.log(`sign-in lab: private and the window closed ${closedAt - signedAt} ms after the sign-in; the sign-in proxy let through: ${letThrough.join(', ')}`);
  }, 60_000);
});
