/**
 * "Sign in to network": the portal's page in a window of its own, in an
 * in-memory session partition whose every request goes through the proxy's
 * sign-in proxy (which resolves at the network's resolver). Nothing else on
 * the machine uses that proxy; this window uses nothing else. It has no
 * preload, no Node and no IPC.
 *
 * The sign-in proxy asks for its credential (407): the app's 'login' event
 * is answered for this window's page only, with the credential of the last
 * sign-in view. The app closes it once the network lets us out (captive →
 * private DNS): the proxy it browsed through ends with the sign-in.
 */
import { app, BrowserWindow, session, type NativeImage, type Session, type WebContents } from 'electron';
import type { SignInView } from '../../proxy/control/api-types.js';

const SIGN_IN_PARTITION = 'dotstub-captive-sign-in';

function signInSession(): Session {
  return session.fromPartition(SIGN_IN_PARTITION, { cache: false });
}

export class SignInWindow {
  readonly #icon: NativeImage;
  #win: BrowserWindow | undefined;
  #credential: SignInView['proxy'] | undefined;

  constructor(icon: NativeImage) {
    this.#icon = icon;
    app.on('login', (event, webContents, _details, authInfo, callback) => {
      if (!authInfo.isProxy || !this.#credential || !this.#win || webContents?.id !== this.#win.webContents.id) return;
      event.preventDefault();
      callback(this.#credential.username, this.#credential.password);
    });
  }

  /** Opens (or reuses) the window on the portal's page, through the sign-in proxy of `view`. */
  open(view: SignInView): void {
    this.#credential = view.proxy;
    const ses = signInSession();
    const hostPort = view.proxy.url.replace(/^http:\/\//, '');
    void ses.setProxy({ proxyRules: `http=${hostPort};https=${hostPort}`, proxyBypassRules: '' }).then(() => {
      ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
      const win = (this.#win ??= this.#create(ses));
      void win.loadURL(view.portalUrl);
      win.show();
    });
  }

  /** Closes the window, if open: the network let us out, and the sign-in proxy it browsed through is gone. */
  close(): void {
    this.#win?.close();
  }

  /** Whether `contents` belongs to the sign-in session (the portal browses any host; the dashboard's guards don't apply). */
  owns(contents: WebContents): boolean {
    return contents.session === signInSession();
  }

  #create(ses: Session): BrowserWindow {
    const win = new BrowserWindow({
      width: 900,
      height: 760,
      title: 'Sign in to network',
      icon: this.#icon,
      autoHideMenuBar: true,
      webPreferences: { session: ses, sandbox: true, contextIsolation: true, nodeIntegration: false, webviewTag: false, spellcheck: false },
    });
    win.on('closed', () => (this.#win = undefined));
    return win;
  }
}
