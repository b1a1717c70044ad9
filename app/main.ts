/**
 * Electron main process: connects DesktopController (all the logic, no
 * Electron) to the tray, the dashboard window and IPC. Keep it thin.
 *
 * Security (Electron's checklist): the window is sandboxed with context
 * isolation and no Node; it may only show the running proxy's control
 * origin; new windows are refused (allow-listed https links go to the
 * user's browser); no permissions are granted; every IPC call's sender must
 * be the dashboard.
 *
 * Not run on the machine this was written on (no Electron binary there):
 * typechecked only. See app/README.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  app,
  BrowserWindow,
  ipcMain,
  Menu,
  nativeImage,
  Notification,
  session,
  shell,
  Tray,
  type IpcMainInvokeEvent,
  type NativeImage,
} from 'electron';
import { DesktopController, type DesktopUi } from './desktop-controller.js';
import { IPC, type DesktopInfo } from './ipc.js';
import { isAllowedExternal, isAllowedNavigation, isTrustedSender } from './security/urls.js';
import { ProxySupervisor } from './proxy-process/supervisor.js';
import { chooseProxy, ServiceConnection } from './proxy-process/service-connection.js';
import { DEFAULT_CONTROL_SOCKET } from '../proxy/control/socket-access.js';
import { toElectronMenu } from './tray/electron-menu.js';
import { APP_ICON, iconForState } from './tray/icon-for-state.js';
import { createTemplate } from './tray/template.js';
import { tooltipFor } from './tray/tooltip.js';
import type { TrayAction, TrayState } from './tray/types.js';
import type { SignInView } from '../proxy/control/api-types.js';

// The package root (bin/, assets/): two up from dist/app/main.js, one up
// from app/main.ts (the wiring test runs the source).
const here = path.dirname(fileURLToPath(import.meta.url));
const root = [path.join(here, '..', '..'), path.join(here, '..')].find((d) => fs.existsSync(path.join(d, 'bin', 'dotstub.js'))) ?? path.join(here, '..', '..');
const ASSETS = path.join(root, 'assets');

function icon(file: string): NativeImage {
  // nativeImage picks file@2x.png beside it on high-DPI screens.
  return nativeImage.createFromPath(path.join(ASSETS, file));
}

/** Extra proxy flags for development, e.g. DOTSTUB_PROXY_ARGS="--listen 127.0.0.1:5300" (port 53 needs privileges). */
function proxyArgs(): string[] {
  // --system-dns: the tray's "Enable private DNS" goes through this proxy's
  // control API (it answers "needs root" unless the proxy may change DNS).
  return ['--system-dns', ...(process.env.DOTSTUB_PROXY_ARGS ?? '').split(/\s+/).filter((a) => a !== '')];
}

/**
 * One proxy per machine: where the dotstub service is installed (its unit
 * file or its socket), the app drives it over /run/dotstub/control.sock and
 * never starts its own; else it starts its own, unprivileged proxy.
 * DOTSTUB_CONTROL_SOCKET points at another socket (development).
 */
function proxySource(): ProxySupervisor | ServiceConnection {
  const socketPath = process.env.DOTSTUB_CONTROL_SOCKET ?? DEFAULT_CONTROL_SOCKET;
  if (chooseProxy({ socketPath }) === 'service') return new ServiceConnection({ socketPath });
  const supervisor = new ProxySupervisor({
    script: path.join(root, 'bin', 'dotstub.js'),
    args: proxyArgs(),
    // process.execPath is Electron itself: run it as plain Node for the proxy.
    execPath: process.execPath,
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
  });
  supervisor.on('log', (line) => console.error(line));
  return supervisor;
}

