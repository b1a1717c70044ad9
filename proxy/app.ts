/**
 * The app, started: the proxy (dotstub.ts), the system-DNS takeover when
 * this run offers it, the control service and its server, and the idle
 * collector, with one stop order. The CLI and the test harnesses all start
 * dotstub here, so what tests run is what users run.
 *
 * Stop order: the old DNS back first (systemDns), while the stub still
 * answers (no moment without DNS) and while the control server still
 * streams, so an open page's last word is "given back at …", not a guess;
 * then the control server, the service, the collector and the stub.
 */
import path from 'node:path';
import { ensureConfigDir } from './files/config-file.js';
import type { ProxyConfig } from './run/proxy-config.js';
import type { ResolverStore } from './config/resolver-store.js';
import type { Settings, SettingsStore } from './run/settings.js';
import { loadOrCreateToken } from './control/auth.js';
import type { MeasureScope } from './control/resolver-test.js';
import { ControlPortTaken, ControlServer, type ControlSocketOptions } from './control/server.js';
import { ControlService, type ControlServiceOptions } from './control/service.js';
import { ConfigError } from './errors.js';
import { moveWords } from './control/retired-notice.js';
import { startDotstub, type StubProxy } from './dotstub.js';
import { exposedGc, IdleCollector } from './runtime/idle-collect.js';
import type { ListenAddress } from './listen/address.js';
import type { SystemDnsManager } from './system-dns/manager.js';
import { warmQueryPath, type WarmUpResult } from './warm-up.js';
import { sideCheck } from './runtime/side-check.js';

interface ControlPlace {
  readonly host: string;
  readonly port: number;
  /** Given by the user: busy is an error. */
  readonly explicit: boolean;
  /** --control-any-port: the default port held by another program gives way to a free one (said in the log). */
  readonly anyPort?: boolean;
  readonly dashboardDir?: string;
  /** Also serve the API on this Unix socket (the service's /run/dotstub/control.sock), its group the authorization. */
  readonly socket?: ControlSocketOptions;
}

/** The control API's part of a run: where it listens, what it persists, what it offers. */
interface ControlRun {
  readonly place: ControlPlace;
  /** Settings in effect: persisted ones with this run's overrides. */
  readonly effective: Settings;
  readonly settings: SettingsStore;
  readonly resolvers: ResolverStore;
  /** Where the token lives. */
  readonly configDir: string;
  /** The system-DNS takeover this run offers, started once DNS listens. */
  readonly systemDns?: (bound: readonly ListenAddress[]) => Promise<SystemDnsManager>;
  readonly measureScope?: MeasureScope;
  /** Stream batching and "Test resolvers" bounds (tests shorten them). */
  readonly service?: Pick<ControlServiceOptions, 'streamIntervalMs' | 'resolverTest'>;
}

export interface AppRun {
  readonly config: ProxyConfig;
  /** null: no control API (and no system-DNS takeover). */
  readonly control: ControlRun | null;
  /** Runs before the proxy starts, so observers see every event. */
  readonly observe?: (proxy: StubProxy) => void;
  /** Runs once DNS listens, before the control API starts. */
  readonly listening?: (proxy: StubProxy, bound: readonly ListenAddress[]) => void;
  /** Lines for the user (the CLI prints them on stderr). */
  readonly log?: (line: string) => void;
  /**
   * Warm the query path once DNS listens (warm-up.ts): made-up questions to
   * a DoT server of dotstub's own on loopback, so the first real lookups run
   * optimized code. The CLI (every way users start dotstub) turns it on.
   */
  readonly warmUp?: boolean;
}

