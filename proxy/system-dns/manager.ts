/**
 * The system-DNS takeover as the running proxy offers it (the control API's
 * GET/PUT /api/system-dns): enable and disable through the journal, the
 * rewrite watch while this process holds the takeover, the leak self-test,
 * and one fact everything else reads: whether the takeover is in force now,
 * and why (the privacy state is `off` with that reason while it is not).
 *
 * Invariants:
 * - Changes are serialised; a refused change (no privileges, already
 *   enabled elsewhere, bad backend) changes nothing.
 * - `inForce` is only true while a journal exists, its owner is alive and
 *   the backend says the system points at dotstub.
 * - close() gives the old DNS back when this process holds the takeover
 *   (quit = disable), and never throws.
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { NEEDS_ROOT, SystemDnsError } from './errors.js';
import type { SystemHost } from './host.js';
import { Journal, readBootId, staleReason } from './journal.js';
import { clearLivenessNote, describeLivenessNote, LIVENESS_NOTE_FILE, readLivenessNote, spawnWatchdog, writeCrashNote } from './liveness.js';
import { runLeakTest, type LeakTestResult } from './leak-test.js';
import { osLookup, type LookupReport } from './os-lookup.js';
import { readRewriteNote, REWRITE_NOTE_FILE } from './rewrite-note.js';
import { RewriteWatch } from './rewrite-watch.js';
import { describeStep } from './steps.js';
import type { PrivilegedHelper } from './unit-helper.js';
import type { SystemDnsView, TakeoverCause, TakeoverChange } from './view.js';

export type { SystemDnsView, TakeoverCause };
import { backendByName, detectBackend, enable, replayStaleJournal, restore, status, type TakeoverContext } from './takeover.js';


export interface SystemDnsManagerOptions {
  readonly host: SystemHost;
  readonly stateDir: string;
  /** The port dotstub answers DNS on at 127.0.0.1. */
  readonly port: number;
  /** --backend: overrides detection. */
  readonly backend?: string;
  /** Defaults to "euid is 0, or the host is a test root". */
  readonly privileged?: boolean;
  /** The lookup "through the system" for the leak test (default getaddrinfo). */
  readonly lookup?: (name: string) => Promise<LookupReport>;
  /** How often the journal is looked at for changes made elsewhere (the CLI, the service's ExecStartPost), ms. Default 2000. */
  readonly pollMs?: number;
  /** Rewrite watch timing (tests shorten it). */
  readonly rewriteStepMs?: number;
  readonly bootIdFile?: string;
  readonly log?: (line: string) => void;
  /**
   * Start the liveness watchdog (a separate `dotstub system-dns watchdog`
   * process) with each enable, probing dotstub at this loopback port. Only
   * for a real dotstub process (it runs this process's script again).
   */
  readonly watchdogProbePort?: number;
  /** Take over again at start when the last takeover ended without the user's say (default true). */
  readonly resumeAfterCrash?: boolean;
  /**
   * A crash loop (runtime/stops.ts): that taking over again waits until
   * `until` (epoch ms), and `words` are the reason meanwhile. The machine
   * keeps its usual DNS instead of losing it at every start.
   */
  readonly holdResume?: { readonly until: number; readonly words: string };
  /**
   * The service: this process is not root and changes the system's DNS only
   * through the root part (unit-helper.ts), which also runs the liveness
   * watchdog and the rewrite watch, and gives the DNS back at the service's
   * stop. Without it, this process writes the files itself (root, or a test root).
   */
  readonly helper?: PrivilegedHelper;
}

interface Events {
  /** The takeover's in-force state or reason changed. */
  change: [TakeoverChange];
}

function isRoot(): boolean {
  return process.geteuid?.() === 0;
}

/** Changes whenever the journal or one of the watchdog's notes does (written elsewhere: the CLI, the service, the watchdog). */
function journalKey(stateDir: string): string {
  const mtime = (file: string): string => {
    try {
      return fs.statSync(file).mtimeMs.toString();
    } catch {
      return 'none';
    }
  };
  return `${mtime(new Journal(stateDir).file)}/${mtime(path.join(stateDir, LIVENESS_NOTE_FILE))}/${mtime(path.join(stateDir, REWRITE_NOTE_FILE))}`;
}

