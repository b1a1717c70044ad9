/**
 * One owner of the journal at a time, across processes: the proxy's replay
 * at start, the service's `enable` (ExecStartPost), the boot-time restore,
 * the liveness watchdog, `disable` from a shell. Without it two of them can
 * replay the same stale journal at once and one deletes the journal the
 * other has just written (a power cut with the service enabled came back
 * with private DNS silently off).
 *
 * The lock is a file in the state dir created atomically (link(2) of a
 * complete temp file: it exists whole or not at all) holding its owner's
 * pid, the process's start time, the boot id and a random nonce. A lock
 * whose owner is gone (dead pid, a pid reused by another process, or an
 * earlier boot) is stale and taken over: renamed aside, then checked to be
 * the very lock found stale (the nonce) before it is deleted; a live lock
 * moved aside by mistake is put back.
 *
 * Invariants: held only for short critical sections (read the journal,
 * decide, change, write it); not re-entrant (a holder calls the *Locked
 * functions); release removes only our own lock.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SystemDnsError } from './errors.js';
import { pidAlive, readBootId, sameBoot } from './journal.js';

export const LOCK_FILE = 'system-dns.lock';

interface LockData {
  readonly pid: number;
  /** Field 22 of /proc/PID/stat (clock ticks since boot): tells a reused pid apart. */
  readonly start: string | null;
  readonly bootId: string;
  readonly nonce: string;
  readonly at: string;
}

function processStart(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function readLock(file: string): LockData | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as LockData;
  } catch {
    return null;
  }
}

/** Why a lock has no live owner, or null when its owner still runs. */
function staleLock(l: LockData | null, bootId: string): string | null {
  if (l === null || typeof l.pid !== 'number') return 'it is unreadable';
  if (typeof l.bootId !== 'string' || !sameBoot(l.bootId, bootId)) return 'it was taken in an earlier boot';
  if (!pidAlive(l.pid)) return `its owner, process ${l.pid}, is gone`;
  const start = processStart(l.pid);
  if (l.start !== null && start !== null && start !== l.start) return `process ${l.pid} is another program now`;
  return null;
}

export interface LockOptions {
  readonly bootIdFile?: string;
  /** Give up waiting for a live owner after this long (default 30 s: a resolved restart can take 10). */
  readonly timeoutMs?: number;
  readonly log?: (line: string) => void;
}

/** An unreadable lock younger than this may be one being written by hand; older, it is stale. */
const UNREADABLE_GRACE_MS = 2000;

async function acquire(stateDir: string, o: LockOptions): Promise<LockData> {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, LOCK_FILE);
  const bootId = readBootId(o.bootIdFile);
  const mine: LockData = { pid: process.pid, start: processStart(process.pid), bootId, nonce: crypto.randomBytes(8).toString('hex'), at: new Date().toISOString() };
  const tmp = `${file}.${mine.nonce}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(mine) + '\n', { mode: 0o600, flag: 'wx' });
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  try {
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      try {
        fs.linkSync(tmp, file);
        return mine;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const found = readLock(file);
      let stale = staleLock(found, bootId);
      if (found === null && stale !== null) {
        // Gone between link and read, or unreadable: only an old unreadable lock is stale.
        try {
          if (Date.now() - fs.statSync(file).mtimeMs < UNREADABLE_GRACE_MS) stale = null;
        } catch {
          continue;
        }
      }
      if (stale !== null) {
        const aside = `${file}.stale.${mine.nonce}`;
        try {
          fs.renameSync(file, aside);
        } catch {
          continue; // someone else took it first
        }
        const moved = readLock(aside);
        if (found === null || moved?.nonce === found.nonce) {
          o.log?.(`took over the journal lock (${stale})`);
          fs.rmSync(aside, { force: true });
        } else {
          // A live owner's lock, taken between our read and the rename: give it back.
          try {
            fs.linkSync(aside, file);
          } catch {
            /* a third process took the lock meanwhile; the moved owner's release will find it gone */
          }
          fs.rmSync(aside, { force: true });
        }
        continue;
      }
      if (Date.now() > deadline) {
        throw new SystemDnsError(
          'SYSDNS_JOURNAL',
          `another dotstub process (${found ? `process ${found.pid}` : 'unknown'}) has been changing the DNS settings for more than ${((o.timeoutMs ?? 30_000) / 1000).toFixed(0)} s (lock ${file}): try again, or remove that file if no dotstub is running`,
        );
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

function release(stateDir: string, mine: LockData): void {
  const file = path.join(stateDir, LOCK_FILE);
  if (readLock(file)?.nonce === mine.nonce) fs.rmSync(file, { force: true });
}

/** Runs `fn` holding the journal lock of `stateDir`; waits (bounded) for another holder. */
export async function withJournalLock<T>(stateDir: string, fn: () => Promise<T>, o: LockOptions = {}): Promise<T> {
  const mine = await acquire(stateDir, o);
  try {
    return await fn();
  } finally {
    release(stateDir, mine);
  }
}