export interface App {
  readonly proxy: StubProxy;
  readonly bound: readonly ListenAddress[];
  readonly service: ControlService | null;
  readonly server: ControlServer | null;
  readonly token: string | null;
  /** The start's warm-up (warm-up.ts), when this run asked for one; null: none. */
  readonly warmedUp: Promise<WarmUpResult> | null;
  stop(drainMs?: number): Promise<void>;
  /**
   * The fail-safe stop (cli.ts, on an exception nothing caught): the old DNS
   * back first and at once, the reason in the privacy state (so the
   * timeline keeps it), then everything stopped as on SIGTERM, with a short
   * drain. Never throws.
   */
  failSafeStop(reason: string): Promise<void>;
}

/** The control API could not start; the proxy has been stopped again. */
export class ControlStartError extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'ControlStartError';
  }
}

/** Starts the app; throws the proxy's start error, or ControlStartError (everything stopped again). */
export async function startApp(run: AppRun): Promise<App> {
  const log = run.log ?? (() => undefined);
  // A saved choice of a retired preset was moved at load (config/resolver-store.ts): said before the proxy
  // connects to the replacement's operator, once (the dashboard's timeline says it too, and the status until dismissed).
  const retiring = run.control?.resolvers.retiring;
  if (retiring) log(`${moveWords(retiring)} (pick another in the dashboard)`);
  const { proxy, bound } = await startDotstub(run.config, run.observe);
  run.listening?.(proxy, bound);
  const collector = new IdleCollector({ activity: () => proxy.counters.queries + proxy.counters.malformed, gc: exposedGc(), wake: (fn) => proxy.engine.onNextMessage(fn) });
  const warming = new AbortController();
  // What the warm-up allocated is given back like a burst's: once it has been quiet a while.
  // Beside the query path: a warm-up that fails, however it fails, costs only its own time (runtime/side-check.ts).
  const warmedUp = run.warmUp
    ? sideCheck('the warm-up', () => warmQueryPath(run.config, { signal: warming.signal })).then((o): WarmUpResult => {
        collector.worked();
        if (o.ok) return o.value;
        log(`the warm-up: not done (${o.why}); dotstub answers all the same`);
        return { queries: 0, answered: 0, ms: 0, notDone: o.why };
      })
    : null;
  let service: ControlService | null = null;
  let server: ControlServer | null = null;
  let token: string | null = null;
  let systemDns: SystemDnsManager | undefined;
  const c = run.control;
  if (c) {
    try {
      if (c.systemDns) {
        const takeover = await c.systemDns(bound);
        systemDns = takeover;
        // The takeover is part of the privacy state a user sees (off while the system asks someone else): one more
        // event into the proxy's one reducer, so its 'state' events, the CLI's log and every screen carry it.
        proxy.privacy.takeover({ inForce: takeover.inForce, reason: takeover.reason });
        takeover.on('change', (change) => proxy.privacy.takeover(change));
      }
      ensureConfigDir(c.configDir);
      const loaded = loadOrCreateToken(c.configDir);
      for (const note of loaded.notes) log(note);
      token = loaded.token;
      service = new ControlService({
        proxy,
        settings: c.settings,
        resolvers: c.resolvers,
        effective: c.effective,
        measureScope: c.measureScope ?? 'all',
        timelineFile: path.join(c.configDir, 'timeline.json'),
        configDir: c.configDir,
        ...c.service,
        ...(systemDns ? { systemDns } : {}),
      });
      // The move made at load: saved now (the config dir is writable from here), said once in the timeline.
      try {
        await service.settleRetired();
      } catch (err) {
        log(`could not save the move away from a retired resolver (${err instanceof Error ? err.message : String(err)}); it is made again at the next start`);
      }
      server = await listenControl(service, token, c.place, log);
      if (server.loopbackUrl !== null) log(dashboardLine(server.loopbackUrl, server.socketPath, loaded.file));
      if (server.socketPath) log(`control socket at ${server.socketPath} (for members of its group: dotstub ctl status)`);
    } catch (err) {
      warming.abort();
      service?.close();
      collector.close();
      await systemDns?.close();
      await proxy.stop(1000);
      throw new ControlStartError(err);
    }
  }
  return {
    proxy,
    bound,
    service,
    server,
    token,
    warmedUp,
    async failSafeStop(reason: string) {
      warming.abort();
      const quietly = async (step: () => Promise<void> | void): Promise<void> => {
        try {
          await step();
        } catch {
          // Each step on its own: the DNS given back matters more than a tidy stop.
        }
      };
      await quietly(() => systemDns?.giveBackOnCrash(reason));
      await quietly(() => server?.close());
      await quietly(() => service?.close());
      await quietly(() => collector.close());
      await quietly(() => proxy.stop(500));
    },
    async stop(drainMs?: number) {
      warming.abort();
      await systemDns?.close();
      await server?.close();
      service?.close();
      collector.close();
      await proxy.stop(drainMs);
    },
  };
}

