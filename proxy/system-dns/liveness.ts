/**
 * The liveness watchdog (docs/system-dns.md, "Liveness"): a separate process
 * that, while the takeover holds, asks dotstub on loopback every half second
 * for a name it answers itself (under resolver.arpa, never forwarded, so a
 * slow or blocked resolver doesn't look like a dead stub). If no answer came
 * for more than `graceMs` (3 s), or the journal's owner is gone, it gives the
 * system its old DNS back and says why. A hung dotstub (SIGSTOP, a busy
 * loop, a deadlock) leaves the machine with DNS all the same: Tailscale
 * #11558 (a panicked daemon left resolv.conf pointing at nothing).
 *
 * A stub that was only hung comes back: after such a restore the watchdog
 * keeps asking, and once dotstub answers steadily again (3 answers in a
 * row) it takes over again for the same owner, unless the user changed
 * their choice meanwhile. Its note in the state dir says what happened
 * ("dotstub stopped answering at 10:02; private DNS resumed at 10:03").
 *
 * It ends by itself when the journal goes (disabled or restored elsewhere)
 * or the takeover's owner is gone.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { askOverUdp, idOnly } from '../dns/ask-udp.js';
import { Journal, readBootId, staleReason, type JournalData } from './journal.js';
import { detectBackend, enable, restore, type TakeoverContext } from './takeover.js';

/** What the watchdog leaves in the state dir when it restored, for the proxy to tell the user. */
export const LIVENESS_NOTE_FILE = 'system-dns.liveness.json';
const NOTE_FILE = LIVENESS_NOTE_FILE;

export interface LivenessNote {
  readonly at: string;
  readonly why: string;
  /** The stub stopped answering (its owner still runs): private DNS comes back when it answers again. */
  readonly resumable?: boolean;
  /** When private DNS was taken over again. */
  readonly resumedAt?: string;
}

export interface LivenessOptions {
  readonly ctx: TakeoverContext;
  /** Where dotstub answers on loopback. */
  readonly probePort: number;
  readonly probeHost?: string;
  /** No answer for longer than this: restore (default 3000). */
  readonly graceMs?: number;
  /** Between probes (default 500). */
  readonly intervalMs?: number;
  /** Answers in a row before private DNS is taken over again after a restore (default 3: about 1.5 s). */
  readonly steadyAnswers?: number;
  /** Told as the old DNS is given back, and as private DNS is taken over again. */
  readonly onEvent?: (e: LivenessEvent) => void | Promise<void>;
}

export interface LivenessResult {
  readonly restored: boolean;
  readonly why: string;
}

/**
 * Asks once; resolves true on any answer with our ID within `timeoutMs`.
 * Root runs this: it looks at the ID alone and parses nothing more. Nothing
 * listening comes back at once as an ICMP error (the socket is connected)
 * instead of a timeout.
 */
async function probe(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return (await askOverUdp({ host, port, name: 'liveness.dotstub.resolver.arpa', type: 'A', timeoutMs, read: idOnly })).answered;
}

/**
 * Waits until dotstub answers on `host:port` (a real DNS query, as every
 * program's lookups will be), asking every 50 ms for at most `ms`. False
 * when it never answered, or `alive()` said the process went away.
 */
export async function waitAnswering(host: string, port: number, ms: number, alive: () => boolean = () => true): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive()) return false;
    const started = Date.now();
    if (await probe(host, port, Math.max(50, Math.min(500, end - Date.now())))) return true;
    const rest = 50 - (Date.now() - started);
    if (rest > 0) await new Promise((r) => setTimeout(r, rest));
  }
  return false;
}

export function readLivenessNote(stateDir: string): LivenessNote | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(stateDir, NOTE_FILE), 'utf8')) as LivenessNote;
  } catch {
    return null;
  }
}

/** The user's choice changed (enable, disable, pause): the watchdog's story is over. */
export function clearLivenessNote(stateDir: string): void {
  fs.rmSync(path.join(stateDir, NOTE_FILE), { force: true });
}