export class SystemDnsManager extends EventEmitter<Events> {
  readonly #o: SystemDnsManagerOptions;
  readonly #ctx: TakeoverContext;
  readonly privileged: boolean;
  /** Writes the system's files itself (no helper): then the watch, the watchdog and the replay at start are this process's job. */
  readonly #direct: boolean;
  #inForce = false;
  #reason = 'private DNS is not enabled for this machine: the system asks its usual resolver';
  #problem: string | null = null;
  /** Per takeover (its journal's startedAt): the root watchdog's re-applies already told. */
  readonly #rewritesSeen = new Map<string, number>();
  #lastLeakTest: (LeakTestResult & { at: number }) | null = null;
  #watch: RewriteWatch | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #poll: NodeJS.Timeout | undefined;
  #journalKey = 'none';
  #closed = false;
  /** A pause's end (ms since the epoch) and the timer that re-enables then. */
  #pausedUntil: number | null = null;
  #resumeTimer: NodeJS.Timeout | undefined;
  /** While a crash loop holds the takeover back (holdResume): the words every screen shows as the reason. */
  #held: string | null = null;
  #heldTimer: NodeJS.Timeout | undefined;
  /** Taken over again at start after a crash ended the last takeover: said in the in-force reason until the user's next change. */
  #resumed: string | null = null;
  /** The choice being carried out (set inside its serial step), told with the change it makes. */
  #cause: TakeoverCause | undefined;

  constructor(o: SystemDnsManagerOptions) {
    super();
    this.#o = o;
    this.#ctx = { host: o.host, stateDir: o.stateDir, ...(o.bootIdFile ? { bootIdFile: o.bootIdFile } : {}), ...(o.log ? { log: o.log } : {}) };
    this.#direct = o.helper === undefined;
    this.privileged = o.privileged ?? (o.helper !== undefined || isRoot() || o.host.root !== '/');
  }

