/**
 * The "Sign in to network" window against the stand-in `electron` (typed
 * against Electron's API): its own session partition through the sign-in
 * proxy, the proxy's 407 answered for its page only, the guards that let it
 * browse the network's pages (and nothing of this machine's) while the
 * dashboard's rules stay for the rest, and its close; and what it refuses
 * (a portal URL that is no page of the network, permissions, downloads,
 * other schemes), each said once in words.
 */
import { describe, expect, test, vi } from 'vitest';
import { electronStandIn, rec, standInApp, type BrowserWindow } from '../../test-support/electron-stand-in.js';
import { guardNavigation } from '../security/navigation-guards.js';
import { SignInWindow } from './sign-in-window.js';

vi.mock('electron', async () => (await import('../../test-support/electron-stand-in.js')).electronStandIn());

const view = { portalUrl: 'http://portal.hotspot.test/login', proxy: { url: 'http://127.0.0.1:41234', username: 'dotstub', password: 's3cret' } };
const proxyAuth = { isProxy: true, scheme: 'basic', host: '127.0.0.1', port: 41234, realm: 'dotstub sign-in' };

describe('the sign-in window', () => {
  const { nativeImage } = electronStandIn() as Pick<typeof import('electron'), 'nativeImage'>;
  /** What the window told the user it refused. */
  const told: string[] = [];
  const signIn = new SignInWindow(nativeImage.createFromPath('assets/app.png'), (sentence) => told.push(sentence));
  guardNavigation({ controlOrigin: () => 'http://127.0.0.1:5380', isSignIn: (c) => signIn.owns(c), signInRefused: (sentence) => signIn.refused(sentence) });

  test('opens the portal in its own session, every request through the sign-in proxy; its 407 is answered for it alone', async () => {
    signIn.open(view);
    const win = await vi.waitUntil(() => rec.windows[0]);
    expect(rec.proxies).toEqual([{ partition: 'dotstub-captive-sign-in', config: { proxyRules: 'http=127.0.0.1:41234;https=127.0.0.1:41234', proxyBypassRules: '' } }]);
    expect(win.webContents.session.partition).toBe('dotstub-captive-sign-in');
    expect(win.webContents.session.permissionRequest).not.toBeNull();
    expect(win.webContents.getURL()).toBe(view.portalUrl);
    expect(win.options.webPreferences).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false });
    expect(win.options.webPreferences?.preload).toBeUndefined();

    expect(standInApp.login(win.webContents, proxyAuth)).toEqual({ username: 'dotstub', password: 's3cret' });
    // Not a proxy's question, or not this window's page: Electron's own answer (cancel), never the credential.
    expect(standInApp.login(win.webContents, { ...proxyAuth, isProxy: false })).toBeUndefined();
    const { BrowserWindow: Window } = electronStandIn() as { BrowserWindow: new () => BrowserWindow };
    const other = new Window();
    expect(standInApp.login(other.webContents, proxyAuth)).toBeUndefined();

    // The portal browses where it likes; a window it opens opens in itself.
    expect(win.webContents.navigateFromPage('https://auth.hotspot.example/sso')).toBe(true);
    expect(win.webContents.openFromPage('https://pay.hotspot.example/')).toEqual({ action: 'deny' });
    expect(win.webContents.getURL()).toBe('https://pay.hotspot.example/');
    expect(rec.windows).toHaveLength(2);
    // The network's pages only: not this machine's (the dashboard, a local service), not a file, by any way in.
    for (const url of ['http://127.0.0.1:5380/#token=abc', 'http://localhost:631/', 'file:///etc/passwd']) {
      expect(win.webContents.navigateFromPage(url), url).toBe(false);
      expect(win.webContents.redirect(url), url).toBe(false);
      expect(win.webContents.openFromPage(url), url).toEqual({ action: 'deny' });
    }
    expect(win.webContents.getURL()).toBe('https://pay.hotspot.example/');
    expect(win.webContents.redirect('http://login.hotspot.test/login')).toBe(true);
    expect(rec.windows).toHaveLength(2);
    // Any other page keeps the dashboard's rules.
    expect(other.webContents.navigateFromPage('https://auth.hotspot.example/sso')).toBe(false);

    // Opened again: the same window, on the new view's page and credential.
    signIn.open({ ...view, portalUrl: 'http://portal.hotspot.test/again', proxy: { ...view.proxy, password: 'n3w' } });
    await vi.waitUntil(() => win.webContents.getURL() === 'http://portal.hotspot.test/again');
    expect(rec.windows).toHaveLength(2);
    expect(standInApp.login(win.webContents, proxyAuth)).toEqual({ username: 'dotstub', password: 'n3w' });

    // The network let us out: the app closes it, and its credential is answered no more.
    signIn.close();
    expect(win.isDestroyed()).toBe(true);
    expect(rec.events.slice(-2)).toEqual(['window close', 'window closed']);
    expect(standInApp.login(win.webContents, proxyAuth)).toBeUndefined();
    signIn.close();
    other.close();
  });

  test('a portal URL that is no page of the network is not opened, nor given a proxy; permissions and downloads are refused; each refusal is said once, in words', async () => {
    const windows = rec.windows.length;
    const proxies = rec.proxies.length;
    told.length = 0;
    for (const portalUrl of ['file:///home/user/.ssh/id_ed25519', 'http://127.0.0.1:5380/#token=abc', 'data:text/html,<h1>hi</h1>', 'http://169.254.169.254/latest/meta-data/']) {
      signIn.open({ ...view, portalUrl });
    }
    await new Promise((r) => setTimeout(r, 20));
    expect(rec.windows).toHaveLength(windows);
    expect(rec.proxies).toHaveLength(proxies);
    expect(told).toEqual([
      'The network’s sign-in address was not opened: a file: address is not a web page of the network. The sign-in window shows the network’s web pages only.',
      'The network’s sign-in address was not opened: 127.0.0.1 is this machine (loopback). The sign-in window shows the network’s web pages only.',
      'The network’s sign-in address was not opened: a data: address is not a web page of the network. The sign-in window shows the network’s web pages only.',
      expect.stringContaining('169.254.169.254 is the cloud metadata service'),
    ]);
    expect(told.join('\n')).not.toContain('token=abc');

    told.length = 0;
    signIn.open(view);
    const win = await vi.waitUntil(() => rec.windows.at(-1)?.webContents.getURL() === view.portalUrl && rec.windows.at(-1));
    const contents = win.webContents;
    const ses = contents.session;
    for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read', 'media'] as const) {
      expect(await ses.requestPermission(contents, permission), permission).toBe(false);
    }
    expect(ses.permissionCheck?.(contents as never, 'media', 'http://portal.hotspot.test', { isMainFrame: true, requestingUrl: view.portalUrl } as never)).toBe(false);
    expect(ses.permissionCheck?.(contents as never, 'clipboard-read', 'http://portal.hotspot.test', { isMainFrame: true, requestingUrl: view.portalUrl } as never)).toBe(false);
    expect(ses.download(contents, 'free-wifi-setup.exe', 'http://portal.hotspot.test/setup.exe')).toBe(false);
    expect(contents.navigateFromPage('file:///etc/passwd')).toBe(false);
    expect(contents.navigateFromPage('file:///etc/shadow')).toBe(false);
    expect(told).toEqual([
      "The sign-in page asked to use your camera or microphone: refused. A Wi-Fi sign-in page needs none of this computer's devices or data.",
      expect.stringContaining('asked to know your location: refused'),
      expect.stringContaining('asked to show notifications: refused'),
      expect.stringContaining('asked to read your clipboard: refused'),
      expect.stringContaining('tried to download free-wifi-setup.exe: refused, nothing was saved'),
      'The sign-in page tried to go to a page that was refused: a file: address is not a web page of the network. The sign-in window shows the network’s web pages only.',
    ]);
    signIn.close();
  });
});