/**
 * Where the dashboard is, for the log: never its link, which holds the
 * token (the log of a service is the journal, which every member of adm
 * and systemd-journal reads). With a control socket, `dotstub ctl
 * dashboard` hands the link to whoever may use the socket; without one, the
 * token file (0600) is this user's alone.
 */
function dashboardLine(origin: string, socketPath: string | undefined, tokenFile: string): string {
  if (socketPath !== undefined) return `dashboard at ${origin}/ (its link holds the access token and is never logged: dotstub ctl dashboard prints it)`;
  return `dashboard at ${origin}/ (its link holds the access token and is never logged: open ${origin}/#token= followed by the contents of ${tokenFile}, which only you can read)`;
}

/**
 * Starts the control server on the port asked for, and on no other unless
 * the user said so. A port held by another program is never silently
 * swapped for a free one: bookmarks, reloaded tabs and scripts go to the
 * default port with the token, and whoever holds it would collect it. So:
 * - an explicit --control port that is busy is an error;
 * - the default port busy, with --control-any-port: a free port, said;
 * - the default port busy, with a control socket (the service): the API is
 *   served on the socket only, whose group is the authorization, and the
 *   dashboard link is handed out nowhere; the log and `dotstub ctl
 *   dashboard` say which address is held and what to do. DNS goes on;
 * - the default port busy, without a socket: dotstub does not start (it
 *   would have no control API anyone could trust), and says why.
 */
async function listenControl(service: ControlService, token: string, control: ControlPlace, log: (line: string) => void): Promise<ControlServer> {
  const make = (port: number, loopbackRefused?: string): ControlServer =>
    new ControlServer({
      service,
      token,
      host: control.host,
      port,
      ...(control.dashboardDir ? { dashboardDir: control.dashboardDir } : {}),
      ...(control.socket ? { socket: control.socket } : {}),
      ...(loopbackRefused !== undefined ? { loopbackRefused } : {}),
    });
  const first = make(control.port);
  try {
    await first.listen();
    return first;
  } catch (err) {
    if (!(err instanceof ControlPortTaken)) throw err;
    const held = err.address;
    if (control.explicit) {
      throw new ConfigError(`${held} is held by another program: choose another port with --control ${control.host}:PORT, or --no-control`);
    }
    if (control.anyPort) {
      const second = make(0);
      await second.listen();
      log(`WARNING: the control port ${held} is held by another program; the dashboard is on ${second.url} instead (--control-any-port). Links and scripts that use port ${control.port} reach that program, not dotstub: do not give it the token`);
      return second;
    }
    const why =
      `${held} is held by another program, so dotstub serves no browser dashboard: ` +
      `a link or script that uses port ${control.port} reaches that program, not dotstub, and must not be given the token. ` +
      `Find it with "ss -ltnp", stop it and restart dotstub, or start dotstub with --control-any-port to use a free port`;
    if (control.socket === undefined) throw new ConfigError(why);
    const socketOnly = make(control.port, why);
    await socketOnly.listen();
    log(`WARNING: ${why}. The control API is served on ${control.socket.path} only (dotstub ctl status)`);
    return socketOnly;
  }
}
