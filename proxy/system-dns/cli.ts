/**
 * `dotstub system-dns enable|disable|status|restore`: the takeover from a
 * shell, a service manager or a package script. Exit codes: 0 done (or
 * nothing to do), 1 failed (the message says what is left and what to do),
 * 2 bad input (nothing changed).
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { isSystemDnsError, NEEDS_ROOT, SystemDnsError } from './errors.js';
import { systemHost, type SystemHost } from './host.js';
import { Journal, pidAlive } from './journal.js';
import { osLookup } from './os-lookup.js';
import { clearLivenessNote, describeLivenessNote, readLivenessNote, spawnWatchdog, waitAnswering, watchLiveness } from './liveness.js';
import { followRewrites, readRewriteNote } from './rewrite-note.js';
import { RewriteWatch } from './rewrite-watch.js';
import { detectBackend, enable, replayStaleJournal, restore, status, type TakeoverContext } from './takeover.js';

export const SYSTEM_DNS_HELP = `Usage: dotstub system-dns enable|disable|status|restore|watchdog [options]

  enable     point this machine's DNS at dotstub. Stays in the foreground and
             gives the old DNS back on Ctrl-C/SIGTERM, unless --owner-pid
             ties the takeover to another process (e.g. the dotstub service)
  disable    give the old DNS back (same as restore)
  restore    put back the DNS settings recorded in the journal; works with
             nothing else running, exits 0 when there is nothing to restore.
             With --only-stale (the boot-time dotstub-restore.service), only
             a takeover whose owner is gone or that is from an earlier boot
             is restored
  status     the backend, whether the takeover is in force, and whether
             lookups can go around dotstub: the running dotstub's leak watch
             when one answers on its control socket ($DOTSTUB_CONTROL_SOCKET,
             or /run/dotstub/control.sock), else one reading of the system's
             DNS settings now (not a watch)
  watchdog   while the takeover holds, ask dotstub on loopback twice a second;
             if it stops answering for more than 3 s (hung, stopped, dead),
             give the old DNS back and say why. Ends when private DNS is
             disabled

  --backend NAME     systemd-resolved | networkmanager | resolv.conf
                     (default: detected; status says which and why)
  --port N           the port dotstub answers on at 127.0.0.1 (default 53;
                     only systemd-resolved can use another)
  --state-dir DIR    where the journal lives (default /var/lib/dotstub as root,
                     else the config dir)
  --owner-pid PID    enable: the takeover lasts while PID runs; the command exits.
                     Takes over only once dotstub answers on 127.0.0.1:PORT
                     (asked every 50 ms, for at most --wait-ms): never points
                     the machine at a stub that isn't answering yet
  --only-stale       restore: leave a takeover held by a running dotstub alone
  --wait-ms N        enable --owner-pid: how long to wait for the first answer
                     (default 15000; 0: don't ask)
  --watchdog         enable: also start the liveness watchdog in the background
  --rewrite-watch    enable --watchdog, watchdog: the watchdog also puts
                     dotstub's settings back when another program rewrites
                     them (for an owner that can't: the service's proxy,
                     which runs without root)
  --probe-port N     watchdog: where dotstub answers on 127.0.0.1 (default --port)
  --grace-ms N       watchdog: how long without an answer before restoring
                     (default 3000)
  --check-name NAME  after a restore, resolve NAME through the system and say
                     whether DNS works (default example.com; "" for none)
  --root DIR         act on copies of the system files under DIR (for tests)
`;

export interface SystemDnsCliEnv {
  /** The user's config dir, the state dir when not root. */
  readonly configDir: string;
  readonly out?: (line: string) => void;
  readonly err?: (line: string) => void;
  /**
   * status: the leak line, written with `out` (the command wires it,
   * cli/leak-report.ts: the running dotstub's leak watch, else one reading
   * now; reading the network's facts is not this module's job). Returns
   * whether anything was measured; absent: no leak line.
   */
  readonly leaks?: (root: string, port: number, out: (line: string) => void) => Promise<boolean>;
}

interface Parsed {
  readonly command: 'enable' | 'disable' | 'status' | 'restore' | 'watchdog' | 'help';
  readonly backend: string | undefined;
  readonly port: number;
  readonly stateDir: string;
  readonly ownerPid: number | undefined;
  readonly checkName: string;
  readonly root: string;
  readonly watchdog: boolean;
  readonly probePort: number;
  readonly graceMs: number;
  readonly waitMs: number;
  readonly onlyStale: boolean;
  readonly rewriteWatch: boolean;
}

