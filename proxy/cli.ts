/**
 * The `dotstub` command: subcommands, flags (cli/flags.ts), the saved
 * settings and resolvers, the app (app.ts), signals, the ready file and exit
 * codes (0 stopped cleanly, 1 could not start, 2 bad flags or settings).
 * Only the command's own wiring lives here.
 */
import fs from 'node:fs';
import { startApp, ControlStartError, type App } from './app.js';
import { HELP, parseCli, type ParsedCli } from './cli/flags.js';
import { logListening, logProxy, reportProblem, say } from './cli/log.js';
import { startSystemDns } from './cli/takeover.js';
import { defaultConfigDir, writeFileAtomicSync } from './files/config-file.js';
import { ResolverStore } from './config/resolver-store.js';
import { closedSentence } from './config/resolvers.js';
import { resolveRun } from './run/run-config.js';
import { SettingsStore } from './run/settings.js';
import { isDotstubError } from './errors.js';
import type { ListenAddress } from './listen/address.js';
import { unsupportedRuntime } from './runtime/support.js';
import { crashLoopWords, describeError, StopLog } from './runtime/stops.js';
import { failSideCheck } from './runtime/side-check.js';

/** The exit code of a fail-safe stop (sysexits' EX_SOFTWARE): not a clean stop, not bad flags (2), so supervisors restart. */
export const EXIT_FAILSAFE = 70;

/**
 * Output whose reader went away (`dotstub ctl status | head -3`): what is
 * left to print has nowhere to go, and that is no error (it ended in an EPIPE
 * stack trace). A command ends quietly with its own exit code; the proxy,
 * whose lines are only for a journal or a terminal, goes on answering.
 */
function quietWhenOutputCloses(state: { proxyRunning: boolean }): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', () => {
      if (!state.proxyRunning) process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    });
  }
}