  /**
   * Reads the current state once, then follows the journal for changes made
   * elsewhere. A takeover that ended because its owner died (a crash, a
   * kill -9: a journal with no live owner, or the watchdog's note that it
   * gave the old DNS back for that reason) was the user's choice when it
   * ended: it is given back first, then taken over again, and the reason
   * says so. A user's own "off" (disable, pause) leaves neither behind.
   */
  async start(): Promise<void> {
    // With the helper, the service's own root hooks replay and take over at its start.
    if (this.privileged && this.#direct) {
      const note = readLivenessNote(this.#o.stateDir);
      // A journal left by a crash or an earlier boot: give that DNS back first.
      const replayed = await this.#serial(() => replayStaleJournal(this.#ctx));
      const ended = replayed !== null ? { at: new Date().toISOString(), why: `the takeover had no owner (${replayed.reason})` } : note !== null && note.resumedAt === undefined ? note : null;
      if (ended !== null && this.#o.resumeAfterCrash !== false) {
        const hold = this.#o.holdResume;
        if (hold === undefined || hold.until <= Date.now()) await this.#resume(ended);
        else {
          this.#held = hold.words;
          this.#o.log?.(hold.words);
          this.#heldTimer = setTimeout(() => {
            this.#held = null;
            void this.#serial(async () => {
              if (!this.#closed) await this.#resume(ended);
            }).then(() => this.refresh(), () => undefined);
          }, hold.until - Date.now());
        }
      }
    }
    await this.refresh();
    this.#poll = setInterval(() => {
      const key = journalKey(this.#o.stateDir);
      if (key !== this.#journalKey) void this.refresh().catch(() => undefined);
    }, this.#o.pollMs ?? 2000);
    this.#poll.unref();
  }

  /** Takes over again after a takeover that ended without the user's say; if that fails, the reason says what happened and what to do. */
  async #resume(ended: { readonly at: string; readonly why: string }): Promise<void> {
    const when = new Date(ended.at).toLocaleTimeString('en-GB').slice(0, 5);
    const owner = /process (\d+)/.exec(ended.why)?.[1];
    const what = /earlier boot/.test(ended.why)
      ? `the machine restarted while it was on (found at ${when})`
      : owner !== undefined
        ? `dotstub (process ${owner}) stopped unexpectedly at ${when}`
        : `it ended at ${when} without your say (${ended.why})`;
    try {
      await this.#enable({ action: 'turned-back-on' });
      this.#resumed = `private DNS was turned back on at ${new Date().toLocaleTimeString('en-GB').slice(0, 5)}: ${what}, and the old DNS had been given back meanwhile`;
      this.#o.log?.(this.#resumed);
    } catch (err) {
      this.#problem = `private DNS was on, but ${what}, and it could not be turned back on (${(err as Error).message}): the system asks its usual resolver; turn it on again from System DNS or the tray`;
      this.#o.log?.(this.#problem);
    }
  }

  /** In words, when this start took over again after a crash had ended the last takeover (until the user's next change); null otherwise. */
  get resumed(): string | null {
    return this.#resumed;
  }

  get inForce(): boolean {
    return this.#inForce;
  }

  /** Why the takeover is or isn't in force, in words. */
  get reason(): string {
    return this.#reason;
  }

  #serial<T>(fn: () => Promise<T>, cause?: TakeoverCause): Promise<T> {
    const step = async (): Promise<T> => {
      this.#cause = cause;
      try {
        return await fn();
      } finally {
        this.#cause = undefined;
      }
    };
    const run = this.#queue.then(step, step);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #set(inForce: boolean, reason: string): void {
    if (inForce === this.#inForce && reason === this.#reason) return;
    this.#inForce = inForce;
    this.#reason = reason;
    this.emit('change', { inForce, reason, ...(this.#cause ? { cause: this.#cause } : {}) });
  }

  #ownsTakeover(): boolean {
    return new Journal(this.#o.stateDir).read()?.pid === process.pid;
  }

  /** Looks at the journal and the system again; returns the full view. */
  refresh(): Promise<SystemDnsView> {
    return this.#serial(() => this.#view());
  }

  async #view(): Promise<SystemDnsView> {
    this.#journalKey = journalKey(this.#o.stateDir);
    const detection = await detectBackend(this.#o.host, this.#o.backend);
    const s = await status(this.#ctx, detection, this.#o.port);
    const j = new Journal(this.#o.stateDir).read();
    const note = readLivenessNote(this.#o.stateDir);
    if (s.inForce) this.#set(true, `this machine's DNS goes to dotstub (${s.backend}: ${s.why})${note?.resumedAt !== undefined ? `; ${describeLivenessNote(note)}` : this.#resumed !== null ? `; ${this.#resumed}` : ''}`);
    else if (!s.enabled && this.#pausedUntil !== null) {
      this.#set(false, `paused until ${new Date(this.#pausedUntil).toLocaleTimeString('en-GB').slice(0, 5)}: this machine asks its usual resolver, unencrypted, until then; private DNS comes back by itself`);
    } else if (!s.enabled) {
      const fromWatchdog = note ? describeLivenessNote(note) : null;
      const stopped = this.#closed ? 'dotstub stopped and gave the old DNS back: this machine asks its usual resolver' : null;
      this.#set(false, stopped ?? this.#held ?? this.#problem ?? fromWatchdog ?? 'private DNS is not enabled for this machine: the system asks its usual resolver');
    }
    else this.#set(false, `private DNS is enabled but not in force: ${s.why}`);
    if (j !== null && !this.#direct) this.#readRewrites(j.startedAt);
    // Restored elsewhere (disable from the CLI, the liveness watchdog): nothing left to defend.
    if (j === null) this.#stopWatch();
    // Held here (e.g. by dotstub-enable.service's --owner-pid, which the service's ExecStartPost starts): keep it held.
    // Once every step is applied: while ExecStartPost's enable is still at work, "not in force" is no rewrite.
    if (j !== null && j.pid === process.pid && !this.#watch && this.privileged && this.#direct && j.steps.every((e) => e.progress === 'applied')) this.#startWatch(j.backend);
    const bootId = readBootId(this.#o.bootIdFile);
    return {
      privileged: this.privileged,
      privilegeNote: this.privileged ? null : NEEDS_ROOT,
      enabled: s.enabled,
      inForce: this.#inForce,
      reason: this.#reason,
      backend: s.backend,
      backendWhy: j ? `in use since ${new Date(j.startedAt).toLocaleString('en-GB')}; detected now: ${detection.why}` : detection.why,
      backends: detection.all,
      changed: j ? j.steps.filter((e) => e.progress === 'applied').map((e) => describeStep(e.step)) : [],
      original: s.original,
      owner: j ? { pid: j.pid, alive: staleReason(j, bootId) === null, self: j.pid === process.pid } : null,
      leaks: s.leaks,
      lastLeakTest: this.#lastLeakTest,
      problem: this.#problem,
      pausedUntil: this.#pausedUntil,
    };
  }

  /**
   * With the helper, root's watchdog defends the takeover against another
   * program's rewrites (this process can't write the files): what it did
   * comes from its note, and is told as when this process does it itself.
   */
  #readRewrites(takeover: string): void {
    const n = readRewriteNote(this.#o.stateDir, takeover);
    if (n === null) return;
    const seen = this.#rewritesSeen.get(takeover) ?? 0;
    if (n.count > seen) this.#o.log?.(`DNS settings were rewritten by ${n.by}; the service put dotstub back (${n.count})`);
    this.#rewritesSeen.set(takeover, n.count);
    if (n.gaveUp !== undefined && this.#problem !== n.gaveUp) {
      this.#problem = n.gaveUp;
      this.#o.log?.(n.gaveUp);
      this.#set(false, n.gaveUp);
    }
  }

  #clearPause(): void {
    clearTimeout(this.#resumeTimer);
    this.#resumeTimer = undefined;
    this.#pausedUntil = null;
  }

  /**
   * "Pause private DNS for 5 minutes": gives the old DNS back now and takes
   * it over again by itself after `ms` (enable or disable before then ends
   * the pause). Nothing to pause when the takeover isn't held.
   */
  async pause(ms: number): Promise<SystemDnsView> {
    this.#needPrivilege();
    if (new Journal(this.#o.stateDir).read() === null) throw new SystemDnsError('SYSDNS_NOT_ENABLED', 'private DNS is not enabled for this machine: nothing to pause');
    const until = Date.now() + ms;
    // One step: the change it makes is told once, as the pause (with its end), not first as "not enabled".
    const view = await this.#giveBack({ action: 'paused', forMs: ms, until }, until);
    this.#resumeTimer = setTimeout(() => {
      this.#pausedUntil = null;
      if (this.#closed) return;
      this.#enable({ action: 'resumed', early: false }).catch((err: unknown) => {
        this.#problem = `private DNS could not come back after the pause: ${(err as Error).message}`;
        void this.refresh();
      });
    }, ms);
    return view;
  }

  #needPrivilege(): void {
    if (!this.privileged) throw new SystemDnsError('SYSDNS_NEEDS_ROOT', NEEDS_ROOT);
  }

  /** Points the system at dotstub; held by this process (quit gives it back). */
  enable(): Promise<SystemDnsView> {
    return this.#enable(this.#pausedUntil !== null ? { action: 'resumed', early: true } : { action: 'turned-on' });
  }

  #enable(cause: TakeoverCause): Promise<SystemDnsView> {
    this.#clearPause();
    this.#resumed = null;
    return this.#serial(async () => {
      this.#needPrivilege();
      // Stopping: close() gives the old DNS back; a request queued behind it must not take over again.
      if (this.#closed) throw new SystemDnsError('SYSDNS_APPLY_FAILED', 'dotstub is stopping and gives the old DNS back as it goes: turn private DNS on again once it runs');
      if (this.#o.helper) {
        // Held by this process and in force: nothing to ask. A restart of the root unit would give the old DNS
        // back on its stop (every stop of dotstub-enable.service does) and take over again: a gap for nothing.
        if (this.#ownsTakeover()) {
          const now = await this.#view();
          if (now.inForce && this.#problem === null) return now;
        }
        // The root part takes over for this process, starts the watchdog and the rewrite watch, and clears the note.
        await this.#o.helper.enable();
        this.#problem = null;
        return this.#view();
      }
      const detection = await detectBackend(this.#o.host, this.#o.backend);
      await enable(this.#ctx, detection, { port: this.#o.port }, process.pid);
      clearLivenessNote(this.#o.stateDir);
      this.#problem = null;
      if (this.#o.watchdogProbePort !== undefined) {
        try {
          const pid = spawnWatchdog({ stateDir: this.#o.stateDir, root: this.#o.host.root, probePort: this.#o.watchdogProbePort });
          this.#o.log?.(`liveness watchdog started (process ${pid})`);
        } catch (err) {
          this.#o.log?.(`no liveness watchdog: ${(err as Error).message}`);
        }
      }
      this.#startWatch(detection.chosen.name);
      return this.#view();
    }, cause);
  }

  /** Gives the old DNS back (whoever holds the takeover). Nothing to do is not an error. */
  disable(): Promise<SystemDnsView> {
    return this.#giveBack({ action: 'turned-off' }, null);
  }

  /** Gives the old DNS back; `pausedUntil` set (before the view is read) for a pause. */
  #giveBack(cause: TakeoverCause, pausedUntil: number | null): Promise<SystemDnsView> {
    this.#clearPause();
    this.#resumed = null;
    return this.#serial(async () => {
      if (new Journal(this.#o.stateDir).read() !== null) {
        this.#needPrivilege();
        this.#stopWatch();
        if (this.#o.helper) await this.#o.helper.disable();
        else await restore(this.#ctx);
      }
      // The user's choice is "off" (for now): a watchdog waiting to take over again stops (the root part's restore clears it with the helper).
      if (this.privileged && this.#direct) clearLivenessNote(this.#o.stateDir);
      this.#problem = null;
      this.#pausedUntil = pausedUntil;
      return this.#view();
    }, cause);
  }


  /**
   * The leak self-test: a fresh random name through the system; `arrived`
   * says whether dotstub saw it (the caller has the query events).
   */
  leakTest(arrived: (name: string) => Promise<boolean>, answeredLocally?: (name: string) => Promise<boolean>): Promise<SystemDnsView> {
    return this.#serial(async () => {
      const detection = await detectBackend(this.#o.host, this.#o.backend);
      const result = await runLeakTest({
        arrived,
        ...(answeredLocally ? { answeredLocally } : {}),
        otherResolvers: async () => (await status(this.#ctx, detection, this.#o.port)).leaks.slice(),
        lookup: this.#o.lookup ?? ((n) => osLookup(n, 8000)),
      });
      this.#lastLeakTest = { ...result, at: Date.now() };
      return this.#view();
    });
  }

  #startWatch(backendName: string): void {
    this.#stopWatch();
    // By name, not by detection: detection throws while the backend is briefly
    // unusable (resolved restarting to read the drop-in), which crashed the proxy.
    const backend = backendByName(this.#o.host, backendName);
    if (backend === undefined || this.#closed || !this.#ownsTakeover()) return;
    this.#watch = new RewriteWatch({
      host: this.#o.host,
      stateDir: this.#o.stateDir,
      backend,
      target: { port: this.#o.port },
      ...(this.#o.rewriteStepMs !== undefined ? { stepMs: this.#o.rewriteStepMs, pollMs: this.#o.rewriteStepMs * 5 } : {}),
      onEvent: (e) => {
        if (e.type === 'gave-up' || e.type === 'refused') {
          this.#problem = e.message;
          this.#set(false, e.message);
        } else if (e.type === 'search') {
          this.#o.log?.(`search domains now: ${e.domains.join(' ') || '(none)'}`);
        } else {
          this.#o.log?.(`DNS settings were rewritten by ${e.by}; put dotstub back (${e.count})`);
          void this.refresh().catch(() => undefined);
        }
      },
    });
    this.#watch.start();
  }

  #stopWatch(): void {
    this.#watch?.close();
    this.#watch = undefined;
  }

  /** Stops watching; gives the old DNS back if this process holds the takeover. */
  /**
   * The proxy is about to die on an error nothing caught (cli.ts's fail-safe
   * stop): the old DNS back at once, not when the watchdog notices, and a
   * note that makes the next start take over again (as after the watchdog's
   * restore: the user's choice was on). With the service's root part, its
   * ExecStopPost gives the DNS back as soon as this process has exited.
   * Never throws.
   */
  async giveBackOnCrash(why: string): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#heldTimer);
    this.#clearPause();
    clearInterval(this.#poll);
    this.#stopWatch();
    await this.#serial(async () => {
      if (!this.#direct || !this.#ownsTakeover()) return;
      try {
        await restore(this.#ctx, { ownerPid: process.pid });
        writeCrashNote(this.#o.stateDir, `dotstub (process ${process.pid}) stopped on an error it did not expect: ${why}`);
      } catch (err) {
        this.#o.log?.(`could not give the old DNS back: ${(err as Error).message}`);
      }
      this.#set(false, `dotstub stopped on an error it did not expect (${why}); your usual DNS was given back at once`);
    }).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#heldTimer);
    this.#clearPause();
    clearInterval(this.#poll);
    this.#stopWatch();
    await this.#serial(async () => {
      if (!this.#ownsTakeover()) return;
      if (this.#o.helper) {
        // Before this process stops answering, as without the helper. At shutdown systemd refuses to start
        // the unit; then dotstub-enable.service's stop (at shutdown, or the service's ExecStopPost) gives the DNS back.
        await this.#o.helper.disable().catch((err: unknown) => this.#o.log?.(`the old DNS comes back after the stop: ${(err as Error).message}`));
      } else {
        try {
          // Only ours, re-checked under the journal lock.
          await restore(this.#ctx, { ownerPid: process.pid });
        } catch (err) {
          this.#o.log?.(`could not give the old DNS back: ${(err as Error).message}`);
        }
      }
      // Told while the control API still streams (app.ts stops it after this): a page's last word is "given back".
      await this.#view().catch(() => undefined);
    });
  }
}