function intArg(value: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new SystemDnsError('SYSDNS_BAD_INPUT', `${flag} ${value}: expected a whole number from ${min} to ${max}`);
  }
  return Number(value);
}

function isRoot(): boolean {
  return process.geteuid?.() === 0;
}

export function parseSystemDnsArgs(argv: readonly string[], env: SystemDnsCliEnv): Parsed {
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      options: {
        backend: { type: 'string' },
        port: { type: 'string' },
        'state-dir': { type: 'string' },
        'owner-pid': { type: 'string' },
        'check-name': { type: 'string' },
        root: { type: 'string' },
        watchdog: { type: 'boolean' },
        'probe-port': { type: 'string' },
        'grace-ms': { type: 'string' },
        'wait-ms': { type: 'string' },
        'only-stale': { type: 'boolean' },
        'rewrite-watch': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    }));
  } catch (err) {
    throw new SystemDnsError('SYSDNS_BAD_INPUT', `${(err as Error).message}. See dotstub system-dns --help.`);
  }
  const command = values.help ? 'help' : positionals[0];
  if (command !== 'enable' && command !== 'disable' && command !== 'status' && command !== 'restore' && command !== 'watchdog' && command !== 'help') {
    throw new SystemDnsError('SYSDNS_BAD_INPUT', `${command === undefined ? 'missing command' : `unknown command "${command}"`}: use enable, disable, status, restore or watchdog`);
  }
  if (values['only-stale'] && command !== 'restore') throw new SystemDnsError('SYSDNS_BAD_INPUT', '--only-stale goes with restore');
  if (values.watchdog && command !== 'enable') throw new SystemDnsError('SYSDNS_BAD_INPUT', '--watchdog goes with enable');
  if (values['rewrite-watch'] && !(command === 'watchdog' || (command === 'enable' && values.watchdog))) throw new SystemDnsError('SYSDNS_BAD_INPUT', '--rewrite-watch goes with enable --watchdog, or watchdog');
  if (positionals.length > 1) throw new SystemDnsError('SYSDNS_BAD_INPUT', `unexpected "${positionals[1] ?? ''}": one command at a time`);
  const ownerPid = intArg(values['owner-pid'], '--owner-pid', 1, 2 ** 22);
  if (ownerPid !== undefined && command !== 'enable') throw new SystemDnsError('SYSDNS_BAD_INPUT', '--owner-pid goes with enable');
  const waitMs = intArg(values['wait-ms'], '--wait-ms', 0, 600_000);
  if (waitMs !== undefined && ownerPid === undefined) throw new SystemDnsError('SYSDNS_BAD_INPUT', '--wait-ms goes with enable --owner-pid');
  const checkName = values['check-name'] ?? 'example.com';
  if (checkName !== '' && !/^[A-Za-z0-9_.-]{1,253}$/.test(checkName)) throw new SystemDnsError('SYSDNS_BAD_INPUT', `--check-name ${checkName}: give a host name such as example.com`);
  const port = intArg(values.port, '--port', 1, 65535) ?? 53;
  return {
    command,
    backend: values.backend,
    port,
    watchdog: values.watchdog ?? false,
    probePort: intArg(values['probe-port'], '--probe-port', 1, 65535) ?? port,
    graceMs: intArg(values['grace-ms'], '--grace-ms', 500, 600_000) ?? 3000,
    waitMs: waitMs ?? 15_000,
    onlyStale: values['only-stale'] ?? false,
    rewriteWatch: values['rewrite-watch'] ?? false,
    stateDir: values['state-dir'] ?? (isRoot() ? '/var/lib/dotstub' : env.configDir),
    ownerPid,
    checkName,
    root: values.root ?? '/',
  };
}

async function afterRestore(checkName: string, out: (l: string) => void): Promise<void> {
  if (checkName === '') return;
  const r = await osLookup(checkName, 8000);
  out(r.ok ? `DNS works: ${r.text}` : `warning: ${r.text}; check your network settings`);
}

/** Refuses before anything changes when this process can't write system files. */
function needRoot(host: SystemHost): void {
  if (host.root === '/' && !isRoot()) throw new SystemDnsError('SYSDNS_NEEDS_ROOT', NEEDS_ROOT);
}

