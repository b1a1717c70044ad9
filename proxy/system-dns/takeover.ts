/**
 * Enable, restore and status over any backend's plan, with the journal.
 *
 * Order of writes when enabling (each a durable journal write):
 *   1. journal with every step `pending` — before anything changes
 *   2. per step: mark `started`, apply, mark `applied`
 * Restore walks the steps marked `started` or `applied` in reverse, puts the
 * recorded `before` state back (safe even for a step that never ran), runs
 * the service reloads last so services read the restored files, and removes
 * the journal only when every step is undone. Restoring twice is a no-op.
 */
import type { Backend, BackendName, Target } from './backend.js';
import { SystemDnsError } from './errors.js';
import { readState, sameState, writeState, type FileState } from './file-state.js';
import type { SystemHost } from './host.js';
import { Journal, readBootId, sameBoot, staleReason, type JournalData } from './journal.js';
import { journalProblems, trustJournal } from './journal-trust.js';
import { withJournalLock } from './lock.js';
import { NetworkManagerBackend } from './network-manager-backend.js';
import { reloadService } from './reload.js';
import { ResolvConfBackend } from './resolv-conf-backend.js';
import { ResolvedBackend } from './resolved-backend.js';
import { describeStep, type ReloadTarget, type Step } from './steps.js';

export interface TakeoverContext {
  readonly host: SystemHost;
  readonly stateDir: string;
  /** Defaults to /proc/sys/kernel/random/boot_id. */
  readonly bootIdFile?: string;
  /** Progress lines for the user. */
  readonly log?: (line: string) => void;
}

function linuxBackends(host: SystemHost): Backend[] {
  return [new ResolvedBackend(host), new NetworkManagerBackend(host), new ResolvConfBackend(host)];
}

/** A Linux backend by its name, usable or not (the one a journal names). */
export function backendByName(host: SystemHost, name: string): Backend | undefined {
  return linuxBackends(host).find((b) => b.name === name);
}

export interface DetectionReport {
  readonly chosen: Backend;
  readonly why: string;
  /** Every backend's verdict, most specific first. */
  readonly all: readonly { readonly name: BackendName; readonly usable: boolean; readonly why: string }[];
}

/** The most specific usable backend (resolved, then NetworkManager, then plain resolv.conf), or the one asked for. */
export async function detectBackend(host: SystemHost, wanted?: string): Promise<DetectionReport> {
  const backends = linuxBackends(host);
  const all = [];
  for (const b of backends) all.push({ name: b.name, ...(await b.detect()) });
  if (wanted !== undefined) {
    const i = backends.findIndex((b) => b.name === wanted);
    const b = backends[i];
    const d = all[i];
    if (b === undefined || d === undefined) {
      throw new SystemDnsError('SYSDNS_BAD_INPUT', `--backend ${wanted}: choose one of ${backends.map((x) => x.name).join(', ')}`);
    }
    if (!d.usable) throw new SystemDnsError('SYSDNS_BACKEND_UNAVAILABLE', `--backend ${wanted} can't work here: ${d.why}`);
    return { chosen: b, why: `asked for with --backend; ${d.why}`, all };
  }
  const i = all.findIndex((d) => d.usable);
  // resolv.conf is always usable, so there is always a choice.
  return { chosen: backends[i] as Backend, why: (all[i] as { why: string }).why, all };
}

function untouched(file: string, before: FileState): boolean {
  try {
    return sameState(readState(file), before);
  } catch (err) {
    // The path can't exist (a parent is missing or not a directory): nothing was written.
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOTDIR' || code === 'ENOENT';
  }
}

/** How long enable waits for resolved to show the drop-in, and restore for it to drop it (ms). */
const RESOLVED_TAKES_MS = 10_000;
const RESOLVED_GIVES_BACK_MS = 800;

