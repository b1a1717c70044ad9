/**
 * The restore journal: what the system's DNS was, what dotstub changed, and
 * how far it got. Written atomically (temp, fsync, rename, fsync the
 * directory) BEFORE the first change, and again as each step starts and
 * completes, so after a crash or a power cut at any point a restore knows
 * exactly what to put back.
 *
 * The journal belongs to its owner process (`pid`) in one boot (`bootId`):
 * when the owner is dead or the machine rebooted, nobody holds the takeover
 * any more and the journal is replayed (restored) at the next start.
 */
import fs from 'node:fs';
import path from 'node:path';
import { syncDirSync, writeFileAtomicSync } from '../files/config-file.js';
import { lazily } from '../files/zod.js';
import { SystemDnsError } from './errors.js';
import type { Step, StepProgress } from './steps.js';

const JOURNAL_FILE = 'system-dns.journal.json';

/** What a journal file must hold (checked when one is read: zod loads then, files/zod.ts). */
const journalSchema = lazily((z) => {
  const fileStateSchema = z.discriminatedUnion('type', [
    z.object({ type: z.literal('absent'), noDir: z.literal(true).optional() }),
    z.object({ type: z.literal('file'), base64: z.string(), mode: z.number().int() }),
    z.object({ type: z.literal('symlink'), target: z.string() }),
  ]);

  const stepSchema = z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('file'), path: z.string(), before: fileStateSchema, after: fileStateSchema, why: z.string() }),
    z.object({ kind: z.literal('reload'), target: z.enum(['systemd-resolved', 'NetworkManager']), why: z.string() }),
    z.object({ kind: z.literal('command'), run: z.array(z.string()), undo: z.array(z.array(z.string())), undoLast: z.boolean().optional(), why: z.string() }),
  ]);

  return z.object({
    version: z.literal(1),
    backend: z.string(),
    port: z.number().int(),
    pid: z.number().int(),
    bootId: z.string(),
    startedAt: z.string(),
    /** What the user had, in words, for status and the dashboard. */
    original: z.array(z.string()),
    steps: z.array(z.object({ step: stepSchema, progress: z.enum(['pending', 'started', 'applied']) })),
  });
});

interface JournalEntry {
  readonly step: Step;
  progress: StepProgress;
}

export interface JournalData {
  readonly version: 1;
  readonly backend: string;
  readonly port: number;
  readonly pid: number;
  readonly bootId: string;
  readonly startedAt: string;
  readonly original: readonly string[];
  readonly steps: JournalEntry[];
}

/** One form for a boot id: the kernel's file has dashes, systemd's %b has none. */
export function sameBoot(a: string, b: string): boolean {
  const norm = (id: string): string => id.replace(/-/g, '').toLowerCase();
  return norm(a) === norm(b);
}

/**
 * This boot's id. Under systemd, every dotstub unit is given the manager's
 * own view (`Environment=DOTSTUB_BOOT_ID=%b`): in a container (nspawn, LXC)
 * a unit with ProtectKernelTunables= sees the kernel's boot id in its
 * /proc/sys, which stays the same across the container's reboots, while
 * its other programs see the container's. Without that variable (a shell,
 * the desktop app's proxy), the kernel's file. `file`: a test's stand-in.
 */
export function readBootId(file?: string): string {
  const fromUnit = file === undefined ? process.env.DOTSTUB_BOOT_ID : undefined;
  if (fromUnit !== undefined && /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(fromUnit)) return fromUnit;
  try {
    return fs.readFileSync(file ?? '/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, owned by someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Why a journal has no live owner, or null when its owner still holds the takeover. */
export function staleReason(j: JournalData, bootId: string): string | null {
  if (!sameBoot(j.bootId, bootId)) return `it was written in an earlier boot (${j.bootId.slice(0, 8)}…, now ${bootId.slice(0, 8)}…)`;
  if (!pidAlive(j.pid)) return `its owner, process ${j.pid}, is gone`;
  return null;
}

/** A journal is a few KiB (the original resolv.conf is the largest part); far more is not one. */
const JOURNAL_MAX_BYTES = 1024 * 1024;

/**
 * The journal's text, read only from a regular file of bounded size, and
 * without following a symlink: root reads this file, and a journal that is
 * a link to /etc/shadow must not have root read (and quote, in a JSON
 * error) someone else's file; a huge one must not take root's memory.
 */
function readRegularFile(file: string): string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new SystemDnsError('SYSDNS_JOURNAL', `${file} is a symlink; a dotstub journal is a plain file, so it is not followed and is left as it is`);
    throw err;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new SystemDnsError('SYSDNS_JOURNAL', `${file} is not a regular file; a dotstub journal is one, so it is left as it is`);
    if (st.size > JOURNAL_MAX_BYTES) throw new SystemDnsError('SYSDNS_JOURNAL', `${file} is ${st.size} bytes, more than a dotstub journal ever is (${JOURNAL_MAX_BYTES}); it is left as it is`);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** JSON.parse's reviver: keys that reach an object's prototype have no place in a journal. */
function refuseObjectKeys(key: string, value: unknown): unknown {
  if (key === '__proto__' || key === 'constructor' || key === 'prototype') {
    throw new SystemDnsError('SYSDNS_JOURNAL', `the journal holds a key ${JSON.stringify(key)}, which dotstub never writes; it is left as it is`);
  }
  return value;
}

export class Journal {
  readonly file: string;

  constructor(stateDir: string) {
    this.file = path.join(stateDir, JOURNAL_FILE);
  }

  /** The journal on disk, or null when there is none. A corrupt journal is an error (never silently dropped: it holds the user's settings). */
  read(): JournalData | null {
    let text: string;
    try {
      text = readRegularFile(this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      if (err instanceof SystemDnsError) throw err;
      throw new SystemDnsError('SYSDNS_JOURNAL', `cannot read ${this.file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text, refuseObjectKeys);
    } catch (err) {
      if (err instanceof SystemDnsError) throw err;
      throw new SystemDnsError('SYSDNS_JOURNAL', `${this.file} is not valid JSON; it holds your original DNS settings, so it is left as it is: repair it or restore the files it lists by hand`, { cause: err });
    }
    const r = journalSchema().safeParse(raw);
    if (!r.success) {
      throw new SystemDnsError('SYSDNS_JOURNAL', `${this.file} is not a dotstub journal this version understands (${r.error.issues[0]?.message ?? 'invalid'}); it is left as it is`);
    }
    return r.data as JournalData;
  }

  /** Atomically replaces the journal: a reader (or a crash) sees the old or the new one, never a mix. */
  write(j: JournalData): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    // The project's one atomic write: temp file, fsync, rename, fsync of the directory.
    // 0644: the service's proxy runs as its own user and reads it (whether the
    // takeover holds, what it changed); only root, which writes it, may change it.
    // It holds DNS settings, which are world-readable where they live anyway.
    writeFileAtomicSync(this.file, JSON.stringify(j, null, 2) + '\n', 0o644);
  }

  remove(): void {
    fs.rmSync(this.file, { force: true });
    syncDirSync(path.dirname(this.file));
  }
}
