/**
 * A stand-in for the `electron` module, for tests of the desktop app without
 * Electron's binary (it can't be downloaded here). A test file mocks
 * electron with it, drives it as Electron and a user would (a tray click, a
 * page that navigates or opens a window, an IPC call, a proxy's 407, Quit)
 * and reads what the app did in `rec`:
 *
 *   vi.mock('electron', async () => (await import('../test-support/electron-stand-in.js')).electronStandIn());
 *
 * Typed against Electron's own API (node_modules/electron/electron.d.ts,
 * installed without the binary), so `npm run typecheck` refuses a stand-in
 * that drifts from the pinned Electron:
 * - each class `implements` a Pick of Electron's class for the members the
 *   app uses, and takes Electron's constructor parameters; each module
 *   object `satisfies` a Pick of Electron's; a member that returns one of
 *   Electron's objects takes Electron's `Parameters<>` and returns the
 *   stand-in's object;
 * - each event it fires is declared with Electron's listener arguments
 *   (the *Events maps), checked against Electron's own `on` overloads
 *   below, and fired with exactly those arguments.
 * The stand-in's objects are handed to the app where Electron's are
 * expected (`asElectron`): they have the members the app uses, not the
 * hundreds of others.
 *
 * It fires what Electron fires, in Electron's order, for the paths the app
 * uses: `ready` after the main script, then `whenReady()`; a window's
 * `web-contents-created` inside its constructor; `will-navigate` and
 * `will-redirect` for a page's own navigation (not for loadURL, as in
 * Electron), the window-open handler for window.open and target=_blank
 * (Electron's default, with no handler, is to allow); tray `click`;
 * Quit: `before-quit`, each window's `close` and `closed`, `will-quit`,
 * `quit`, each preventable where Electron's is.
 */
import type * as E from 'electron';

/** A tray menu item as the test sees it: Electron's options, its click callable without Electron's arguments. */
export interface MenuItem {
  readonly id?: string;
  readonly type?: string;
  readonly label?: string;
  readonly checked?: boolean;
  readonly enabled?: boolean;
  readonly click?: () => void;
  readonly submenu?: readonly MenuItem[];
}

// ---- events, with Electron's listener arguments -------------------------------------------------

interface AppEvents {
  ready: [event: E.Event, launchInfo: Record<string, unknown> | E.NotificationResponse];
  'web-contents-created': [event: E.Event, webContents: E.WebContents];
  login: [event: E.Event, webContents: E.WebContents, details: E.AuthenticationResponseDetails, authInfo: E.AuthInfo, callback: (username?: string, password?: string) => void];
  'second-instance': [event: E.Event, argv: string[], workingDirectory: string, additionalData: unknown];
  'window-all-closed': [];
  'before-quit': [event: E.Event];
  'will-quit': [event: E.Event];
  quit: [event: E.Event, exitCode: number];
}
interface WebContentsEvents {
  'will-navigate': [details: E.Event<E.WebContentsWillNavigateEventParams>, url: string, isInPlace: boolean, isMainFrame: boolean, frameProcessId: number, frameRoutingId: number];
  'will-redirect': [details: E.Event<E.WebContentsWillRedirectEventParams>, url: string, isInPlace: boolean, isMainFrame: boolean, frameProcessId: number, frameRoutingId: number];
  'will-attach-webview': [event: E.Event, webPreferences: E.WebPreferences, params: Record<string, string>];
}
interface SessionEvents {
  'will-download': [event: E.Event, item: E.DownloadItem, webContents: E.WebContents];
}
interface WindowEvents {
  close: [event: E.Event];
  closed: [];
  'ready-to-show': [];
}
interface TrayEvents {
  click: [event: E.KeyboardEvent, bounds: E.Rectangle, position: E.Point];
}
interface NotificationEvents {
  click: [event: E.Event];
}