function run(): void {
  const source = proxySource();
  const controller = new DesktopController(source);

  let tray: Tray | undefined;
  let win: BrowserWindow | undefined;
  let quitting = false;
  let stopped = false;

  const controlOrigin = (): string | undefined => controller.client?.origin;

  const ui: DesktopUi = {
    openDashboard: () => showDashboard(),
    quit: () => app.quit(),
    report: (message) => {
      if (Notification.isSupported()) new Notification({ title: 'dotstub', body: message }).show();
      else console.error(`dotstub: ${message}`);
    },
    openSignIn: (view) => openSignIn(view),
  };

  // "Sign in to network": the portal's page in a window of its own, in an in-memory session
  // partition whose every request goes through the proxy's sign-in proxy (which resolves at the
  // network's resolver). Nothing else on the machine uses that proxy; this window uses nothing else.
  let signInWin: BrowserWindow | undefined;
  let signInCredential: SignInView['proxy'] | undefined;
  const SIGN_IN_PARTITION = 'dotstub-captive-sign-in';
  function openSignIn(view: SignInView): void {
    signInCredential = view.proxy;
    const signInSession = session.fromPartition(SIGN_IN_PARTITION, { cache: false });
    const hostPort = view.proxy.url.replace(/^http:\/\//, '');
    void signInSession
      .setProxy({ proxyRules: `http=${hostPort};https=${hostPort}`, proxyBypassRules: '' })
      .then(() => {
        signInSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
        signInWin ??= new BrowserWindow({
          width: 900,
          height: 760,
          title: 'Sign in to network',
          icon: icon(APP_ICON),
          autoHideMenuBar: true,
          webPreferences: { session: signInSession, sandbox: true, contextIsolation: true, nodeIntegration: false, webviewTag: false, spellcheck: false },
        });
        signInWin.on('closed', () => (signInWin = undefined));
        void signInWin.loadURL(view.portalUrl);
        signInWin.show();
      });
  }
  // The sign-in proxy asks for its credential (407): answer for the sign-in window only.
  app.on('login', (event, webContents, _details, authInfo, callback) => {
    if (!authInfo.isProxy || !signInCredential || !signInWin || webContents?.id !== signInWin.webContents.id) return;
    event.preventDefault();
    callback(signInCredential.username, signInCredential.password);
  });

  const dispatch = (action: TrayAction): void => {
    void controller.dispatch(action, ui).catch((err: unknown) => ui.report(err instanceof Error ? err.message : String(err)));
  };

  function renderTray(state: TrayState): void {
    if (!tray) return;
    tray.setImage(icon(iconForState(state)));
    tray.setToolTip(tooltipFor(state));
    // Linux (AppIndicator) needs the menu set again after every change.
    tray.setContextMenu(Menu.buildFromTemplate(toElectronMenu(createTemplate(state), dispatch)));
  }

  function createWindow(): BrowserWindow {
    const w = new BrowserWindow({
      width: 1200,
      height: 820,
      show: false,
      title: 'dotstub',
      icon: icon(APP_ICON),
      autoHideMenuBar: true,
      webPreferences: {
        preload: path.join(here, 'preload.cjs'),
        sandbox: true,
        contextIsolation: true,
        nodeIntegration: false,
        nodeIntegrationInWorker: false,
        nodeIntegrationInSubFrames: false,
        webviewTag: false,
        webSecurity: true,
        allowRunningInsecureContent: false,
        navigateOnDragDrop: false,
        spellcheck: false,
      },
    });
    // Closing the window keeps dotstub in the tray; Quit is in the tray menu.
    w.on('close', (e) => {
      if (quitting) return;
      e.preventDefault();
      w.hide();
    });
    w.on('closed', () => (win = undefined));
    w.once('ready-to-show', () => w.show());
    return w;
  }

  function showDashboard(): void {
    const client = controller.client;
    if (!client) {
      return ui.report(source instanceof ServiceConnection ? `The dotstub service is not available: ${source.service.reason || 'not running'}` : 'dotstub is not running: choose Resume private DNS first');
    }
    win ??= createWindow();
    if (!isAllowedNavigation(win.webContents.getURL(), client.origin)) void win.loadURL(client.dashboardUrl);
    win.show();
    win.focus();
  }

  // Every IPC call: the sender must be a frame showing the dashboard.
  function handle<A extends unknown[], R>(channel: string, fn: (event: IpcMainInvokeEvent, ...args: A) => R): void {
    ipcMain.handle(channel, (event, ...args: unknown[]) => {
      if (!isTrustedSender(event.senderFrame?.url, controlOrigin())) throw new Error(`${channel}: refused, the sender is not the dotstub dashboard`);
      return fn(event, ...(args as A));
    });
  }

  handle(IPC.openExternal, async (_event, url: unknown) => {
    if (typeof url !== 'string' || !isAllowedExternal(url)) return false;
    await shell.openExternal(url);
    return true;
  });
  handle(IPC.getInfo, (): DesktopInfo => ({ appVersion: app.getVersion(), electronVersion: process.versions.electron ?? '', platform: process.platform }));
  handle(IPC.hideWindow, () => {
    win?.hide();
  });

  app.on('web-contents-created', (_event, contents) => {
    // The sign-in window browses the portal (any host, its redirects); it has no preload, no Node, no IPC.
    if (contents.session === session.fromPartition(SIGN_IN_PARTITION, { cache: false })) {
      contents.setWindowOpenHandler(({ url }) => {
        void contents.loadURL(url);
        return { action: 'deny' };
      });
      return;
    }
    contents.on('will-navigate', (e, url) => {
      if (!isAllowedNavigation(url, controlOrigin())) e.preventDefault();
    });
    contents.on('will-redirect', (e, url) => {
      if (!isAllowedNavigation(url, controlOrigin())) e.preventDefault();
    });
    contents.on('will-attach-webview', (e) => e.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      if (isAllowedExternal(url)) void shell.openExternal(url);
      return { action: 'deny' };
    });
  });

  app.on('second-instance', () => showDashboard());
  // Stay in the tray when the window closes.
  app.on('window-all-closed', () => undefined);
  app.on('before-quit', (e) => {
    quitting = true;
    if (stopped) return;
    // Stop the proxy first (SIGTERM, SIGKILL after the deadline), then quit for real.
    e.preventDefault();
    void controller.shutdown().finally(() => {
      stopped = true;
      app.quit();
    });
  });

  controller.on('tray', renderTray);
  controller.on('notice', (n) => {
    if (!Notification.isSupported()) return;
    const notification = new Notification({ title: n.title, body: n.body });
    notification.on('click', () => showDashboard());
    notification.show();
  });
  controller.on('ready', () => {
    // A restarted proxy listens on a new control port: follow it.
    const client = controller.client;
    if (win && client && !isAllowedNavigation(win.webContents.getURL(), client.origin)) void win.loadURL(client.dashboardUrl);
  });

  void app.whenReady().then(() => {
    session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
    session.defaultSession.setPermissionCheckHandler(() => false);
    tray = new Tray(icon(iconForState(controller.trayState)));
    tray.on('click', () => showDashboard());
    renderTray(controller.trayState);
    void controller.start();
  });
}

if (app.requestSingleInstanceLock()) run();
else app.quit();
