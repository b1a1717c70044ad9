/**
 * The desktop app's logic without Electron: owns the proxy supervisor, the
 * control client for the running proxy and the live tray state, and carries
 * out tray actions. main.ts only connects it to Electron (tray, window, IPC).
 *
 * Two sources of a proxy: where the dotstub service is installed it is the
 * proxy (ServiceConnection: its control socket; the app never starts a
 * second one), else the app's own unprivileged proxy (ProxySupervisor).
 * With the service, pause gives the old DNS back for 5 minutes, quit leaves
 * the service as it is, and "Turn on private DNS" runs pkexec once.
 *
 * Invariant: `client` is the client for the proxy that is running now, or
 * undefined; a restart (new control port) replaces it and re-attaches the
 * tray state.
 */
import { EventEmitter } from 'node:events';
import { ControlClient } from './control/client.js';
import { failureWords } from '../proxy/control/api-client/errors.js';
import type { ProxySupervisor, ReadyInfo } from './proxy-process/supervisor.js';
import { ServiceConnection } from './proxy-process/service-connection.js';
import { LiveTrayState, type LiveTrayStateOptions } from './tray/live-tray-state.js';
import type { TrayAction, TrayState } from './tray/types.js';
import { captiveNotice, networkOpened, type Notice } from './tray/captive-notices.js';
import { localNamesNotice } from './tray/local-names-question.js';
import type { SignInView } from '../proxy/control/api-types.js';

export interface DesktopUi {
  /** Shows (creating if needed) the dashboard window. */
  openDashboard(): void;
  /** Ends the app; the controller has already stopped the proxy. */
  quit(): void;
  /** Tells the user something went wrong with an action (a notification, a dialog). */
  report(message: string): void;
  /** Opens the "Sign in to network" window: the portal's page, in its own session, through the sign-in proxy. */
  openSignIn(view: SignInView): void;
}

interface Events {
  tray: [TrayState];
  /** Something worth a desktop notification (a Wi-Fi sign-in, already rate-limited; a question about local names, once). */
  notice: [Notice];
  /** A proxy (re)started: its control origin and dashboard link changed. */
  ready: [ReadyInfo];
  /** The Wi-Fi let us out (captive → private DNS): the sign-in is over, its window has nothing left to show. */
  'network-open': [];
}