/** Runs the CLI; resolves with the exit code once the proxy has stopped. */
export async function main(argv: readonly string[]): Promise<number> {
  const output = { proxyRunning: false };
  quietWhenOutputCloses(output);
  // Subcommands live in their own module; they share no flags with the proxy.
  if (argv[0] === 'system-dns') {
    const { leakReport } = await import('./cli/leak-report.js');
    return (await import('./system-dns/cli.js')).runSystemDnsCli(argv.slice(1), { configDir: defaultConfigDir(), leaks: (root, port, out) => leakReport(root, port, out) });
  }
  if (argv[0] === 'ctl') return (await import('./cli/ctl.js')).runCtl(argv.slice(1));
  if (argv[0] === 'leak-test') {
    const { DEFAULT_CONTROL_SOCKET, socketRequest } = await import('./control/socket-access.js');
    const socketPath = process.env.DOTSTUB_CONTROL_SOCKET ?? DEFAULT_CONTROL_SOCKET;
    return (await import('./system-dns/leak-test-cli.js')).runLeakTestCli(argv.slice(1), {
      configDir: defaultConfigDir(),
      socket: { path: socketPath, get: (pathname) => socketRequest({ socketPath }, 'GET', pathname) },
    });
  }
  // Started by the desktop app's supervisor with an IPC channel: if the app
  // dies (even by SIGKILL), the channel closes and we stop instead of running
  // on orphaned. Listened for from the first moment: a supervisor that dies
  // while we are still starting must not be missed.
  const supervisor = { gone: false, onGone: undefined as (() => void) | undefined };
  if (process.send !== undefined) {
    if (!process.connected) supervisor.gone = true;
    else
      process.once('disconnect', () => {
        supervisor.gone = true;
        supervisor.onGone?.();
      });
  }
  let parsed: ParsedCli;
  let run: ReturnType<typeof resolveRun>;
  // Reading the config dir needs no write access; creating it (and the token)
  // waits until DNS is listening, so a listen error is reported first.
  let resolvers: ResolverStore;
  let settings: SettingsStore;
  try {
    parsed = parseCli(argv);
    if (parsed.help) {
      process.stdout.write(HELP);
      return 0;
    }
    if (parsed.version) {
      const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
      console.log(pkg.version);
      return 0;
    }
    settings = new SettingsStore(parsed.configDir);
    const saved = settings.load();
    resolvers = new ResolverStore(parsed.configDir);
    resolvers.load();
    for (const p of [settings.problem, resolvers.problem]) if (p) reportProblem(p);
    run = resolveRun(parsed, saved, resolvers.persistedActive);
    // Without the control API nothing saves the move (app.ts does): say it at each start instead.
    const retired = resolvers.retiring;
    if (retired && !parsed.control) say(`${closedSentence(retired)}: your saved resolver "${retired.id}" was retired; using "${retired.replacement}" in its place`);
  } catch (err) {
    if (isDotstubError(err)) {
      say(err.message);
      return 2;
    }
    throw err;
  }
  const flags = parsed;
  // `npm start` runs whatever node is on the PATH; the package brings its own.
  const unsupported = unsupportedRuntime();
  if (unsupported) say(unsupported);
  const takeover = flags.systemDns;
  // How the last runs ended (runtime/stops.ts): said once, and a crash loop holds the takeover back.
  const stops = new StopLog(flags.configDir);
  const { lastCrash, loop } = stops.begin();
  if (lastCrash) say(`the last run stopped at ${new Date(lastCrash.at).toLocaleTimeString('en-GB')} without being asked: ${lastCrash.reason}`);
  const hold = loop ? { until: loop.holdUntil, words: crashLoopWords(loop) } : undefined;
  // Nothing outside the query path may end the proxy; what still escapes is a fail-safe stop: the DNS given back at
  // once, the reason written down (stops.json, the timeline, stderr: the journal), as SIGTERM stops it. Before the app
  // is up there is nothing to give back but what startApp undoes itself.
  let failSafe: ((reason: string) => Promise<void>) | null = null;
  let failing = false;
  const onEscaped = (err: unknown): void => {
    // From a check beside the query path (runtime/side-check.ts): that check is "not checked", the proxy goes on.
    const check = failSideCheck(err);
    if (check !== null) {
      say(`${check}: not checked (${describeError(err).reason}); dotstub goes on answering`);
      return;
    }
    if (failing) return;
    failing = true;
    const d = describeError(err);
    stops.record({ how: 'error', ...d });
    say(`stopping on an error nothing caught: ${d.reason}; your usual DNS is given back now (the details follow)`);
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    // However the stop goes, the process ends: a hung step must not keep a broken proxy alive.
    setTimeout(() => process.exit(EXIT_FAILSAFE), 5000).unref();
    void (failSafe ?? (() => Promise.resolve()))(d.reason).finally(() => {
      if (flags.readyFile) fs.rmSync(flags.readyFile, { force: true });
      process.exit(EXIT_FAILSAFE);
    });
  };
  process.on('uncaughtException', onEscaped);
  process.on('unhandledRejection', onEscaped);
  // A signal during start-up (systemd's stop, Ctrl-C, a test that saw the dashboard line) must not kill us with the
  // system's DNS taken over and nobody to give it back: it is noted now and acted on once started.
  let early: string | null = null;
  const noteInt = (): void => void (early ??= 'SIGINT');
  const noteTerm = (): void => void (early ??= 'SIGTERM');
  process.on('SIGINT', noteInt);
  process.on('SIGTERM', noteTerm);
  const forgetEarly = (): void => {
    process.off('SIGINT', noteInt);
    process.off('SIGTERM', noteTerm);
  };
  let app: App;
  // From here dotstub may hold the machine's DNS: a closed output must not end it.
  output.proxyRunning = true;
  try {
    app = await startApp({
      config: run.config,
      control: flags.control && {
        place: flags.control,
        effective: run.effective,
        settings,
        resolvers,
        configDir: flags.configDir,
        ...(takeover ? { systemDns: (bound: readonly ListenAddress[]) => startSystemDns(takeover, flags.configDir, bound, hold) } : {}),
        measureScope: flags.measureOnlyLocal ? 'local' : 'all',
      },
      observe: (proxy) => logProxy(proxy, flags.log),
      listening: logListening,
      log: say,
      warmUp: true,
    });
  } catch (err) {
    forgetEarly();
    if (err instanceof ControlStartError) {
      say(`control API: ${err.message}`);
      return 1;
    }
    if (isDotstubError(err)) {
      say(err.message);
      return 1;
    }
    throw err;
  }
  failSafe = (reason) => app.failSafeStop(reason);
  stops.running();
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      say(`${signal}: answering ${app.proxy.engine.inFlight} queries in flight, then stopping`);
      void (async () => {
        await app.stop();
        if (flags.readyFile) fs.rmSync(flags.readyFile, { force: true });
        stops.stoppedCleanly();
        const c = app.proxy.counters;
        say(`stopped after ${c.queries} queries (${c.answers} answered, ${c.servfails} SERVFAIL)`);
        // An open IPC channel would keep the process alive.
        if (process.connected) process.disconnect();
        resolve(0);
      })();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
    forgetEarly();
    supervisor.onGone = () => stop('supervisor gone');
    if (supervisor.gone) stop('supervisor gone');
    // Written only once the signal handlers are in place: whoever reads it may
    // send SIGTERM at once, and must find us ready to clean up (and remove it).
    if (flags.readyFile) {
      const ready = {
        dns: app.bound.map((a) => ({ host: a.host, port: a.port })),
        // The port actually bound, or none: never a link to a port another program holds.
        control: app.server?.loopbackUrl ?? null,
        token: app.token,
        dashboard: app.server?.loopbackUrl ? app.server.dashboardUrl : null,
        pid: process.pid,
      };
      writeFileAtomicSync(flags.readyFile, JSON.stringify(ready) + '\n', 0o600);
    }
    // Asked to stop while starting: now that everything is up, stop as asked (the takeover given back, the ready file removed).
    if (early !== null) stop(`${early} (during start-up)`);
  });
}