/** `ours` must be what Electron's listener takes (`electron`'s type, inferred from Electron's overload). */
function fits<T>(_electron: T, _ours: NoInfer<T>): void {}
type Checked<Target, Events> = { [K in keyof Events]: (target: Target, args: Events[K]) => unknown };
// Never run: each line compiles only while Electron's `on` has this event with listener arguments the stand-in's fit.
const _appEvents = {
  ready: (a, args) => a.on('ready', (...e) => fits(e, args)),
  'web-contents-created': (a, args) => a.on('web-contents-created', (...e) => fits(e, args)),
  login: (a, args) => a.on('login', (...e) => fits(e, args)),
  'second-instance': (a, args) => a.on('second-instance', (...e) => fits(e, args)),
  'window-all-closed': (a, args) => a.on('window-all-closed', (...e) => fits(e, args)),
  'before-quit': (a, args) => a.on('before-quit', (...e) => fits(e, args)),
  'will-quit': (a, args) => a.on('will-quit', (...e) => fits(e, args)),
  quit: (a, args) => a.on('quit', (...e) => fits(e, args)),
} satisfies Checked<E.App, AppEvents>;
const _webContentsEvents = {
  'will-navigate': (w, args) => w.on('will-navigate', (...e) => fits(e, args)),
  'will-redirect': (w, args) => w.on('will-redirect', (...e) => fits(e, args)),
  'will-attach-webview': (w, args) => w.on('will-attach-webview', (...e) => fits(e, args)),
} satisfies Checked<E.WebContents, WebContentsEvents>;
const _sessionEvents = {
  'will-download': (s, args) => s.on('will-download', (...e) => fits(e, args)),
} satisfies Checked<E.Session, SessionEvents>;
const _windowEvents = {
  close: (w, args) => w.on('close', (...e) => fits(e, args)),
  closed: (w, args) => w.on('closed', (...e) => fits(e, args)),
  'ready-to-show': (w, args) => w.once('ready-to-show', (...e) => fits(e, args)),
} satisfies Checked<E.BrowserWindow, WindowEvents>;
const _trayEvents = { click: (t, args) => t.on('click', (...e) => fits(e, args)) } satisfies Checked<E.Tray, TrayEvents>;
const _notificationEvents = { click: (n, args) => n.on('click', (...e) => fits(e, args)) } satisfies Checked<E.Notification, NotificationEvents>;

/** The stand-in's object where the app's (Electron-typed) code expects Electron's: it has the members the app uses. */
function asElectron<T>(standIn: object): T {
  return standIn as T;
}

type Listener = (...args: never[]) => unknown;

/** Listeners by event, typed by `M` (event → Electron's listener arguments), called in order as Node's emitter does. */
class Emitter<M extends object> {
  readonly #listeners = new Map<keyof M, { listener: Listener; once: boolean }[]>();

  on<K extends keyof M & string>(event: K, listener: (...args: M[K] & unknown[]) => void): this {
    this.#listeners.set(event, [...(this.#listeners.get(event) ?? []), { listener: listener as Listener, once: false }]);
    return this;
  }

  once<K extends keyof M & string>(event: K, listener: (...args: M[K] & unknown[]) => void): this {
    this.#listeners.set(event, [...(this.#listeners.get(event) ?? []), { listener: listener as Listener, once: true }]);
    return this;
  }

  listenerCount(event: keyof M): number {
    return this.#listeners.get(event)?.length ?? 0;
  }

  /** Fires `event` as Electron would, recording it as "source event". */
  fire<K extends keyof M & string>(source: string, event: K, ...args: M[K] & unknown[]): void {
    rec.events.push(`${source} ${event}`);
    const all = this.#listeners.get(event) ?? [];
    this.#listeners.set(
      event,
      all.filter((l) => !l.once),
    );
    for (const l of all) (l.listener as (...a: unknown[]) => unknown)(...args);
  }
}

/** An Electron event object: preventDefault and defaultPrevented, with `params`. */
function electronEvent<P extends object>(params: P): E.Event<P> & { readonly defaultPrevented: boolean } {
  let prevented = false;
  return Object.assign(
    {
      preventDefault: (): void => {
        prevented = true;
      },
      get defaultPrevented(): boolean {
        return prevented;
      },
    },
    params,
  );
}

// ---- what the app did ---------------------------------------------------------------------------

