/**
 * Electron main process: connects DesktopController (all the logic, no
 * Electron) to the tray, the windows (windows/), IPC (ipc-handlers.ts) and
 * the navigation guards (security/navigation-guards.ts), and owns the quit
 * sequence. Keep it thin.
 *
 * Security (Electron's checklist): the window is sandboxed with context
 * isolation and no Node; it may only show the running proxy's control
 * origin; new windows are refused (allow-listed https links go to the
 * user's browser); no permissions are granted; every IPC call's sender must
 * be the dashboard.
 *
 * Run by main.test.ts and the other app tests against a stand-in for the
 * `electron` module (test-support/electron-stand-in.ts), and by
 * desktop-app.test.ts on real Electron where its binary is installed
 * (app/README.md, "Real Electron or the stand-in").
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, Menu, nativeImage, Notification, Tray, type NativeImage } from 'electron';
import { DesktopController, type DesktopUi } from './desktop-controller.js';
import { handleIpc } from './ipc-handlers.js';
import { guardNavigation, refusePermissions } from './security/navigation-guards.js';
import { DashboardWindow } from './windows/dashboard-window.js';
import { SignInWindow } from './windows/sign-in-window.js';
import { ProxySupervisor } from './proxy-process/supervisor.js';
import { chooseProxy, ServiceConnection } from './proxy-process/service-connection.js';
import { DEFAULT_CONTROL_SOCKET } from '../proxy/control/socket-access.js';
import { toElectronMenu } from './tray/electron-menu.js';
import { APP_ICON, iconForState } from './tray/icon-for-state.js';
import { createTemplate } from './tray/template.js';
import { tooltipFor } from './tray/tooltip.js';
import type { TrayAction, TrayState } from './tray/types.js';

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
  const controlOrigin = (): string | undefined => controller.client?.origin;
  const dashboard = new DashboardWindow({ icon: icon(APP_ICON), preload: path.join(here, 'preload.cjs') });
  // What the sign-in window refused, and why: told as any other report (ui is defined below, called later).
  const signIn = new SignInWindow(icon(APP_ICON), (sentence) => ui.report(sentence));
  let tray: Tray | undefined;
  let stopped = false;

  function showDashboard(): void {
    const client = controller.client;
    if (client) return dashboard.show(client);
    ui.report(source instanceof ServiceConnection ? `The dotstub service is not available: ${source.service.reason || 'not running'}` : 'dotstub is not running: choose Resume private DNS first');
  }
  const ui: DesktopUi = {
    openDashboard: showDashboard,
    quit: () => app.quit(),
    report: (message) => {
      if (Notification.isSupported()) new Notification({ title: 'dotstub', body: message }).show();
      else console.error(`dotstub: ${message}`);
    },
    openSignIn: (view) => signIn.open(view),
  };
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

  handleIpc({ controlOrigin, isDashboard: (contents) => dashboard.owns(contents), hideWindow: () => dashboard.hide() });
  guardNavigation({ controlOrigin, isSignIn: (contents) => signIn.owns(contents), signInRefused: (sentence) => signIn.refused(sentence) });
  app.on('second-instance', showDashboard);
  // Stay in the tray when the window closes.
  app.on('window-all-closed', () => undefined);
  app.on('before-quit', (e) => {
    dashboard.allowClose();
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
    notification.on('click', showDashboard);
    notification.show();
  });
  // Signed in: the portal's window has done its job (and its proxy is gone).
  controller.on('network-open', () => signIn.close());
  controller.on('ready', () => {
    if (controller.client) dashboard.follow(controller.client);
  });

  void app.whenReady().then(() => {
    refusePermissions();
    tray = new Tray(icon(iconForState(controller.trayState)));
    tray.on('click', showDashboard);
    renderTray(controller.trayState);
    void controller.start();
  });
}

if (app.requestSingleInstanceLock()) run();
else app.quit();