/** A note a dying proxy leaves (its fail-safe stop gave the DNS back): the next start takes over again, as after the watchdog's. */
export function writeCrashNote(stateDir: string, why: string): void {
  writeNote(stateDir, { at: new Date().toISOString(), why });
}

function writeNote(stateDir: string, note: LivenessNote): void {
  // Readable by the service's proxy (its own user), which tells the user what the watchdog did.
  const file = path.join(stateDir, NOTE_FILE);
  fs.writeFileSync(file, JSON.stringify(note) + '\n', { mode: 0o644 });
  // Whatever the umask (the service's root hooks run under its UMask=0077).
  fs.chmodSync(file, 0o644);
}

const hhmm = (iso: string): string => new Date(iso).toLocaleTimeString('en-GB').slice(0, 5);

/** What the watchdog did, in words, for status, the app and the dashboard. */
export function describeLivenessNote(n: LivenessNote): string {
  if (n.resumedAt !== undefined) return `dotstub stopped answering at ${hhmm(n.at)}; private DNS resumed at ${hhmm(n.resumedAt)}`;
  if (n.resumable) return `dotstub stopped answering at ${hhmm(n.at)} (${n.why}): the old DNS was given back; private DNS comes back by itself once dotstub answers steadily again`;
  return `${n.why}: the old DNS was given back at ${hhmm(n.at)}`;
}

/** One watch of one takeover: ends when the journal goes, or restores when the stub stops answering or its owner is gone. */
async function watchTakeover(o: LivenessOptions): Promise<{ restored: false; why: string } | { restored: true; why: string; journal: JournalData; note: LivenessNote }> {
  const host = o.probeHost ?? '127.0.0.1';
  const grace = o.graceMs ?? 3000;
  const interval = o.intervalMs ?? 500;
  const journal = new Journal(o.ctx.stateDir);
  let lastAnswer = Date.now();
  for (;;) {
    const j = journal.read();
    if (j === null) return { restored: false, why: 'private DNS was disabled: nothing to watch' };
    const stale = staleReason(j, readBootId(o.ctx.bootIdFile));
    let why: string | null = stale === null ? null : `the takeover has no owner (${stale})`;
    if (why === null) {
      const started = Date.now();
      if (await probe(host, o.probePort, Math.min(1000, grace))) lastAnswer = Date.now();
      else if (Date.now() - lastAnswer > grace) {
        why = `dotstub stopped answering on ${host}:${o.probePort} for more than ${(grace / 1000).toFixed(0)} s`;
      }
      const rest = interval - (Date.now() - started);
      if (why === null && rest > 0) await new Promise((r) => setTimeout(r, rest));
    }
    if (why !== null) {
      // Re-read: a disable that raced with us has already done the work.
      if (journal.read() === null) return { restored: false, why: 'private DNS was disabled: nothing to watch' };
      o.ctx.log?.(`${why}: giving the old DNS back`);
      // The note first: whoever sees the journal gone must also find why.
      const note: LivenessNote = { at: new Date().toISOString(), why, resumable: stale === null };
      writeNote(o.ctx.stateDir, note);
      // Only the takeover watched: under the lock, a new one (taken meanwhile) is left alone.
      await restore(o.ctx, { only: j });
      return { restored: true, why, journal: j, note };
    }
  }
}

/**
 * After a restore because the stub stopped answering: asks it every
 * interval; after `steadyAnswers` answers in a row, takes over again for the
 * same owner, backend and port — as long as the user's choice is still
 * "on" (the note is still ours: enable, disable and pause clear it) and the
 * owner still runs. Returns the new takeover, or why not.
 */