export async function runSystemDnsCli(argv: readonly string[], env: SystemDnsCliEnv): Promise<number> {
  const out = env.out ?? ((l: string) => console.log(l));
  const err = env.err ?? ((l: string) => console.error(`dotstub: ${l}`));
  let parsed: Parsed;
  try {
    parsed = parseSystemDnsArgs(argv, env);
  } catch (e) {
    if (isSystemDnsError(e)) {
      err(e.message);
      return 2;
    }
    throw e;
  }
  if (parsed.command === 'help') {
    out(SYSTEM_DNS_HELP);
    return 0;
  }
  // System files and the directories made for them as the system expects them (0644, 0755), and readable by the
  // service's proxy (its own user), whatever umask root runs this with: the service's hooks run under its UMask=0077.
  if (isRoot()) process.umask(0o022);
  const host = systemHost(parsed.root);
  const ctx: TakeoverContext = { host, stateDir: parsed.stateDir, log: out };
  try {
    switch (parsed.command) {
      case 'restore':
      case 'disable': {
        // The user's choice is "off" now: a watchdog waiting to take over again stops.
        if (!parsed.onlyStale && (isRoot() || host.root !== '/')) clearLivenessNote(parsed.stateDir);
        if (new Journal(parsed.stateDir).read() === null) {
          out('nothing to restore: dotstub has not changed this system\'s DNS');
          return 0;
        }
        needRoot(host);
        if (parsed.onlyStale) {
          if ((await replayStaleJournal(ctx)) === null) {
            const j = new Journal(parsed.stateDir).read();
            out(j ? `left alone: private DNS is held by process ${j.pid}, which is running` : "nothing to restore: dotstub has not changed this system's DNS");
            return 0;
          }
        } else await restore(ctx);
        await afterRestore(parsed.checkName, out);
        return 0;
      }
      case 'status': {
        const replayed = isRoot() || host.root !== '/' ? await replayStaleJournal(ctx) : null;
        if (replayed) await afterRestore(parsed.checkName, out);
        const detection = await detectBackend(host, parsed.backend);
        const s = await status(ctx, detection, parsed.port);
        out(`backend: ${s.backend} (${s.enabled ? 'from the journal' : `detected: ${detection.why}`})`);
        out(`private DNS: ${s.inForce ? 'on' : 'off'} (${s.why})`);
        if (s.owner) out(`held by: process ${s.owner.pid}${s.owner.alive ? '' : ' (gone)'}`);
        const note = readLivenessNote(parsed.stateDir);
        if (note) out(`watchdog: ${describeLivenessNote(note)}`);
        const held = new Journal(parsed.stateDir).read();
        const rewrites = held === null ? null : readRewriteNote(parsed.stateDir, held.startedAt);
        if (rewrites) out(`rewrites: ${rewrites.gaveUp ?? `another program rewrote the DNS settings; dotstub was put back ${rewrites.count} time(s), last by ${rewrites.by}`}`);
        for (const o of s.original) out(`original: ${o}`);
        const measured = env.leaks ? await env.leaks(host.root, new Journal(parsed.stateDir).read()?.port ?? parsed.port, out) : false;
        // The backend's own check mostly says again what the leak watch reads; it is shown, as what it is, only when that read nothing.
        if (!measured) for (const l of s.leaks) out(`the ${s.backend} backend's own check: ${l}`);
        for (const d of detection.all) out(`  ${d.usable ? 'usable' : 'not usable'}: ${d.name}: ${d.why}`);
        return 0;
      }
      case 'watchdog': {
        if (new Journal(parsed.stateDir).read() === null) {
          out('nothing to watch: private DNS is not enabled');
          return 0;
        }
        needRoot(host);
        out(`watching dotstub on 127.0.0.1:${parsed.probePort} (restores the old DNS after ${parsed.graceMs} ms without an answer; takes over again once it answers steadily)`);
        // While a takeover holds (not between a restore and the resume: there is nothing to defend then).
        const rewrites = parsed.rewriteWatch ? followRewrites(host, parsed.stateDir, out, err) : null;
        rewrites?.start();
        try {
          const r = await watchLiveness({
            ctx,
            probePort: parsed.probePort,
            graceMs: parsed.graceMs,
            onEvent: async (e) => {
              if (e.type === 'resumed') {
                out(`private DNS is back: ${e.message}`);
                rewrites?.start();
              } else {
                rewrites?.stop();
                out(`restored the old DNS: ${e.why}`);
                await afterRestore(parsed.checkName, out);
              }
            },
          });
          out(r.why);
        } finally {
          rewrites?.stop();
        }
        return 0;
      }
      case 'enable': {
        needRoot(host);
        const detection = await detectBackend(host, parsed.backend);
        out(`backend: ${detection.chosen.name} (${detection.why})`);
        const owner = parsed.ownerPid ?? process.pid;
        clearLivenessNote(parsed.stateDir);
        // The service's ExecStartPost: `systemctl start` returns when this
        // does, so the first lookup after it must find dotstub answering.
        if (parsed.ownerPid !== undefined && parsed.waitMs > 0) {
          const t0 = Date.now();
          if (!(await waitAnswering('127.0.0.1', parsed.probePort, parsed.waitMs, () => pidAlive(owner)))) {
            throw new SystemDnsError(
              'SYSDNS_APPLY_FAILED',
              pidAlive(owner)
                ? `dotstub (process ${owner}) did not answer on 127.0.0.1:${parsed.probePort} within ${parsed.waitMs} ms: the DNS settings were not changed`
                : `process ${owner} exited before it answered on 127.0.0.1:${parsed.probePort}: the DNS settings were not changed`,
            );
          }
          out(`dotstub answers on 127.0.0.1:${parsed.probePort} (after ${Date.now() - t0} ms)`);
        }
        // Held by this process (no --owner-pid): Ctrl-C or SIGTERM from the moment the files may change gives them back,
        // also one that comes while they are being written or before the watch below is up (a script that saw the line).
        const stop = parsed.ownerPid === undefined ? stopSignals() : null;
        try {
          await enable(ctx, detection, { port: parsed.port }, owner);
        } catch (e) {
          stop?.dispose();
          throw e;
        }
        if (parsed.watchdog) {
          const pid = spawnWatchdog({ stateDir: parsed.stateDir, root: parsed.root, probePort: parsed.probePort, graceMs: parsed.graceMs, checkName: parsed.checkName, rewriteWatch: parsed.rewriteWatch });
          out(`liveness watchdog started (process ${pid})`);
        }
        if (stop === null) {
          out(`private DNS enabled for as long as process ${owner} runs; "dotstub system-dns disable" gives the old DNS back`);
          return 0;
        }
        out('private DNS enabled; Ctrl-C (or "dotstub system-dns disable") gives the old DNS back');
        const watch = new RewriteWatch({
          host,
          stateDir: parsed.stateDir,
          backend: detection.chosen,
          target: { port: parsed.port },
          onEvent: (e) =>
            e.type === 'reapplied' ? out(`DNS settings were rewritten by ${e.by}; put dotstub back (${e.count})`)
            : e.type === 'search' ? out(`search domains now: ${e.domains.join(' ') || '(none)'}`)
            : err(e.message),
        });
        watch.start();
        try {
          return await holdUntilStopped(ctx, parsed.checkName, out, stop, () => watch.close());
        } finally {
          watch.close();
          stop.dispose();
        }
      }
    }
  } catch (e) {
    if (isSystemDnsError(e)) {
      err(e.message);
      return e.code === 'SYSDNS_BAD_INPUT' ? 2 : 1;
    }
    throw e;
  }
}