async function applyStep(host: SystemHost, step: Step, port: number): Promise<void> {
  switch (step.kind) {
    case 'file':
      writeState(step.path, step.after);
      return;
    case 'reload':
      if (!(await reloadService(host, step.target, { server: `127.0.0.1:${port}`, present: true, waitMs: RESOLVED_TAKES_MS }))) {
        throw new SystemDnsError('SYSDNS_APPLY_FAILED', `systemd-resolved did not take dotstub's drop-in within ${RESOLVED_TAKES_MS / 1000} s: check "systemctl status systemd-resolved"`);
      }
      return;
    case 'command': {
      const r = await host.run(step.run);
      if (r.code !== 0) throw new SystemDnsError('SYSDNS_APPLY_FAILED', `${step.run.join(' ')} failed: ${r.stderr.trim() || `exit ${String(r.code)}`}`);
    }
  }
}

export interface RestoreResult {
  /** False: there was no journal, nothing to do. */
  readonly restored: boolean;
  readonly backend?: string;
  /** What was undone, in words. */
  readonly undone: readonly string[];
}

/** Runs `fn` as the journal's one owner (lock.ts): every read-decide-change of the journal goes through here. */
function locked<T>(ctx: TakeoverContext, fn: () => Promise<T>): Promise<T> {
  return withJournalLock(ctx.stateDir, fn, { ...(ctx.bootIdFile ? { bootIdFile: ctx.bootIdFile } : {}), ...(ctx.log ? { log: ctx.log } : {}) });
}

/** The same takeover: same owner, boot and start (progress marks may differ). */
function sameTakeover(a: JournalData, b: JournalData): boolean {
  return a.pid === b.pid && sameBoot(a.bootId, b.bootId) && a.startedAt === b.startedAt;
}

export interface RestoreOptions {
  /**
   * Restore only this takeover (the one the caller looked at): if the
   * journal under the lock is another one (someone replayed it and took over
   * again meanwhile), nothing is done.
   */
  readonly only?: JournalData;
  /** Restore only a takeover held by this process. */
  readonly ownerPid?: number;
}

/**
 * Undoes every started or applied step of the journal, in reverse; removes
 * the journal when all are undone. Holds the journal lock throughout.
 */
export function restore(ctx: TakeoverContext, o: RestoreOptions = {}): Promise<RestoreResult> {
  return locked(ctx, () => restoreLocked(ctx, o));
}

/**
 * The journal as root may act on it, or null when there is none: every
 * path from the journal to a write or a program goes through here
 * (journal-trust.ts); a journal dotstub would not write is refused whole.
 */
function readTrusted(ctx: TakeoverContext): JournalData | null {
  const journal = new Journal(ctx.stateDir);
  const j = journal.read();
  return j === null ? null : trustJournal(j, ctx.host, journal.file);
}

