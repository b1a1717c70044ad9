/**
 * The dashboard window: the running proxy's own dashboard, sandboxed, with
 * the preload's named methods only (app/preload.ts). One at a time; closing
 * it hides it (dotstub stays in the tray) until the app is quitting.
 *
 * Invariant: the window shows the current control origin or nothing; a
 * restarted proxy (new control port) is followed by `follow`.
 */
import { BrowserWindow, type NativeImage, type WebContents } from 'electron';
import { isAllowedNavigation } from '../security/urls.js';

/** Where the running proxy's dashboard is (ControlClient's view of it). */
export interface DashboardAddress {
  readonly origin: string;
  readonly dashboardUrl: string;
}

export interface DashboardWindowOptions {
  readonly icon: NativeImage;
  /** dist/app/preload.cjs */
  readonly preload: string;
}

export class DashboardWindow {
  readonly #options: DashboardWindowOptions;
  #win: BrowserWindow | undefined;
  #quitting = false;

  constructor(options: DashboardWindowOptions) {
    this.#options = options;
  }

  /** Shows the window (creating it), loading the dashboard unless it shows it already. */
  show(at: DashboardAddress): void {
    const win = (this.#win ??= this.#create());
    this.#load(win, at);
    win.show();
    win.focus();
  }

  /** A restarted proxy listens on a new control port: an open window follows it. */
  follow(at: DashboardAddress): void {
    if (this.#win) this.#load(this.#win, at);
  }

  hide(): void {
    this.#win?.hide();
  }

  /** Whether `contents` is this window's page (the only one the IPC handlers answer). */
  owns(contents: WebContents): boolean {
    return this.#win !== undefined && !this.#win.isDestroyed() && this.#win.webContents === contents;
  }

  /** From the app's quit on: closing the window closes it. */
  allowClose(): void {
    this.#quitting = true;
  }

  #load(win: BrowserWindow, at: DashboardAddress): void {
    if (!isAllowedNavigation(win.webContents.getURL(), at.origin)) void win.loadURL(at.dashboardUrl);
  }

  #create(): BrowserWindow {
    const w = new BrowserWindow({
      width: 1200,
      height: 820,
      show: false,
      title: 'dotstub',
      icon: this.#options.icon,
      autoHideMenuBar: true,
      webPreferences: {
        preload: this.#options.preload,
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
      if (this.#quitting) return;
      e.preventDefault();
      w.hide();
    });
    w.on('closed', () => (this.#win = undefined));
    w.once('ready-to-show', () => w.show());
    return w;
  }
}