/** The sign-in proxy starts as the exception does: a moment after "Allow", ask again (three times, 100 ms apart). */
async function signInWhenReady(client: ControlClient): Promise<SignInView> {
  for (let i = 0; ; i++) {
    try {
      return await client.signIn();
    } catch (err) {
      if (i >= 3) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A service pause from the tray: 5 minutes, then private DNS comes back by itself. */
const TRAY_PAUSE_SECONDS = 300;

export class DesktopController extends EventEmitter<Events> {
  readonly #supervisor: ProxySupervisor | ServiceConnection;
  readonly #tray: LiveTrayState;
  #client: ControlClient | undefined;
  #shutdown: Promise<void> | undefined;
  #lastTray: TrayState;
  #lastNoticeAt = -Infinity;

  constructor(supervisor: ProxySupervisor | ServiceConnection, trayOptions: LiveTrayStateOptions = {}) {
    super();
    this.#supervisor = supervisor;
    this.#tray = new LiveTrayState(trayOptions);
    this.#lastTray = this.#tray.current;
    this.#tray.on('change', (s) => {
      const notice = captiveNotice(this.#lastTray, s, this.#lastNoticeAt, Date.now());
      // Not rate-limited with the sign-in's: it comes once per question, and a question is once per network.
      const asking = localNamesNotice(this.#lastTray, s);
      const opened = networkOpened(this.#lastTray, s);
      this.#lastTray = s;
      this.emit('tray', s);
      if (opened) this.emit('network-open');
      if (notice) {
        this.#lastNoticeAt = Date.now();
        this.emit('notice', notice);
      }
      if (asking) this.emit('notice', asking);
    });
    const service = supervisor instanceof ServiceConnection ? supervisor : undefined;
    if (service) this.#tray.setService(service.service);
    supervisor.on('state', (s) => {
      if (s.phase !== 'running') this.#dropClient();
      if (service) this.#tray.setService(service.service);
      this.#tray.setSupervisor(s);
    });
    supervisor.on('ready', (info) => {
      this.#dropClient();
      this.#client =
        info.socket !== undefined && info.dashboard !== undefined
          ? new ControlClient({ socketPath: info.socket, dashboardUrl: info.dashboard })
          : new ControlClient({ baseUrl: info.control, token: info.token });
      this.#tray.attach(this.#client);
      this.emit('ready', info);
    });
  }

  get trayState(): TrayState {
    return this.#tray.current;
  }

  /** The running proxy's control client, if any. */
  get client(): ControlClient | undefined {
    return this.#client;
  }

  /** Starts the proxy. Never throws: a failure shows in the tray state. */
  async start(): Promise<void> {
    try {
      await this.#supervisor.start();
    } catch {
      // The supervisor's 'failed'/'stopped' state carries the reason to the tray.
    }
  }

  async dispatch(action: TrayAction, ui: DesktopUi): Promise<void> {
    switch (action.type) {
      case 'set-system-dns': {
        const client = this.#client;
        if (!client) return ui.report('dotstub is not running: resume it first');
        try {
          const v = await client.setSystemDns(action.enabled);
          ui.report(
            action.enabled
              ? v.inForce
                ? 'Private DNS is on for this machine: every program now asks dotstub.'
                : `Private DNS is enabled but not in force: ${v.reason}`
              : 'Private DNS is off for this machine: your old DNS settings are back.',
          );
        } catch (err) {
          ui.report(`Could not ${action.enabled ? 'enable' : 'disable'} private DNS: ${failureWords(err)}`);
        }
        await this.#tray.refresh();
        return;
      }
      case 'switch-resolver': {
        const client = this.#client;
        if (!client) return ui.report('dotstub is not running: resume it first');
        try {
          await client.setActiveResolver(action.id);
        } catch (err) {
          ui.report(`Could not switch the resolver: ${failureWords(err)}`);
        }
        await this.#tray.refresh();
        return;
      }
      case 'open-dashboard':
        return ui.openDashboard();
      case 'pause': {
        if (this.#supervisor instanceof ServiceConnection) {
          // The service stays; the machine gets its old DNS for a while, then private DNS by itself.
          const client = this.#client;
          if (!client) return ui.report('the dotstub service is not running');
          try {
            await client.setSystemDns(false, undefined, TRAY_PAUSE_SECONDS);
            ui.report('Private DNS is paused for 5 minutes: this machine asks its usual resolver, unencrypted, until then.');
          } catch (err) {
            ui.report(`Could not pause private DNS: ${failureWords(err)}`);
          }
          await this.#tray.refresh();
          return;
        }
        // Own proxy: pause = stop it (its SIGTERM path gives any DNS it changed back).
        await this.#supervisor.stop('paused');
        return;
      }
      case 'resume':
        if (this.#supervisor instanceof ServiceConnection && this.#client) return this.dispatch({ type: 'set-system-dns', enabled: true }, ui);
        await this.start();
        return;
      case 'turn-on-service': {
        const service = this.#supervisor;
        if (!(service instanceof ServiceConnection)) return ui.report('the dotstub service is not installed on this machine');
        try {
          await service.turnOn();
          ui.report('The dotstub service is on: private DNS for this machine, now and at every start.');
        } catch (err) {
          ui.report(`Could not turn on private DNS: ${err instanceof Error ? err.message : String(err)}`);
        }
        return;
      }
      case 'quit':
        await this.shutdown();
        return ui.quit();
      case 'sign-in': {
        const client = this.#client;
        if (!client) return ui.report('dotstub is not running: resume it first');
        try {
          ui.openSignIn(await signInWhenReady(client));
        } catch (err) {
          ui.report(`Can't open the sign-in page: ${failureWords(err)}`);
        }
        return;
      }
      case 'local-names': {
        const client = this.#client;
        if (!client) return ui.report('dotstub is not running: resume it first');
        try {
          // The Network view's choice for this network, remembered for it: the proxy routes by it at once.
          await client.setLocalNames(action.allow);
        } catch (err) {
          ui.report(`Couldn't remember your choice for this network's own names: ${failureWords(err)}`);
        }
        await this.#tray.refresh();
        return;
      }
      case 'own-resolver': {
        const client = this.#client;
        if (!client) return ui.report('dotstub is not running: resume it first');
        try {
          // The Network view's choice for this network, remembered for it: the proxy switches at once (and back on leaving it).
          await client.setNetworkOwnResolver(action.key, action.use ? 'use' : 'ask');
        } catch (err) {
          ui.report(`Couldn't change this network's encrypted resolver: ${failureWords(err)}`);
        }
        await this.#tray.refresh();
        return;
      }
      case 'captive': {
        const client = this.#client;
        if (!client) return ui.report('dotstub is not running: resume it first');
        try {
          // From the tray, the answer is remembered for this network (the dashboard lets the user choose).
          await client.captive(action.action, true);
          await this.#tray.refresh();
          if (action.action === 'allow') ui.openSignIn(await signInWhenReady(client));
        } catch (err) {
          ui.report(`Couldn't answer the Wi-Fi sign-in: ${failureWords(err)}`);
        }
        return;
      }
    }
  }

  /** Stops the proxy and everything else; safe to call twice. */
  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      this.#tray.detach();
      this.#dropClient();
      await this.#supervisor.stop('quit');
    })();
    return this.#shutdown;
  }

  #dropClient(): void {
    this.#client?.close();
    this.#client = undefined;
  }
}