async function restoreLocked(ctx: TakeoverContext, o: RestoreOptions = {}): Promise<RestoreResult> {
  const journal = new Journal(ctx.stateDir);
  const j = readTrusted(ctx);
  if (j === null) return { restored: false, undone: [] };
  if ((o.only && !sameTakeover(j, o.only)) || (o.ownerPid !== undefined && j.pid !== o.ownerPid)) {
    return { restored: false, undone: [], backend: j.backend };
  }
  const undone: string[] = [];
  const failures: string[] = [];
  const reloads: ReloadTarget[] = [];
  const deferred: (readonly (readonly string[])[])[] = [];
  for (let i = j.steps.length - 1; i >= 0; i--) {
    const entry = j.steps[i];
    if (entry === undefined || entry.progress === 'pending') continue;
    const step = entry.step;
    try {
      if (step.kind === 'file') {
        const how = writeState(step.path, step.before);
        undone.push(`${step.path}: ${how === 'removed' ? 'removed' : how === 'unchanged' ? 'already as recorded' : 'put back as recorded'}`);
      } else if (step.kind === 'reload') {
        if (!reloads.includes(step.target)) reloads.push(step.target);
      } else if (step.undoLast) {
        deferred.push(step.undo);
      } else {
        for (const argv of step.undo) {
          const r = await ctx.host.run(argv);
          if (r.code !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr.trim() || `exit ${String(r.code)}`}`);
        }
        undone.push(`undid: ${step.run.join(' ')}`);
      }
      entry.progress = 'pending';
      // Durable progress: a crash mid-restore resumes with what is left.
      journal.write(j);
    } catch (err) {
      failures.push(`${describeStep(step)}: ${(err as Error).message}`);
    }
  }
  for (const cmds of deferred) {
    for (const argv of cmds) {
      const r = await ctx.host.run(argv);
      if (r.code === 0) undone.push(`ran ${argv.join(' ')}`);
      else failures.push(`${argv.join(' ')}: ${r.stderr.trim() || `exit ${String(r.code)}`}`);
    }
  }
  for (const target of reloads) {
    try {
      // Bounded: at dotstub's own stop the restart may be queued until it has stopped (then it runs).
      const took = await reloadService(ctx.host, target, { server: `127.0.0.1:${j.port}`, present: false, waitMs: RESOLVED_GIVES_BACK_MS });
      undone.push(took ? `reloaded ${target}` : `asked ${target} to reload (queued)`);
    } catch (err) {
      failures.push((err as Error).message);
    }
  }
  if (failures.length > 0) {
    // Reloads are re-run on the next try: keep them marked.
    throw new SystemDnsError('SYSDNS_RESTORE_FAILED', `could not restore everything (the journal ${journal.file} is kept; run "dotstub system-dns restore" again): ${failures.join('; ')}`);
  }
  journal.remove();
  ctx.log?.(`restored the ${j.backend} settings: ${undone.join('; ')}`);
  return { restored: true, backend: j.backend, undone };
}

/**
 * At start: a journal whose owner is gone (dead pid, or an earlier boot) is
 * replayed, so a crash or a power cut never leaves the machine pointing at a
 * dotstub that isn't there. Returns null when there was nothing to replay.
 */
export async function replayStaleJournal(ctx: TakeoverContext): Promise<(RestoreResult & { reason: string }) | null> {
  // Nothing to do is the common case: no lock for it.
  if (new Journal(ctx.stateDir).read() === null) return null;
  return locked(ctx, () => replayLocked(ctx));
}

/** Under the lock: the journal is re-read and judged here, so what is restored is the stale one found. */
async function replayLocked(ctx: TakeoverContext): Promise<(RestoreResult & { reason: string }) | null> {
  const j = readTrusted(ctx);
  if (j === null) return null;
  const reason = staleReason(j, readBootId(ctx.bootIdFile));
  if (reason === null) return null;
  ctx.log?.(`found a takeover journal with no owner (${reason}): restoring the DNS settings it recorded`);
  return { ...(await restoreLocked(ctx, { only: j })), reason };
}

export interface EnableResult {
  readonly backend: BackendName;
  readonly why: string;
  readonly applied: readonly string[];
}

/**
 * Points the system at dotstub. Validates and plans before anything changes;
 * on any failure restores what was applied and throws SYSDNS_APPLY_FAILED.
 * `ownerPid`: the process whose life the takeover follows (dotstub itself,
 * or this command while it holds the takeover).
 */
export function enable(ctx: TakeoverContext, detection: DetectionReport, target: Target, ownerPid: number): Promise<EnableResult> {
  return locked(ctx, () => enableLocked(ctx, detection, target, ownerPid));
}

async function enableLocked(ctx: TakeoverContext, detection: DetectionReport, target: Target, ownerPid: number): Promise<EnableResult> {
  await replayLocked(ctx);
  const journal = new Journal(ctx.stateDir);
  const existing = readTrusted(ctx);
  // The same owner asking again (the service's start-up hook and the proxy resuming after a crash, in either order): done already.
  if (existing !== null && existing.pid === ownerPid && existing.port === target.port && existing.steps.every((e) => e.progress === 'applied')) {
    return { backend: existing.backend as BackendName, why: `already held by process ${ownerPid}`, applied: [] };
  }
  if (existing !== null) {
    throw new SystemDnsError('SYSDNS_ALREADY_ENABLED', `private DNS is already enabled (${existing.backend}, held by process ${existing.pid}): run "dotstub system-dns disable" first`);
  }
  const backend = detection.chosen;
  const steps = await backend.plan(target);
  const j: JournalData = {
    version: 1,
    backend: backend.name,
    port: target.port,
    pid: ownerPid,
    bootId: readBootId(ctx.bootIdFile),
    startedAt: new Date().toISOString(),
    original: await backend.describeCurrent(),
    steps: steps.map((step) => ({ step, progress: 'pending' })),
  };
  // Only a takeover whose restore will be accepted: an original the restore
  // would refuse (a resolv.conf linked into /tmp, a setuid mode) is said now,
  // before anything changes, never found at restore with DNS pointing here.
  const problems = journalProblems(j, ctx.host);
  if (problems.length > 0) {
    throw new SystemDnsError('SYSDNS_BACKEND_UNAVAILABLE', `dotstub would not be allowed to give back what it found, so it changes nothing: ${problems.join('; ')}`);
  }
  journal.write(j);
  const applied: string[] = [];
  try {
    for (const entry of j.steps) {
      entry.progress = 'started';
      journal.write(j);
      await applyStep(ctx.host, entry.step, target.port);
      entry.progress = 'applied';
      journal.write(j);
      applied.push(describeStep(entry.step));
      ctx.log?.(describeStep(entry.step));
    }
  } catch (err) {
    // The step that threw may not have touched anything (its write failed
    // before the rename): then it needs no undo, and an undo that would fail
    // the same way must not keep the journal (and the user) hanging.
    // Likewise a command that reported failure is taken as not applied (the
    // OS tools change nothing when they fail; its undo would only rewrite
    // recorded values, and may fail the same way).
    const failed = j.steps.find((e) => e.progress === 'started');
    if ((failed?.step.kind === 'file' && untouched(failed.step.path, failed.step.before)) || failed?.step.kind === 'command') {
      failed.progress = 'pending';
      journal.write(j);
    }
    let undo = 'what was changed has been put back';
    try {
      await restoreLocked(ctx);
    } catch (restoreErr) {
      undo = (restoreErr as Error).message;
    }
    throw new SystemDnsError('SYSDNS_APPLY_FAILED', `could not enable private DNS with ${backend.name}: ${(err as Error).message}; ${undo}`, { cause: err });
  }
  return { backend: backend.name, why: detection.why, applied };
}

export interface StatusReport {
  readonly detection: DetectionReport;
  /** The backend of the takeover in the journal, else the detected one. */
  readonly backend: BackendName | string;
  readonly enabled: boolean;
  readonly owner: { readonly pid: number; readonly alive: boolean } | null;
  readonly inForce: boolean;
  readonly why: string;
  readonly leaks: readonly string[];
  readonly original: readonly string[];
}

export async function status(ctx: TakeoverContext, detection: DetectionReport, port: number): Promise<StatusReport> {
  const j = new Journal(ctx.stateDir).read();
  const backends = linuxBackends(ctx.host);
  const backend = (j && backends.find((b) => b.name === j.backend)) || detection.chosen;
  const target = { port: j?.port ?? port };
  const stale = j ? staleReason(j, readBootId(ctx.bootIdFile)) : null;
  const force = await backend.inForce(target);
  const leaks = await backend.leaks(target);
  return {
    detection,
    backend: backend.name,
    enabled: j !== null,
    owner: j ? { pid: j.pid, alive: stale === null } : null,
    inForce: j !== null && force.inForce,
    why: j === null ? 'private DNS is not enabled' : stale ? `the takeover has no owner (${stale}): run "dotstub system-dns restore"` : force.why,
    leaks,
    original: j?.original ?? [],
  };
}
