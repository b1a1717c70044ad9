/**
 * Files in the user's config dir: atomic writes, and loads that never
 * silently replace what the user had.
 *
 * Layout for a file `settings.json`:
 *   settings.json               what the user (or the app) wrote last
 *   settings.json.good          the last version that loaded or saved cleanly
 *   settings.json.rejected-<t>  a bad file, moved aside only when the app next
 *                               saves (so a user fixing it by hand keeps it)
 *
 * Invariant: a bad file is reported (ConfigProblem) and the last good version
 * is used; the bad bytes stay on disk until the user or a save replaces them,
 * and even then they are kept under a `.rejected-` name.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';

/** A config file that could not be used, for the status API and the CLI. */
export interface ConfigProblem {
  readonly file: string;
  /** What is wrong, in words the user can act on. */
  readonly message: string;
  /** Per-field messages (field path → what is wrong). */
  readonly fields: Readonly<Record<string, string>>;
  /** What dotstub uses instead: "the last good copy (…)" or "defaults". */
  readonly using: string;
}

/** `$XDG_CONFIG_HOME/dotstub`, else `~/.config/dotstub`. */
export function defaultConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
  return path.join(base, 'dotstub');
}

/** Creates the config dir owner-only (0700); tightens it if it is wider. */
export function ensureConfigDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.statSync(dir);
  if (!st.isDirectory()) throw new ConfigError(`${dir} is not a directory: choose another --config-dir`);
  if ((st.mode & 0o077) !== 0 && process.platform !== 'win32') fs.chmodSync(dir, 0o700);
}

/**
 * Writes `data` to `file` so a reader sees the old or the new content, never
 * a mix: write a temp file in the same directory, fsync, rename over, fsync
 * the directory (so the rename itself survives a crash).
 */
export async function writeFileAtomic(file: string, data: string, mode = 0o600): Promise<void> {
  const tmp = tempBeside(file);
  const fh = await fsp.open(tmp, 'wx', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await fsp.rename(tmp, file);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  await syncDir(path.dirname(file));
}

/**
 * Where a write puts its bytes first: beside `file` (a rename never crosses
 * filesystems), named so two writers never meet. `hidden`: a name that starts
 * with a dot, for directories other programs read every file of (/etc's .d
 * directories).
 */
function tempBeside(file: string, hidden = false, ext = 'tmp'): string {
  const nonce = crypto.randomBytes(4).toString('hex');
  return hidden ? path.join(path.dirname(file), `.${path.basename(file)}.dotstub-${nonce}.${ext}`) : `${file}.${process.pid}.${nonce}.${ext}`;
}

/** The hidden name a temp symlink beside `file` gets (system-dns/file-state.ts). */
export const tempLinkBeside = (file: string): string => tempBeside(file, true, 'lnk');

export interface AtomicWriteOptions {
  /** The temp file's name starts with a dot (system-dns/file-state.ts, in /etc). */
  readonly hiddenTemp?: boolean;
}

/**
 * Synchronous twin of writeFileAtomic, for start-up and exit paths and for
 * small state written from a timer or a user's answer (the captive-portal
 * consent file), and for the system's DNS files (system-dns/file-state.ts,
 * which writes in place where the rename fails: the error's syscall is
 * 'rename'): the same temp file, fsync, rename, fsync of the directory. The
 * one synchronous atomic write in proxy/ (lint keeps renameSync here).
 */
export function writeFileAtomicSync(file: string, data: string | Uint8Array, mode = 0o600, o: AtomicWriteOptions = {}): void {
  const tmp = tempBeside(file, o.hiddenTemp);
  const fd = fs.openSync(tmp, 'wx', mode);
  try {
    // The mode asked for, whatever the umask (the service's root hooks run under its UMask=0077).
    fs.fchmodSync(fd, mode);
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  renameIntoPlaceSync(tmp, file);
}

/**
 * The last step of an atomic write: `tmp` renamed over `file`, then the
 * directory fsynced; a rename that fails takes `tmp` away and throws. Also
 * how system-dns/file-state.ts puts a symlink back (a temp link, made with
 * tempLinkBeside's name).
 */
export function renameIntoPlaceSync(tmp: string, file: string): void {
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  syncDirSync(path.dirname(file));
}

/**
 * Moves a file that could not be used aside as `<file>.rejected-<ms>` (kept
 * for the user to look at; never deleted). Returns the new name, or null
 * when there was no file to move.
 */
export function setAsideSync(file: string): string | null {
  const aside = `${file}.rejected-${Date.now()}`;
  try {
    fs.renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return aside;
}

/** fsync a directory so a rename in it survives a power cut (best effort, as syncDir below). */
export function syncDirSync(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    /* best effort */
  }
}

async function syncDir(dir: string): Promise<void> {
  // Not every platform lets a directory be opened for fsync (Windows); the
  // rename is still atomic there, only its durability across a crash differs.
  try {
    const fh = await fsp.open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    /* best effort, see above */
  }
}

/** Turns zod issues into field → message (first message per field wins). */
export function issueFields(issues: readonly z.core.$ZodIssue[], prefix = ''): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const at = [prefix, ...issue.path.map(String), key].filter(Boolean).join('.');
        fields[at] ??= `unknown field "${key}": remove it or check its spelling`;
      }
      continue;
    }
    const at = [prefix, ...issue.path.map(String)].filter(Boolean).join('.') || '(file)';
    fields[at] ??= issue.message;
  }
  return fields;
}