/** What the app did to the stand-in, in order. */
export const rec = {
  /** Every menu the tray was given, as the test sees its items. */
  menus: [] as MenuItem[][],
  tooltips: [] as string[],
  /** Each tray icon set (its file's path). */
  images: [] as string[],
  /** Every window the app created, first first. */
  windows: [] as BrowserWindow[],
  trays: [] as Tray[],
  /** Each notification's body, as shown. */
  notifications: [] as string[],
  ipc: new Map<string, (event: E.IpcMainInvokeEvent, ...args: unknown[]) => unknown>(),
  /** Each URL given to the user's browser (shell.openExternal). */
  externals: [] as string[],
  /** Each proxy set on a session: its partition ('' for the default session) and config. */
  proxies: [] as { partition: string; config: E.ProxyConfig }[],
  /** Every event fired, "source event", in order ("app ready", "window close", ...). */
  events: [] as string[],
  /** The app went all the way through Quit (will-quit was not prevented). */
  exited: false,
};

/** The tray's menu as the app last set it. */
export const trayMenu = (): readonly MenuItem[] => rec.menus.at(-1) ?? [];

/** A tray item by its id, in submenus too. */
export function trayItem(id: string, items: readonly MenuItem[] = trayMenu()): MenuItem | undefined {
  for (const i of items) {
    if (i.id === id) return i;
    const inner = i.submenu && trayItem(id, i.submenu);
    if (inner) return inner;
  }
  return undefined;
}

/** Polls `get` (every 20 ms) until it is truthy; on timeout the error names `what` and the tray's labels then. */
export async function untilTray<T>(get: () => T | undefined | false, ms = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what} not reached in ${ms} ms; tray: ${JSON.stringify(trayMenu().map((i) => i.label))}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// ---- the classes and modules the app uses -------------------------------------------------------

class NativeImage {
  constructor(readonly path: string) {}
}
const imagePath = (image: E.NativeImage | string): string => (typeof image === 'string' ? image : asElectron<NativeImage>(image).path);

const nativeImage = {
  createFromPath: (...[p]: Parameters<typeof E.nativeImage.createFromPath>): NativeImage => new NativeImage(p),
};

/** A download as the app sees it in `will-download`: its file name and address. */
class DownloadItem implements Pick<E.DownloadItem, 'getFilename' | 'getURL'> {
  constructor(
    readonly filename: string,
    readonly url: string,
  ) {}

  getFilename(): string {
    return this.filename;
  }

  getURL(): string {
    return this.url;
  }
}

class Session extends Emitter<SessionEvents> implements Pick<E.Session, 'setProxy' | 'setPermissionRequestHandler' | 'setPermissionCheckHandler'> {
  static readonly #partitions = new Map<string, Session>();
  static readonly defaultSession = new Session('');
  permissionRequest: Parameters<E.Session['setPermissionRequestHandler']>[0] = null;
  permissionCheck: Parameters<E.Session['setPermissionCheckHandler']>[0] = null;

  private constructor(readonly partition: string) {
    super();
  }

  /** As Electron: one session per partition name. */
  static fromPartition(...[partition]: Parameters<typeof E.session.fromPartition>): Session {
    let s = Session.#partitions.get(partition);
    if (!s) Session.#partitions.set(partition, (s = new Session(partition)));
    return s;
  }

  setProxy(config: E.ProxyConfig): Promise<void> {
    rec.proxies.push({ partition: this.partition, config });
    return Promise.resolve();
  }

  setPermissionRequestHandler(handler: Parameters<E.Session['setPermissionRequestHandler']>[0]): void {
    this.permissionRequest = handler;
  }

  setPermissionCheckHandler(handler: Parameters<E.Session['setPermissionCheckHandler']>[0]): void {
    this.permissionCheck = handler;
  }

  /** A page of `contents` starts a download: `will-download`; saved unless prevented. Whether it was saved. */
  download(contents: WebContents, filename: string, url: string): boolean {
    const event = electronEvent({});
    this.fire('session', 'will-download', event, asElectron<E.DownloadItem>(new DownloadItem(filename, url)), asElectron<E.WebContents>(contents));
    return !event.defaultPrevented;
  }

