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
 *
 * The portal URL is the network's to choose, and loadURL fires no
 * will-navigate: open() checks it as the guards check a page's own
 * navigation, and opens nothing it refuses. The session grants no
 * permission and saves no download. Each refusal is told to the user
 * (`report`) in the words of security/sign-in-refusals.ts, once per window.
 */
import { app, BrowserWindow, session, type NativeImage, type Session, type WebContents } from 'electron';
import type { SignInView } from '../../proxy/control/api-types.js';
import { downloadRefusal, pageRefusal, permissionRefusal, RefusalNotices } from '../security/sign-in-refusals.js';

const SIGN_IN_PARTITION = 'dotstub-captive-sign-in';

function signInSession(): Session {
  return session.fromPartition(SIGN_IN_PARTITION, { cache: false });
}

export class SignInWindow {
  readonly #icon: NativeImage;
  #win: BrowserWindow | undefined;
  #credential: SignInView['proxy'] | undefined;
  readonly #report: (sentence: string) => void;
  readonly #notices = new RefusalNotices();
  /** The session's refusals are set once: the partition outlives each window. */
  #sessionGuarded = false;

  /** `report` tells the user what the window refused and why (a notification). */
  constructor(icon: NativeImage, report: (sentence: string) => void = () => undefined) {
    this.#icon = icon;
    this.#report = report;
    app.on('login', (event, webContents, _details, authInfo, callback) => {
      if (!authInfo.isProxy || !this.#credential || !this.#win || webContents?.id !== this.#win.webContents.id) return;
      event.preventDefault();
      callback(this.#credential.username, this.#credential.password);
    });
  }

  /** Opens (or reuses) the window on the portal's page, through the sign-in proxy of `view`; a page it may not show is not opened, and said. */
  open(view: SignInView): void {
    const refused = pageRefusal(view.portalUrl, 'open');
    if (refused !== null) {
      this.refused(refused);
      return;
    }
    this.#credential = view.proxy;
    const ses = signInSession();
    const hostPort = view.proxy.url.replace(/^http:\/\//, '');
    void ses.setProxy({ proxyRules: `http=${hostPort};https=${hostPort}`, proxyBypassRules: '' }).then(() => {
      this.#guardSession(ses);
      const win = (this.#win ??= this.#create(ses));
      void win.loadURL(view.portalUrl);
      win.show();
    });
  }

  /** Tells the user the window refused something, once per window for each sentence. */
  refused(sentence: string): void {
    if (this.#notices.say(sentence)) this.#report(sentence);
  }

  #guardSession(ses: Session): void {
    if (this.#sessionGuarded) return;
    this.#sessionGuarded = true;
    ses.setPermissionRequestHandler((_wc, permission, callback) => {
      callback(false);
      this.refused(permissionRefusal(permission));
    });
    // Checks are asked silently and often (a page testing what it may do): no, without a word.
    ses.setPermissionCheckHandler(() => false);
    ses.on('will-download', (event, item) => {
      event.preventDefault();
      this.refused(downloadRefusal(item.getFilename()));
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
    win.on('closed', () => {
      this.#win = undefined;
      this.#notices.reset();
    });
    return win;
  }
}
