/**
 * The desktop app as a test drives it, on the real Electron or on its
 * stand-in (the switch: electron-binary.ts), so one test says what a user
 * sees on either: the tray's menu, a click on the icon or an item, the
 * windows, the app gone after Quit.
 *
 * - On the stand-in: app/main.ts imported into the test's process, whose
 *   `electron` the test file mocks with electron-stand-in.ts (vi.mock, as
 *   the other app tests do); read from what it recorded.
 * - On Electron: the built app (dist/app/main.js) launched by Playwright's
 *   `_electron`, with electron-hook.cjs loaded first (Electron keeps no list
 *   of trays); read and driven with electronApp.evaluate in its main process.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { _electron, type ElectronApplication } from '@playwright/test';
import type { MenuItem } from './electron-stand-in.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOOK = path.join(ROOT, 'test-support', 'electron-hook.cjs');

/** A tray item as both show it. */
export type TrayItem = Pick<MenuItem, 'id' | 'label' | 'enabled' | 'checked'> & { readonly submenu?: readonly TrayItem[] };

interface AppWindow {
  readonly url: string;
  readonly visible: boolean;
}

export interface DesktopApp {
  /** Which one runs: 'Electron' or 'the stand-in'. */
  readonly on: string;
  trayMenu(): Promise<readonly TrayItem[]>;
  /** The user picks an item of the tray's menu (by id; submenus too). */
  clickTrayItem(id: string): Promise<void>;
  /** The user clicks the tray's icon. */
  clickTrayIcon(): Promise<void>;
  /** The open windows. */
  windows(): Promise<readonly AppWindow[]>;
  /** Resolves once the app has gone all the way through Quit; rejects after `ms`. */
  exited(ms: number): Promise<void>;
  /** Quits if it still runs, and makes sure it is gone (for afterAll). */
  close(): Promise<void>;
}

/** Polls `get` every 50 ms until it gives something truthy; the error names `what` and what was last seen. */
export async function until<T>(get: () => Promise<T | undefined | false>, ms: number, what: string, seen?: () => Promise<unknown>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what} not reached in ${ms} ms${seen ? `; seen: ${JSON.stringify(await seen())}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** app/main.ts on the stand-in: the test file must mock `electron` with it. */
export async function onStandIn(): Promise<DesktopApp> {
  const s = await import('./electron-stand-in.js');
  await import('../app/main.js');
  const asItems = (items: readonly MenuItem[]): TrayItem[] =>
    items.map((i) => ({ id: i.id, label: i.label, enabled: i.enabled, checked: i.checked, ...(i.submenu && { submenu: asItems(i.submenu) }) }));
  return {
    on: 'the stand-in',
    trayMenu: () => Promise.resolve(asItems(s.trayMenu())),
    clickTrayItem: (id) => {
      const item = s.trayItem(id);
      if (!item?.click) return Promise.reject(new Error(`no tray item '${id}' to click`));
      item.click();
      return Promise.resolve();
    },
    clickTrayIcon: () => Promise.resolve(s.rec.trays[0]?.click()),
    windows: () =>
      Promise.resolve(
        s.rec.windows.filter((w) => !w.isDestroyed()).map((w) => ({ url: w.webContents.getURL(), visible: w.isVisible() })),
      ),
    exited: async (ms) => {
      await s.untilTray(() => s.rec.exited, ms, 'the app to exit');
    },
    close: async () => {
      if (!s.rec.exited) s.standInApp.quit();
      await s.untilTray(() => s.rec.exited, 10_000).catch(() => undefined);
    },
  };
}

/** What electron-hook.cjs keeps in Electron's main process. */
interface Seen {
  readonly trays: Electron.Tray[];
  readonly menus: Map<Electron.Tray, Electron.Menu>;
}

/** The built app on Electron's binary `binary`, with `env` as its environment. */
export async function onElectron(binary: string, env: NodeJS.ProcessEnv): Promise<DesktopApp> {
  const app: ElectronApplication = await _electron.launch({ executablePath: binary, args: ['-r', HOOK, ROOT], env: env as Record<string, string>, timeout: 30_000 });
  const gone = new Promise<void>((resolve) => app.on('close', () => resolve()));
  let exited = false;
  void gone.then(() => (exited = true));
  return {
    on: 'Electron',
    trayMenu: () =>
      app.evaluate(() => {
        const seen = (globalThis as unknown as { __dotstubSeen: Seen }).__dotstubSeen;
        const tray = seen.trays[0];
        const menu = tray && seen.menus.get(tray);
        const asItems = (items: readonly Electron.MenuItem[]): TrayItem[] =>
          items.map((i) => ({ id: i.id, label: i.label, enabled: i.enabled, checked: i.checked, ...(i.submenu && { submenu: asItems(i.submenu.items) }) }));
        return menu ? asItems(menu.items) : [];
      }),
    clickTrayItem: (id) =>
      app.evaluate((_electron, itemId) => {
        const seen = (globalThis as unknown as { __dotstubSeen: Seen }).__dotstubSeen;
        const tray = seen.trays[0];
        const item = tray && seen.menus.get(tray)?.getMenuItemById(itemId);
        if (!item) throw new Error(`no tray item '${itemId}' to click`);
        item.click({} as Electron.KeyboardEvent, undefined, undefined);
      }, id),
    clickTrayIcon: () =>
      app.evaluate(() => {
        const tray = (globalThis as unknown as { __dotstubSeen: Seen }).__dotstubSeen.trays[0];
        tray?.emit('click', {}, { x: 0, y: 0, width: 22, height: 22 }, { x: 11, y: 11 });
      }),
    windows: () =>
      app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().map((w) => ({ url: w.webContents.getURL(), visible: w.isVisible() }))),
    exited: async (ms) => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([gone, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`Electron did not exit within ${ms} ms of Quit`)), ms)))]);
      clearTimeout(timer);
    },
    close: async () => {
      if (exited) return;
      await app.evaluate(({ app: a }) => a.quit()).catch(() => undefined);
      const t = setTimeout(() => app.process().kill('SIGKILL'), 15_000);
      await gone;
      clearTimeout(t);
    },
  };
}