/** SIGINT and SIGTERM, caught from now on: the first one's name, whenever it came (before or after `stopped` is asked). */
interface StopSignals {
  readonly stopped: Promise<string>;
  dispose(): void;
}

function stopSignals(): StopSignals {
  let said: (why: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => (said = resolve));
  const onInt = (): void => said('SIGINT');
  const onTerm = (): void => said('SIGTERM');
  process.once('SIGINT', onInt);
  process.once('SIGTERM', onTerm);
  return {
    stopped,
    dispose() {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
}

/** Holds the takeover: restores on SIGINT/SIGTERM (`stop`, caught since before the files changed); exits when someone else ran disable (the journal is gone). */
function holdUntilStopped(ctx: TakeoverContext, checkName: string, out: (l: string) => void, stop: StopSignals, beforeRestore: () => void = () => {}): Promise<number> {
  const journal = new Journal(ctx.stateDir);
  return new Promise((resolve) => {
    let done = false;
    const finish = async (why: string): Promise<void> => {
      if (done) return;
      done = true;
      clearInterval(poll);
      beforeRestore();
      out(`${why}: giving the old DNS back`);
      try {
        await restore(ctx);
        await afterRestore(checkName, out);
        resolve(0);
      } catch (e) {
        console.error(`dotstub: ${(e as Error).message}`);
        resolve(1);
      }
    };
    const poll = setInterval(() => {
      if (!fs.existsSync(journal.file) && !done) {
        done = true;
        clearInterval(poll);
        out('private DNS was disabled elsewhere');
        resolve(0);
      }
    }, 1000);
    void stop.stopped.then((why) => finish(why));
  });
}
