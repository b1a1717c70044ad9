/**
 * The guards every page the app shows goes through (Electron's security
 * checklist), set on each web contents as Electron creates it:
 *
 * - the dashboard's pages may navigate and redirect only within the control
 *   origin; webviews are refused; new windows are refused, and allow-listed
 *   https links open in the user's browser instead;
 * - the sign-in window browses the portal (any host of the network, its
 *   redirects) and nothing else: never this machine's pages (the
 *   dashboard, local services) nor files or other schemes, and says why
 *   (sign-in-refusals.ts); a new window it asks for opens in itself, never
 *   as a second window;
 * - no page is granted a permission.
 */
import { app, session, shell, type WebContents } from 'electron';
import { pageRefusal } from './sign-in-refusals.js';
import { isAllowedExternal, isAllowedNavigation } from './urls.js';

export interface GuardOptions {
  /** The running proxy's control origin; undefined while none runs (then nothing may be navigated to). */
  readonly controlOrigin: () => string | undefined;
  /** Whether `contents` is the sign-in window's page. */
  readonly isSignIn: (contents: WebContents) => boolean;
  /** The sign-in window was kept from a page: the sentence says why (the user is told). */
  readonly signInRefused?: (sentence: string) => void;
}

/** Sets the guards on every web contents created from now on. */
export function guardNavigation(options: GuardOptions): void {
  app.on('web-contents-created', (_event, contents) => {
    if (options.isSignIn(contents)) {
      const keepToTheNetwork = (how: 'navigate' | 'redirect') => (e: { preventDefault(): void }, url: string): void => {
        const refused = pageRefusal(url, how);
        if (refused === null) return;
        e.preventDefault();
        options.signInRefused?.(refused);
      };
      contents.on('will-navigate', keepToTheNetwork('navigate'));
      contents.on('will-redirect', keepToTheNetwork('redirect'));
      contents.on('will-attach-webview', (e) => e.preventDefault());
      contents.setWindowOpenHandler(({ url }) => {
        // loadURL is the app's own navigation (no will-navigate): checked here.
        const refused = pageRefusal(url, 'new-window');
        if (refused === null) void contents.loadURL(url);
        else options.signInRefused?.(refused);
        return { action: 'deny' };
      });
      return;
    }
    contents.on('will-navigate', (e, url) => {
      if (!isAllowedNavigation(url, options.controlOrigin())) e.preventDefault();
    });
    contents.on('will-redirect', (e, url) => {
      if (!isAllowedNavigation(url, options.controlOrigin())) e.preventDefault();
    });
    contents.on('will-attach-webview', (e) => e.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      if (isAllowedExternal(url)) void shell.openExternal(url);
      return { action: 'deny' };
    });
  });
}

/** No permission for any page of the default session (the sign-in session refuses its own). Call once the app is ready. */
export function refusePermissions(): void {
  session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);
}