  /** A page asks for `permission` (the request handler's answer; with none, Electron grants it). */
  requestPermission(contents: WebContents, permission: Parameters<Parameters<E.Session['setPermissionRequestHandler']>[0] & object>[1]): Promise<boolean> {
    const handler = this.permissionRequest;
    if (!handler) return Promise.resolve(true);
    return new Promise((resolve) => handler(asElectron<E.WebContents>(contents), permission, resolve, { requestingUrl: contents.getURL(), isMainFrame: true }));
  }
}

let nextWebContentsId = 1;

export class WebContents extends Emitter<WebContentsEvents> implements Pick<E.WebContents, 'id' | 'getURL' | 'loadURL' | 'setWindowOpenHandler' | 'isDestroyed'> {
  readonly id = nextWebContentsId++;
  readonly session: Session;
  #url = '';
  #openHandler: Parameters<E.WebContents['setWindowOpenHandler']>[0] | undefined;
  readonly #onLoad: () => void;

  constructor(ses: Session, onLoad: () => void) {
    super();
    this.session = ses;
    this.#onLoad = onLoad;
  }

  getURL(): string {
    return this.#url;
  }

  loadURL(url: string, _options?: E.LoadURLOptions): Promise<void> {
    this.#url = url;
    this.#onLoad();
    return Promise.resolve();
  }

  setWindowOpenHandler(handler: (details: E.HandlerDetails) => E.WindowOpenHandlerResponse): void {
    this.#openHandler = handler;
  }

  isDestroyed(): boolean {
    return false;
  }

  /** The page navigates itself (a link, location.href): `will-navigate`, then the page goes unless prevented. Whether it went. */
  navigateFromPage(url: string): boolean {
    const event = electronEvent({ url, isSameDocument: false, isMainFrame: true, frame: null, initiator: null });
    this.fire('web-contents', 'will-navigate', event, url, false, true, 1, 1);
    if (event.defaultPrevented) return false;
    this.#url = url;
    return true;
  }

  /** The server redirects the page: `will-redirect`, then the page goes unless prevented. Whether it went. */
  redirect(url: string): boolean {
    const event = electronEvent({ url, isSameDocument: false, isMainFrame: true, frame: null });
    this.fire('web-contents', 'will-redirect', event, url, false, true, 1, 1);
    if (event.defaultPrevented) return false;
    this.#url = url;
    return true;
  }

