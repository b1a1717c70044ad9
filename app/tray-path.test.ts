/**
 * The tray path a user takes, end to end, without Electron's binary:
 * app/main.ts against the stand-in `electron` (typed against Electron's
 * API), its own proxy for real (bin/dotstub.js under the real supervisor,
 * unprivileged as a desktop user's is) against real unbound resolvers, and
 * the dashboard window's page in real Chromium.
 *
 * The service-less app: "Enable private DNS" says what it can't do; a
 * resolver chosen from the tray's list is the one the dashboard and the
 * tray both show; Pause stops the proxy and Resume brings it back; a click
 * on the icon opens the dashboard; the built preload, in the dashboard's
 * page, gives it exactly its three methods; Quit stops the proxy.
 *
 * Needs `npm run build:proxy` and `npm run build:renderer` (and `npm run
 * build:app` for the preload), /usr/bin/chromium and unbound.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, expect as pw, type Browser, type Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { Dashboard } from '../e2e/support/dashboard.js';
import { skipWith } from '../test-support/skips.js';
import { startUnbound, type UnboundServer } from '../test-support/unbound.js';
import { preloadStandIn, rec, standInApp, trayItem, trayMenu, untilTray, type BrowserWindow, type MenuItem } from '../test-support/electron-stand-in.js';
import chromiumConfig from '../playwright.config.js';

vi.mock('electron', async () => (await import('../test-support/electron-stand-in.js')).electronStandIn());

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(here, '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = !fs.existsSync(path.join(ROOT, 'dist', 'proxy', 'cli.js'))
  ? 'dist/proxy is not built (npm run build:proxy)'
  : !fs.existsSync(path.join(ROOT, 'renderer', 'dist', 'index.html'))
    ? 'the dashboard is not built (npm run build:renderer)'
    : !fs.existsSync(CHROMIUM)
      ? `no Chromium at ${CHROMIUM}`
      : null;
const NOBODY = 65534;
const PRELOAD = path.join(ROOT, 'dist', 'app', 'preload.cjs');

const until = untilTray;
const menu = trayMenu;
const item = trayItem;
const byLabel = (label: string, items: readonly MenuItem[] = menu()): MenuItem | undefined =>
  items.flatMap((i) => [i, ...(i.submenu ?? [])]).find((i) => i.label?.startsWith(label));

let lab: UnboundServer | undefined;
let labB: UnboundServer | undefined;
let browser: Browser | undefined;
let dir = '';
const resolvConfBefore = fs.readFileSync('/etc/resolv.conf', 'utf8');

describe('the tray path, as a user takes it', skipWith(missing), () => {
  let page: Page;
  let dashboard: Dashboard;
  let dashboardWindow: BrowserWindow;

  beforeAll(async () => {
    [lab, labB] = await Promise.all([startUnbound({ names: 10, extra: { 'which.test.': '10.0.0.1' } }), startUnbound({ names: 10, extra: { 'which.test.': '10.0.0.2' } })]);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-tray-path-'));
    const config = path.join(dir, 'config');
    fs.mkdirSync(config);
    // The proxy runs as nobody where the test runs as root: its config dir and the lab's CA are its own.
    const ca = path.join(config, 'ca.pem');
    fs.copyFileSync(lab.pki.caFile, ca);
    // The user's saved choice, as the app finds it at a start (no --resolver: that would win over a choice from the tray).
    const saved = path.join(config, 'resolvers.json');
    const labA = { id: 'lab-a', label: 'Lab A', addresses: ['127.0.0.1'], port: lab.port, authName: 'dns.test', pins: [] };
    fs.writeFileSync(saved, JSON.stringify({ active: 'lab-a', custom: [labA] }));
    if (process.getuid?.() === 0) {
      fs.chmodSync(dir, 0o755);
      for (const f of [config, ca, saved]) fs.chownSync(f, NOBODY, NOBODY);
    }
    process.env.DOTSTUB_PROXY_ARGS = `--listen 127.0.0.1:0 --ca ${ca} --config-dir ${config} --system-dns-state-dir ${path.join(config, 'state')} --measure-only-local`;
    const nodeOptions = process.env.NODE_OPTIONS;
    // The supervisor copies the environment when the app starts: only the app's proxy loads this.
    process.env.NODE_OPTIONS = `${nodeOptions ?? ''} --import ${pathToFileURL(path.join(ROOT, 'test-support', 'as-nobody.mjs')).href}`;
    try {
      await import('./main.js');
    } finally {
      if (nodeOptions === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = nodeOptions;
    }
    await until(() => item('open-dashboard')?.enabled, 20_000, 'the proxy to answer');
    browser = await chromium.launch({ ...chromiumConfig.use?.launchOptions, executablePath: CHROMIUM, headless: true });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    dashboard = new Dashboard(page);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (!rec.exited) standInApp.quit();
    await until(() => rec.exited, 10_000).catch(() => undefined);
    await Promise.all([lab?.stop(), labB?.stop()]);
    if (dir !== '') fs.rmSync(dir, { recursive: true, force: true });
  });

  test('"Enable private DNS" in the service-less app says what it can\'t do, and changes nothing', async () => {
    // Never click this as root: the proxy must be the unprivileged one (it wrote its token as nobody).
    const token = path.join(dir, 'config', 'token');
    await until(() => fs.existsSync(token), 10_000, 'the proxy\'s token');
    if (process.getuid?.() === 0) expect(fs.statSync(token).uid).toBe(NOBODY);

    expect(menu()[0]).toMatchObject({ id: 'system-dns', type: 'checkbox', label: 'Enable private DNS', checked: false, enabled: true });
    expect(item('own-proxy')?.label).toBe('No dotstub service: install it to turn this on');
    menu()[0]?.click?.();
    const said = await until(() => rec.notifications[0], 10_000, 'a notification');
    expect(said).toMatch(/^Could not enable private DNS: .*needs root: run with sudo, or install the service/);
    expect(fs.readFileSync('/etc/resolv.conf', 'utf8')).toBe(resolvConfBefore);
    expect(item('system-dns')?.checked).toBe(false);
  });

  test('a click on the icon opens the dashboard, which Chromium shows live', async () => {
    rec.trays[0]?.click();
    dashboardWindow = await until(() => rec.windows[0], 5000, 'the dashboard window');
    expect(dashboardWindow.isVisible()).toBe(true);
    await dashboard.open(dashboardWindow.webContents.getURL());
    await dashboard.goTo('Resolvers');
    await pw(dashboard.resolverList.locator('li[aria-current="true"]')).toContainText('Lab A');
    expect(item('resolvers')?.label).toBe('Resolver: Lab A');
  });

  test('a resolver chosen from the tray\'s list is the one the dashboard and the tray both show', async () => {
    // The user adds a second resolver in the dashboard; the tray's list follows.
    const b = labB as UnboundServer;
    await dashboard.goTo('Resolvers');
    await dashboard.addResolver({ label: 'Lab B', address: '127.0.0.1', port: b.port, authName: 'dns.test' });
    await pw(page.getByText('Added Lab B.')).toBeVisible();
    const use = await until(() => byLabel('Lab B', item('resolvers')?.submenu), 10_000, '"Lab B" in the tray\'s list');
    expect(use).toMatchObject({ type: 'radio', checked: false, enabled: true });

    use.click?.();
    await pw(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'Lab B' })).toHaveAttribute('aria-current', 'true', { timeout: 10_000 });
    await until(() => item('resolvers')?.label === 'Resolver: Lab B', 10_000, 'the tray to name Lab B');
    expect(byLabel('Lab B', item('resolvers')?.submenu)?.checked).toBe(true);
    expect(byLabel('Lab A', item('resolvers')?.submenu)?.checked).toBe(false);
    await page.screenshot({ path: path.join(ROOT, 'e2e', 'screenshots', 'tray-path-switched.png') });
  });

  test('Pause stops the proxy (the dashboard says it lost it); Resume and a click on the icon bring the dashboard back', async () => {
    const before = new URL(dashboardWindow.webContents.getURL()).origin;
    item('pause')?.click?.();
    await until(() => item('resume'), 15_000, '"Resume private DNS" in the tray');
    expect(item('status')?.label).toBe('Private DNS: off — dotstub is not running');
    expect(item('open-dashboard')?.enabled).toBe(false);
    await pw(dashboard.liveIndicator).not.toHaveText('Live', { timeout: 10_000 });

    item('resume')?.click?.();
    await until(() => item('open-dashboard')?.enabled, 20_000, 'the proxy to answer again');
    // A restarted proxy listens on a new control port; the window follows it, and so does the page.
    await until(() => new URL(dashboardWindow.webContents.getURL()).origin !== before, 5000, 'the window to follow the new port');
    rec.trays[0]?.click();
    expect(dashboardWindow.isVisible()).toBe(true);
    await dashboard.open(dashboardWindow.webContents.getURL());
    await dashboard.goTo('Resolvers');
    await pw(dashboard.resolverList.locator('li[aria-current="true"]')).toContainText('Lab B');
  });

  test('the built preload in the dashboard\'s page: exactly its three methods, no require or process, each call answered by the app for the dashboard alone', skipWith(fs.existsSync(PRELOAD) ? null : 'the app is not built (npm run build:app)'), async () => {
    // The preload as Electron runs a sandboxed one: a scope of its own, whose `require` knows electron alone.
    let frameUrl = '';
    const { electron, exposed } = preloadStandIn(dashboardWindow.webContents, () => frameUrl);
    const sandboxRequire = (id: string): unknown => {
      if (id === 'electron') return electron;
      throw new Error(`a sandboxed preload cannot require ${id}`);
    };
    vm.runInNewContext(fs.readFileSync(PRELOAD, 'utf8'), { require: sandboxRequire, module: { exports: {} }, exports: {} }, { filename: PRELOAD });
    expect([...exposed.keys()]).toEqual(['dotstubDesktop']);
    const api = exposed.get('dotstubDesktop') as Record<string, unknown>;

    // contextBridge, emulated: the page's world gets a frozen copy of what was exposed, each function a
    // proxy that crosses to the preload's world with copied arguments and results (here a binding, hidden
    // from the page), objects copied member by member, other values copied; the top frame only, as
    // Electron runs a preload in the main frame alone.
    type Shape = { fn: true } | { object: Record<string, Shape> } | { value: unknown };
    const shapeOf = (v: unknown): Shape =>
      typeof v === 'function' ? { fn: true } : typeof v === 'object' && v !== null ? { object: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shapeOf(x)])) } : { value: v };
    const bridged = await (browser as Browser).newPage({ viewport: { width: 1280, height: 900 } });
    await bridged.exposeBinding('__dotstubBridge', (source, route: string[], args: unknown[]) => {
      frameUrl = source.frame.url();
      let target: unknown = api;
      let self: unknown;
      for (const k of route) [self, target] = [target, (target as Record<string, unknown>)[k]];
      if (typeof target !== 'function') throw new Error(`${route.join('.')} is not exposed`);
      return (target as (...a: unknown[]) => unknown).apply(self, args);
    });
    await bridged.addInitScript(
      ({ key, shape }) => {
        const w = window as unknown as Record<string, unknown>;
        const call = w.__dotstubBridge as (route: string[], args: unknown[]) => Promise<unknown>;
        delete w.__dotstubBridge;
        if (window !== window.top) return;
        type S = { fn: true } | { object: Record<string, S> } | { value: unknown };
        const build = (s: S, route: string[]): unknown =>
          'fn' in s
            ? (...args: unknown[]) => call(route, args)
            : 'object' in s
              ? Object.freeze(Object.fromEntries(Object.entries(s.object).map(([k, x]) => [k, build(x, [...route, k])])))
              : s.value;
        w[key] = build(shape, []);
      },
      { key: 'dotstubDesktop', shape: shapeOf(api) },
    );
    try {
      await new Dashboard(bridged).open(dashboardWindow.webContents.getURL());
      const seen = await bridged.evaluate(() => {
        const w = window as unknown as Record<string, unknown>;
        const bridge = w.dotstubDesktop as Record<string, unknown>;
        return { methods: Object.keys(bridge).sort(), functions: Object.values(bridge).every((v) => typeof v === 'function'), require: typeof w.require, process: typeof w.process, module: typeof w.module, bridge: typeof w.__dotstubBridge };
      });
      expect(seen).toEqual({ methods: ['getInfo', 'hideWindow', 'openExternal'], functions: true, require: 'undefined', process: 'undefined', module: 'undefined', bridge: 'undefined' });

      type Bridge = { getInfo(): Promise<unknown>; openExternal(url: string): Promise<boolean>; hideWindow(): Promise<void> };
      const desktop = (): Bridge => (window as unknown as { dotstubDesktop: Bridge }).dotstubDesktop;
      expect(await bridged.evaluate(`(${desktop.toString()})().getInfo()`)).toEqual({ appVersion: '0.1.0', electronVersion: '', platform: process.platform });
      expect(await bridged.evaluate(`(${desktop.toString()})().openExternal('https://github.com/dotstub/dotstub/issues')`)).toBe(true);
      expect(await bridged.evaluate(`(${desktop.toString()})().openExternal('https://evil.example/')`)).toBe(false);
      expect(rec.externals.at(-1)).toBe('https://github.com/dotstub/dotstub/issues');

      // A frame of another origin: the dashboard's own policy (default-src 'none') lets none into the page
      // (Chromium shows its error page in its place, with no bridge); and the preload's call made from
      // such a frame, had one got the bridge, is refused by the app.
      const foreign = dashboardWindow.webContents.getURL().replace('//127.0.0.1:', '//localhost:').replace(/#.*$/, '');
      await bridged.evaluate((src) => {
        const f = document.createElement('iframe');
        f.src = src;
        document.body.append(f);
      }, foreign);
      await until(() => bridged.frames().length > 1, 5000, 'the frame');
      const child = bridged.frames().find((f) => f !== bridged.mainFrame());
      await until(() => child?.url() !== 'about:blank' && child?.url() !== '', 5000, 'the frame to settle');
      expect(child?.url()).toBe('chrome-error://chromewebdata/');
      frameUrl = foreign;
      await expect((api.getInfo as () => Promise<unknown>)()).rejects.toThrow(/refused, the sender is not the dotstub dashboard/);

      expect(dashboardWindow.isVisible()).toBe(true);
      await bridged.evaluate(`(${desktop.toString()})().hideWindow()`);
      expect(dashboardWindow.isVisible()).toBe(false);
    } finally {
      await bridged.close();
    }
  });

  test('Quit stops the proxy', async () => {
    const origin = new URL(dashboardWindow.webContents.getURL()).origin;
    expect((await fetch(`${origin}/`)).ok).toBe(true);
    item('quit')?.click?.();
    await until(() => rec.exited, 15_000, 'the app to exit');
    await expect(fetch(`${origin}/`)).rejects.toThrow();
    await pw(dashboard.liveIndicator).not.toHaveText('Live', { timeout: 10_000 });
    expect(dashboardWindow.isDestroyed()).toBe(true);
  });
});
