/**
 * app/main.ts's lockdown as Electron drives it, against the stand-in
 * `electron` (typed against Electron's API) and the real proxy: the events
 * Electron fires for what a page and a user do (web-contents-created,
 * will-navigate, will-redirect, the window-open handler, an IPC call, a
 * tray click, Quit) reach the app's guards, and the guards answer as the
 * security checklist asks. Needs `npm run build:proxy`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { skipWith } from '../test-support/skips.js';
import { electronStandIn, invoke, rec, standInApp, type BrowserWindow, type MenuItem } from '../test-support/electron-stand-in.js';

vi.mock('electron', async () => (await import('../test-support/electron-stand-in.js')).electronStandIn());

const here = path.dirname(fileURLToPath(import.meta.url));
const built = fs.existsSync(path.join(here, '..', 'dist', 'proxy', 'cli.js'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-main-guards-'));

async function until<T>(get: () => T | undefined | false, ms = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what} not reached in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const item = (id: string): MenuItem | undefined => rec.menus.at(-1)?.find((i) => i.id === id);

/** The dashboard window, opened the way a user does: a click on the tray icon. */
let dashboard: BrowserWindow;
let origin: string;

describe('the desktop app\'s lockdown, as Electron fires its events', skipWith(built ? null : 'dist/proxy is not built (npm run build:proxy)'), () => {
  beforeAll(async () => {
    const root = path.join(tmp, 'root');
    fs.mkdirSync(path.join(root, 'etc'), { recursive: true });
    fs.writeFileSync(path.join(root, 'etc', 'resolv.conf'), 'nameserver 10.99.0.1\n');
    process.env.DOTSTUB_PROXY_ARGS = `--listen 127.0.0.1:0 --resolver 127.0.0.1:1#dns.test --config-dir ${path.join(tmp, 'config')} --system-dns-root ${root} --system-dns-state-dir ${path.join(root, 'state')}`;
    await import('./main.js');
    await until(() => item('open-dashboard')?.enabled, 20_000, 'the proxy to answer');
  }, 30_000);
  afterAll(async () => {
    if (!rec.exited) standInApp.quit();
    await until(() => rec.exited, 10_000).catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('a click on the tray icon opens the dashboard, in one window however often', async () => {
    expect(rec.events[0]).toBe('app ready');
    const tray = rec.trays[0];
    expect(tray?.listenerCount('click')).toBe(1);
    tray?.click();
    dashboard = await until(() => rec.windows[0], 5000, 'a window');
    expect(dashboard.isVisible()).toBe(true);
    expect(dashboard.webContents.getURL()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=/);
    origin = new URL(dashboard.webContents.getURL()).origin;
    // Electron announced the window's page before the app could load it, and the guards took it.
    expect(rec.events.slice(0, 3)).toEqual(['app ready', 'tray click', 'app web-contents-created']);
    // Closed by the user, it hides (dotstub stays in the tray); the icon brings it back.
    expect(dashboard.close()).toBe(false);
    expect(dashboard.isVisible()).toBe(false);
    tray?.click();
    expect(dashboard.isVisible()).toBe(true);
    expect(rec.windows).toHaveLength(1);
  });

  test('the dashboard\'s page may navigate within the proxy\'s origin only', () => {
    const before = dashboard.webContents.getURL();
    expect(dashboard.webContents.navigateFromPage('https://evil.example/')).toBe(false);
    expect(dashboard.webContents.redirect('https://evil.example/login')).toBe(false);
    expect(dashboard.webContents.navigateFromPage('http://127.0.0.1:1/')).toBe(false);
    expect(dashboard.webContents.getURL()).toBe(before);
    expect(dashboard.webContents.navigateFromPage(`${origin}/#/settings`)).toBe(true);
  });

  test('the dashboard opens no window: an allow-listed https link goes to the user\'s browser, anything else nowhere', () => {
    expect(dashboard.webContents.openFromPage('https://evil.example/')).toEqual({ action: 'deny' });
    expect(dashboard.webContents.openFromPage('http://github.com/')).toEqual({ action: 'deny' });
    expect(rec.externals).toEqual([]);
    expect(dashboard.webContents.openFromPage('https://github.com/dotstub')).toEqual({ action: 'deny' });
    expect(rec.externals).toEqual(['https://github.com/dotstub']);
    expect(rec.windows).toHaveLength(1);
  });

  test('IPC answers the dashboard\'s own page only: a frame the app did not create is refused, even on the dashboard\'s origin', async () => {
    expect(await invoke('dotstub:get-info', dashboard.webContents, `${origin}/`)).toMatchObject({ appVersion: '0.1.0' });
    await expect(invoke('dotstub:get-info', dashboard.webContents, 'https://evil.example/')).rejects.toThrow(/refused/);
    // A window the app never made (another program's page that found the control port, a window opened around the guards).
    const { BrowserWindow: Window } = electronStandIn() as { BrowserWindow: new () => BrowserWindow };
    const foreign = new Window();
    try {
      await foreign.loadURL(`${origin}/`);
      await expect(invoke('dotstub:get-info', foreign.webContents, `${origin}/`)).rejects.toThrow(/refused, the sender is not the dotstub dashboard/);
      await expect(invoke('dotstub:open-external', foreign.webContents, `${origin}/`, 'https://github.com/')).rejects.toThrow(/refused/);
      expect(rec.externals).toEqual(['https://github.com/dotstub']);
    } finally {
      foreign.close();
    }
  });

  test('Quit: before-quit, the dashboard closes for real (no longer hidden), will-quit, quit', async () => {
    const from = rec.events.length;
    item('quit')?.click?.();
    await until(() => rec.exited, 15_000, 'the app to exit');
    expect(dashboard.isDestroyed()).toBe(true);
    // The app holds the first before-quit until its proxy has stopped, then quits again.
    expect(rec.events.slice(from).filter((e) => e.startsWith('app') || e.startsWith('window'))).toEqual([
      'app before-quit',
      'app before-quit',
      'window close',
      'window closed',
      'app will-quit',
      'app quit',
    ]);
  });
});