  /** The page calls window.open(url) (or a target=_blank link): the app's handler decides; with none, Electron allows. */
  openFromPage(url: string): E.WindowOpenHandlerResponse {
    rec.events.push('web-contents window-open');
    const details: E.HandlerDetails = { url, frameName: '', features: '', disposition: 'new-window', referrer: { url: this.#url, policy: 'strict-origin-when-cross-origin' } };
    const response = this.#openHandler ? this.#openHandler(details) : { action: 'allow' as const };
    if (response.action === 'allow') new BrowserWindow({ webPreferences: { session: asElectron<E.Session>(this.session) } }).webContents.#url = url;
    return response;
  }
}

class BrowserWindow extends Emitter<WindowEvents> implements Pick<E.BrowserWindow, 'loadURL' | 'show' | 'hide' | 'focus' | 'close' | 'isVisible' | 'isDestroyed'> {
  readonly options: E.BrowserWindowConstructorOptions;
  readonly webContents: WebContents;
  #visible: boolean;
  #destroyed = false;
  #shown = false;

  constructor(...[options = {}]: ConstructorParameters<typeof E.BrowserWindow>) {
    super();
    this.options = options;
    this.#visible = options.show ?? true;
    const ses = options.webPreferences?.session ? asElectron<Session>(options.webPreferences.session) : Session.defaultSession;
    this.webContents = new WebContents(ses, () => {
      // The first load paints: 'ready-to-show' once.
      if (this.#shown) return;
      this.#shown = true;
      queueMicrotask(() => this.fire('window', 'ready-to-show'));
    });
    rec.windows.push(this);
    // As Electron: the window's web contents is created (and announced) inside the constructor.
    app.fire('app', 'web-contents-created', electronEvent({}), asElectron<E.WebContents>(this.webContents));
  }

  loadURL(url: string, options?: E.LoadURLOptions): Promise<void> {
    return this.webContents.loadURL(url, options);
  }

  show(): void {
    this.#visible = true;
  }

  hide(): void {
    this.#visible = false;
  }

  focus(): void {}

  isVisible(): boolean {
    return this.#visible && !this.#destroyed;
  }

  isDestroyed(): boolean {
    return this.#destroyed;
  }

  /** The user closes it (or quit does): 'close', preventable, then 'closed'. Whether it closed. */
  close(): boolean {
    if (this.#destroyed) return true;
    const event = electronEvent({});
    this.fire('window', 'close', event);
    if (event.defaultPrevented) return false;
    this.#destroyed = true;
    this.#visible = false;
    this.fire('window', 'closed');
    return true;
  }
}

/** Menus as Electron builds them: the template, kept for setContextMenu. */
const templates = new WeakMap<object, readonly (E.MenuItemConstructorOptions | E.MenuItem)[]>();

function asSeen(template: readonly (E.MenuItemConstructorOptions | E.MenuItem)[]): MenuItem[] {
  return template.map((t) => {
    const options = t as E.MenuItemConstructorOptions;
    const submenu = Array.isArray(options.submenu) ? asSeen(options.submenu) : undefined;
    return {
      ...(options.id !== undefined && { id: options.id }),
      ...(options.type !== undefined && { type: options.type }),
      ...(options.label !== undefined && { label: options.label }),
      ...(options.checked !== undefined && { checked: options.checked }),
      ...(options.enabled !== undefined && { enabled: options.enabled }),
      ...(options.click && { click: () => options.click?.(asElectron<E.MenuItem>({}), undefined, {}) }),
      ...(submenu && { submenu }),
    };
  });
}

const Menu = {
  buildFromTemplate: (...[template]: Parameters<typeof E.Menu.buildFromTemplate>): object => {
    const menu = {};
    templates.set(menu, template);
    return menu;
  },
};

class Tray extends Emitter<TrayEvents> implements Pick<E.Tray, 'setImage' | 'setToolTip' | 'setContextMenu'> {
  menu: MenuItem[] = [];

  constructor(...[image]: ConstructorParameters<typeof E.Tray>) {
    super();
    rec.trays.push(this);
    rec.images.push(imagePath(image));
  }

  setImage(image: E.NativeImage | string): void {
    rec.images.push(imagePath(image));
  }

  setToolTip(toolTip: string): void {
    rec.tooltips.push(toolTip);
  }

  setContextMenu(menu: E.Menu | null): void {
    this.menu = asSeen((menu && templates.get(menu)) ?? []);
    rec.menus.push(this.menu);
  }

  /** The user clicks the icon. */
  click(): void {
    this.fire('tray', 'click', {}, { x: 0, y: 0, width: 22, height: 22 }, { x: 11, y: 11 });
  }
}

class Notification extends Emitter<NotificationEvents> implements Pick<E.Notification, 'show' | 'title' | 'body'> {
  title: string;
  body: string;

  static isSupported(): boolean {
    return true;
  }

  constructor(...[options = {}]: ConstructorParameters<typeof E.Notification>) {
    super();
    this.title = options.title ?? '';
    this.body = options.body ?? '';
  }

  show(): void {
    rec.notifications.push(this.body);
  }
}

class App extends Emitter<AppEvents> implements Pick<E.App, 'quit' | 'whenReady' | 'isReady' | 'requestSingleInstanceLock' | 'getVersion'> {
  #ready = false;
  readonly #whenReady: Promise<void>;

  constructor() {
    super();
    // As Electron: 'ready' once the main script has run, then whenReady()'s callers.
    this.#whenReady = new Promise((resolve) =>
      setImmediate(() => {
        this.#ready = true;
        this.fire('app', 'ready', electronEvent({}), {});
        resolve();
      }),
    );
  }

  whenReady(): Promise<void> {
    return this.#whenReady;
  }

  isReady(): boolean {
    return this.#ready;
  }

  requestSingleInstanceLock(_additionalData?: Record<string, unknown>): boolean {
    return true;
  }

  getVersion(): string {
    return '0.1.0';
  }

  /** As Electron: before-quit (preventable), every window closed (each may refuse), will-quit (preventable), quit. */
  quit(): void {
    const beforeQuit = electronEvent({});
    this.fire('app', 'before-quit', beforeQuit);
    if (beforeQuit.defaultPrevented) return;
    for (const w of rec.windows) if (!w.close()) return;
    const willQuit = electronEvent({});
    this.fire('app', 'will-quit', willQuit);
    if (willQuit.defaultPrevented) return;
    this.fire('app', 'quit', electronEvent({}), 0);
    rec.exited = true;
  }

  /** The proxy asks a page's session for a credential (407 from a proxy when `isProxy`): what the app answered, or undefined if it let Electron cancel. */
  login(contents: WebContents, authInfo: E.AuthInfo): { username?: string; password?: string } | undefined {
    const event = electronEvent({});
    let answer: { username?: string; password?: string } | undefined;
    this.fire('app', 'login', event, asElectron<E.WebContents>(contents), { url: contents.getURL(), pid: 1 }, authInfo, (username, password) => {
      answer = { ...(username !== undefined && { username }), ...(password !== undefined && { password }) };
    });
    return event.defaultPrevented ? answer : undefined;
  }
}

const app = new App();

const ipcMain = {
  handle: (channel: string, listener: (event: E.IpcMainInvokeEvent, ...args: unknown[]) => unknown): void => {
    rec.ipc.set(channel, listener);
  },
} satisfies Pick<E.IpcMain, 'handle'>;

/**
 * A page calls ipcRenderer.invoke(channel, ...args) from `sender`'s frame at
 * `frameUrl`: the handler's answer, or its refusal as a rejection (as Electron
 * rejects the page's promise).
 */
export async function invoke(channel: string, sender: WebContents, frameUrl: string, ...args: unknown[]): Promise<unknown> {
  const handler = rec.ipc.get(channel);
  if (!handler) throw new Error(`No handler registered for '${channel}'`);
  const event: E.IpcMainInvokeEvent = Object.assign(electronEvent({}), {
    frameId: 1,
    processId: 1,
    sender: asElectron<E.WebContents>(sender),
    senderFrame: asElectron<E.WebFrameMain>({ url: frameUrl, origin: new URL(frameUrl).origin }),
    type: 'frame' as const,
  });
  return await handler(event, ...args);
}

const shell = {
  openExternal: (url: string, _options?: E.OpenExternalOptions): Promise<void> => {
    rec.externals.push(url);
    return Promise.resolve();
  },
} satisfies Pick<E.Shell, 'openExternal'>;

// The statics the app calls that return no Electron object: Electron's own signatures.
const _notificationStatics: Pick<typeof E.Notification, 'isSupported'> = Notification;

/**
 * The `electron` a sandboxed preload gets (contextBridge and ipcRenderer),
 * for a preload run as `sender`'s page: each invoke reaches the app's
 * handler with the frame `frameUrl()` names, as Electron's would, and each
 * exposeInMainWorld is kept in `exposed` for the test to put in a page.
 */
export function preloadStandIn(sender: WebContents, frameUrl: () => string): { electron: Record<string, unknown>; exposed: Map<string, unknown> } {
  const exposed = new Map<string, unknown>();
  const contextBridge = {
    exposeInMainWorld: (apiKey: string, api: unknown): void => {
      exposed.set(apiKey, api);
    },
  } satisfies Pick<E.ContextBridge, 'exposeInMainWorld'>;
  const ipcRenderer = {
    invoke: (channel: string, ...args: unknown[]): Promise<unknown> => invoke(channel, sender, frameUrl(), ...args),
  } satisfies Pick<E.IpcRenderer, 'invoke'>;
  return { electron: { contextBridge, ipcRenderer }, exposed };
}

/** The stand-in's objects for tests that drive them: the app, and the windows and trays the app made (in `rec`). */
export { app as standInApp };
export type { BrowserWindow, Tray };

/** The `electron` module as the app uses it, recording into `rec`. */
export function electronStandIn(): Record<string, unknown> {
  return { app, BrowserWindow, Notification, Tray, ipcMain, Menu, nativeImage, session: Session, shell };
}
