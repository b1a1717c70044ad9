/**
 * The installed dotstub service, as the desktop app sees it: where a
 * service is installed, it is the one proxy on the machine and the app
 * never starts its own
 * (docs/architecture.md#installed-one-service-many-clients). This watches the service's control socket and reports, in the
 * supervisor's terms (so the tray and the controller need no second
 * vocabulary):
 *   running  the socket answers; `ready` carries the socket and the
 *            dashboard link handed out there;
 *   stopped  installed, not running ("Turn on private DNS" runs
 *            `pkexec /usr/lib/dotstub/turn-on`, which enables and starts
 *            the service: the one step that needs an administrator);
 *   failed   this user may not use it (not in the dotstub group).
 *
 * chooseProxy() decides between this and the app's own proxy.
 */
import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import { DEFAULT_CONTROL_SOCKET, explainSocketError, serviceInstalled, SocketAccessError, type SocketPlace } from '../../proxy/control/socket-access.js';
import type { DashboardLinkView } from '../../proxy/control/api-types.js';
import { ControlError } from '../../proxy/control/api-client/errors.js';
import { fetchDashboardLink } from '../control/client.js';
import type { TrayService } from '../tray/types.js';
import type { ReadyInfo, SupervisorState } from './supervisor.js';

/** Which proxy the app uses: the installed service, or one of its own (unprivileged, on a high port). */
export function chooseProxy(place: SocketPlace = { socketPath: DEFAULT_CONTROL_SOCKET }): 'service' | 'own' {
  return serviceInstalled(place) ? 'service' : 'own';
}

/** What the dotstub package installs for the administrator's step: `systemctl enable --now dotstub.service`, nothing else. */
export const TURN_ON_HELPER = '/usr/lib/dotstub/turn-on';

/**
 * The command the app runs to turn the service on. With the package's
 * helper, polkit shows dotstub's own action ("Turn on private DNS for this
 * machine", packaging/org.dotstub.turn-on.policy); without it (a service
 * installed some other way), pkexec's generic "run /usr/bin/systemctl as
 * root" is all there is.
 */
export function turnOnCommand(exists: (file: string) => boolean = fs.existsSync): string[] {
  return exists(TURN_ON_HELPER) ? ['pkexec', TURN_ON_HELPER] : ['pkexec', 'systemctl', 'enable', '--now', 'dotstub'];
}

/** The administrator's one step: turn the service on, now and at every boot. Rejects with what went wrong. */
function pkexecTurnOn(): Promise<void> {
  const [cmd, ...args] = turnOnCommand() as [string, ...string[]];
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 120_000 }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      const code = typeof err.code === 'number' ? err.code : undefined;
      // pkexec: 126 the password dialog was dismissed, 127 not authorized (or no polkit agent).
      if (code === 126) return reject(new Error('the administrator password was not given; private DNS stays off'));
      if (code === 127) return reject(new Error('not authorized to turn on the dotstub service (is a polkit agent running?); or run: sudo systemctl enable --now dotstub'));
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return reject(new Error('pkexec is not installed; run: sudo systemctl enable --now dotstub'));
      reject(new Error(`could not turn on the dotstub service: ${stderr.trim() || err.message}`));
    });
  });
}

export interface ServiceConnectionOptions extends SocketPlace {
  /** How often the socket is looked at, ms (default 2000): the service can be started, stopped or restarted at any time. */
  readonly pollMs?: number;
  /** Turns the service on (default: turnOnCommand() through pkexec). */
  readonly turnOn?: () => Promise<void>;
  /** How long to wait for the socket after turning on, ms (default 20000). */
  readonly turnOnWaitMs?: number;
}

interface Events {
  state: [SupervisorState];
  ready: [ReadyInfo];
}

export class ServiceConnection extends EventEmitter<Events> {
  readonly #o: ServiceConnectionOptions;
  #state: SupervisorState = { phase: 'stopped', reason: 'looking for the dotstub service' };
  #service: TrayService = { state: 'off', reason: 'looking for the dotstub service', hint: '' };
  #link: DashboardLinkView | undefined;
  #timer: NodeJS.Timeout | undefined;
  #watching = false;

  constructor(options: ServiceConnectionOptions) {
    super();
    this.#o = options;
  }

  get state(): SupervisorState {
    return this.#state;
  }

  /** What the tray says about the service. */
  get service(): TrayService {
    return this.#service;
  }

  /** Looks at the socket now, then keeps watching it. */
  async start(): Promise<void> {
    this.#watching = true;
    await this.probe();
    this.#schedule();
  }

  /** Stops watching. The service itself keeps running: quitting the app never turns private DNS off. */
  stop(_reason?: string): Promise<void> {
    this.#watching = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return Promise.resolve();
  }

  /** Runs the administrator's step (pkexec), then waits for the socket to answer. */
  async turnOn(): Promise<void> {
    await (this.#o.turnOn ?? pkexecTurnOn)();
    const deadline = Date.now() + (this.#o.turnOnWaitMs ?? 20_000);
    for (;;) {
      await this.probe();
      if (this.#state.phase === 'running') return;
      if (this.#state.phase === 'failed') throw new Error(this.#state.reason);
      if (Date.now() > deadline) throw new Error(`the dotstub service was turned on but its control socket ${this.#o.socketPath} did not answer`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** One look at the socket; emits state (and ready, when the service is new or its link changed). */
  async probe(): Promise<void> {
    let link: DashboardLinkView;
    try {
      link = await fetchDashboardLink(this.#o.socketPath);
    } catch (err) {
      if (err instanceof ControlError && err.code === 'dashboard_unavailable') {
        // The service runs, but another program holds its dashboard's port: no link, so no token for that
        // program; the words (which address, what to do) are the service's.
        this.#link = undefined;
        this.#service = { state: 'on', reason: err.message, hint: err.hint };
        this.#set({ phase: 'failed', reason: `the dotstub service runs, but its dashboard is not served: ${err.message}` });
        return;
      }
      const e = err instanceof SocketAccessError ? err : explainSocketError(err, this.#o);
      this.#link = undefined;
      this.#service = { state: e.kind === 'denied' ? 'denied' : 'off', reason: e.short, hint: e.hint };
      this.#set(e.kind === 'denied' ? { phase: 'failed', reason: e.message } : { phase: 'stopped', reason: e.short });
      return;
    }
    const changed = this.#link?.url !== link.url || this.#state.phase !== 'running';
    this.#link = link;
    this.#service = { state: 'on', reason: '', hint: '' };
    if (!changed) return;
    const ready: ReadyInfo = { dns: [], control: link.origin, token: link.token, pid: 0, socket: this.#o.socketPath, dashboard: link.url };
    this.#set({ phase: 'running', ready, since: Date.now() });
    this.emit('ready', ready);
  }

  #set(next: SupervisorState): void {
    const same = JSON.stringify(next) === JSON.stringify(this.#state);
    this.#state = next;
    if (!same) this.emit('state', next);
  }

  #schedule(): void {
    if (!this.#watching) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      void this.probe().finally(() => this.#schedule());
    }, this.#o.pollMs ?? 2000);
    this.#timer.unref();
  }
}