type Parse<T> = (raw: unknown) => { ok: true; value: T } | Invalid;

type Invalid = { ok: false; message: string; fields: Record<string, string> };

/** A file whose fields are wrong, in one message that names each ("invalid settings: poolSize: …; mode: …"). */
export function invalidFields(what: string, fields: Record<string, string>): Invalid {
  return { ok: false, message: `invalid ${what}: ${Object.entries(fields).map(([k, v]) => `${k}: ${v}`).join('; ')}`, fields };
}

type Attempt<T> = { kind: 'missing' } | { kind: 'ok'; value: T } | { kind: 'bad'; message: string; fields: Record<string, string> };

function attempt<T>(file: string, parse: Parse<T>): Attempt<T> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'bad', message: `cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, fields: {} };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { kind: 'bad', message: `not valid JSON (${(err as Error).message}); fix it by hand or change the setting in the dashboard`, fields: {} };
  }
  const r = parse(raw);
  return r.ok ? { kind: 'ok', value: r.value } : { kind: 'bad', message: r.message, fields: r.fields };
}

/**
 * A JSON file holding one validated value. `load()` reads it at start;
 * `save()` writes it atomically and refreshes the good copy.
 */
export class JsonConfigFile<T> {
  readonly file: string;
  readonly #parse: Parse<T>;
  /** Set while the file on disk is bad; the next save moves it aside first. */
  #badOnDisk = false;
  #problem: ConfigProblem | null = null;

  constructor(file: string, parse: Parse<T>) {
    this.file = file;
    this.#parse = parse;
  }

  get goodCopy(): string {
    return `${this.file}.good`;
  }

  /** What was wrong with the file at the last load (for the status API and the CLI), until a save replaces it. */
  get problem(): ConfigProblem | null {
    return this.#problem;
  }

  /** The value to use, and the problem if the file was bad. `value` is undefined when there is nothing usable. */
  load(): { value: T | undefined; problem: ConfigProblem | null } {
    const loaded = this.#load();
    this.#problem = loaded.problem;
    return loaded;
  }

  #load(): { value: T | undefined; problem: ConfigProblem | null } {
    const main = attempt(this.file, this.#parse);
    if (main.kind === 'ok') {
      this.#badOnDisk = false;
      // Best effort: a good copy only matters once the main file goes bad.
      try {
        writeFileAtomicSync(this.goodCopy, JSON.stringify(main.value, null, 2) + '\n');
      } catch {
        /* see above */
      }
      return { value: main.value, problem: null };
    }
    if (main.kind === 'missing') return { value: undefined, problem: null };
    this.#badOnDisk = true;
    const good = attempt(this.goodCopy, this.#parse);
    const usingGood = good.kind === 'ok';
    return {
      value: usingGood ? good.value : undefined,
      problem: {
        file: this.file,
        message: main.message,
        fields: main.fields,
        using: usingGood
          ? `the last good copy (${this.goodCopy}); your file is left as it is until you save from the dashboard`
          : 'defaults (no earlier good copy exists); your file is left as it is until you save from the dashboard',
      },
    };
  }

  async save(value: T): Promise<void> {
    const text = JSON.stringify(value, null, 2) + '\n';
    if (this.#badOnDisk) {
      // Keep the user's bad file: it may hold hand edits worth fixing.
      await fsp.rename(this.file, `${this.file}.rejected-${Date.now()}`).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
      this.#badOnDisk = false;
    }
    await writeFileAtomic(this.file, text);
    await writeFileAtomic(this.goodCopy, text);
    this.#problem = null;
  }
}
