/**
 * A stand-in for the `electron` module, for tests of app/main.ts without
 * Electron's binary (it can't be downloaded here): the tray, windows,
 * notifications, IPC and app events the app uses, each recorded in `rec`.
 * A test file mocks electron with it and reads `rec`:
 *
 *   vi.mock('electron', async () => (await import('../test-support/electron-stand-in.js')).electronStandIn());
 */
export interface MenuItem {
  readonly id?: string;
  readonly type?: string;
  readonly label?: string;
  readonly checked?: boolean;
  readonly enabled?: boolean;
  readonly click?: () => void;
}
export type Handler = (...args: unknown[]) => unknown;

/** What the app did to the stand-in: menus, tooltips, windows, notifications, IPC handlers, app events, whether it quit. */
export const rec = (() => {
  const r = {
    menus: [] as MenuItem[][],
    tooltips: [] as string[],
    windows: [] as { opts: { webPreferences: Record<string, unknown> }; url: string }[],
    notifications: [] as string[],
    ipc: new Map<string, Handler>(),
    appHandlers: new Map<string, Handler[]>(),
    exited: false,
  };
  return r;
})();

/** The `electron` module as app/main.ts uses it, recording into `rec`. */
export function electronStandIn(): Record<string, unknown> {
  class Tray {
    setImage(): void {}
    setToolTip(t: string): void {
      rec.tooltips.push(t);
    }
    setContextMenu(m: MenuItem[]): void {
      rec.menus.push(m);
    }
    on(): void {}
  }
  class BrowserWindow {
    readonly opts: { webPreferences: Record<string, unknown> };
    url = '';
    readonly webContents = { getURL: (): string => this.url };
    constructor(opts: { webPreferences: Record<string, unknown> }) {
      this.opts = opts;
      rec.windows.push(this);
    }
    loadURL(u: string): Promise<void> {
      this.url = u;
      return Promise.resolve();
    }
    on(): void {}
    once(): void {}
    show(): void {}
    focus(): void {}
    hide(): void {}
  }
  class Notification {
    readonly body: string;
    static isSupported(): boolean {
      return true;
    }
    constructor(o: { body: string }) {
      this.body = o.body;
    }
    show(): void {
      rec.notifications.push(this.body);
    }
  }
  const emit = (event: string, ...args: unknown[]): void => {
    for (const h of rec.appHandlers.get(event) ?? []) h(...args);
  };
  const app = {
    requestSingleInstanceLock: () => true,
    whenReady: () => Promise.resolve(),
    getVersion: () => '0.1.0',
    on: (event: string, h: Handler) => rec.appHandlers.set(event, [...(rec.appHandlers.get(event) ?? []), h]),
    // As Electron does: quit emits before-quit, which may prevent it.
    quit: () => {
      let prevented = false;
      emit('before-quit', { preventDefault: () => (prevented = true) });
      if (!prevented) rec.exited = true;
    },
  };
  return {
    app,
    BrowserWindow,
    Notification,
    Tray,
    ipcMain: { handle: (channel: string, h: Handler) => rec.ipc.set(channel, h) },
    Menu: { buildFromTemplate: (t: MenuItem[]) => t },
    nativeImage: { createFromPath: (p: string) => ({ path: p }) },
    session: { defaultSession: { setPermissionRequestHandler: () => undefined, setPermissionCheckHandler: () => undefined } },
    shell: { openExternal: () => Promise.resolve() },
  };
}