async function resumeWhenSteady(o: LivenessOptions, j: JournalData, note: LivenessNote): Promise<{ resumed: true; note: LivenessNote } | { resumed: false; why: string }> {
  const host = o.probeHost ?? '127.0.0.1';
  const interval = o.intervalMs ?? 500;
  const needed = o.steadyAnswers ?? 3;
  const journal = new Journal(o.ctx.stateDir);
  const stillOurs = (): boolean => readLivenessNote(o.ctx.stateDir)?.at === note.at;
  let steady = 0;
  for (;;) {
    if (!stillOurs()) return { resumed: false, why: 'private DNS was turned off or on elsewhere: not taking over again' };
    if (journal.read() !== null) return { resumed: false, why: 'private DNS was enabled elsewhere: nothing to resume' };
    const gone = staleReason(j, readBootId(o.ctx.bootIdFile));
    if (gone !== null) return { resumed: false, why: `not taking over again: ${gone}` };
    const started = Date.now();
    steady = (await probe(host, o.probePort, Math.min(1000, o.graceMs ?? 3000))) ? steady + 1 : 0;
    if (steady >= needed) {
      try {
        const detection = await detectBackend(o.ctx.host, j.backend);
        await enable(o.ctx, detection, { port: j.port }, j.pid);
      } catch (err) {
        o.ctx.log?.(`could not take over again yet: ${(err as Error).message}`);
        steady = 0;
      }
      const now = journal.read();
      if (now !== null && now.pid === j.pid) {
        // The user may have turned it off while we took over: then give it back again.
        if (!stillOurs()) {
          await restore(o.ctx, { only: now });
          return { resumed: false, why: 'private DNS was turned off meanwhile: gave the old DNS back again' };
        }
        const resumed: LivenessNote = { ...note, resumedAt: new Date().toISOString() };
        writeNote(o.ctx.stateDir, resumed);
        return { resumed: true, note: resumed };
      }
    }
    const rest = interval - (Date.now() - started);
    if (rest > 0) await new Promise((r) => setTimeout(r, rest));
  }
}

type LivenessEvent = { readonly type: 'restored'; readonly why: string } | { readonly type: 'resumed'; readonly message: string };

/**
 * Watches until private DNS is disabled or its owner is gone. A stub that
 * stops answering gets the old DNS given back; once it answers steadily
 * again, private DNS is taken over again by itself (and watched again).
 */
export async function watchLiveness(o: LivenessOptions): Promise<LivenessResult> {
  let restoredOnce = false;
  for (;;) {
    const r = await watchTakeover(o);
    if (!r.restored) return { restored: restoredOnce, why: r.why };
    restoredOnce = true;
    await o.onEvent?.({ type: 'restored', why: r.why });
    if (!r.note.resumable) return { restored: true, why: r.why };
    const back = await resumeWhenSteady(o, r.journal, r.note);
    if (!back.resumed) return { restored: true, why: back.why };
    const message = describeLivenessNote(back.note);
    o.ctx.log?.(message);
    await o.onEvent?.({ type: 'resumed', message });
  }
}

export interface WatchdogSpawn {
  readonly stateDir: string;
  readonly root: string;
  readonly probePort: number;
  readonly graceMs?: number;
  readonly checkName?: string;
  /** The watchdog also runs the rewrite watch (for an owner that can't write the system's files). */
  readonly rewriteWatch?: boolean;
}

/**
 * Starts `dotstub system-dns watchdog` as its own process (detached: it must
 * outlive a hung or killed dotstub), with the same dotstub this process runs
 * ($DOTSTUB_CLI when set, as in the package scripts). Returns its pid.
 */
export function spawnWatchdog(w: WatchdogSpawn): number {
  const cli = process.env.DOTSTUB_CLI;
  const script = process.argv[1];
  const argv = cli ? [cli] : script !== undefined && fs.existsSync(script) ? [process.execPath, ...process.execArgv, script] : null;
  if (argv === null) throw new Error('cannot tell how to run dotstub again for the watchdog: set DOTSTUB_CLI');
  const args = ['system-dns', 'watchdog', '--state-dir', w.stateDir, '--root', w.root, '--probe-port', String(w.probePort), '--grace-ms', String(w.graceMs ?? 3000), '--check-name', w.checkName ?? '', ...(w.rewriteWatch ? ['--rewrite-watch'] : [])];
  const child = spawn(argv[0] as string, [...argv.slice(1), ...args], { detached: true, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } });
  child.unref();
  return child.pid ?? 0;
}
