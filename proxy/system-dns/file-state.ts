/**
 * A file's state as the journal records it — absent, bytes plus mode, or a
 * symlink and its target — and the writes that put a state back.
 *
 * Invariant: `writeState(p, readState(p))` leaves `p` byte-identical (and a
 * symlink stays a symlink to the same target; a directory that was not
 * there is not there again), so a restore gives back exactly what was
 * recorded, never a regenerated or empty file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { renameIntoPlaceSync, syncDirSync, tempLinkBeside, writeFileAtomicSync } from '../files/config-file.js';

export type FileState =
  /**
   * noDir: its directory was absent too (resolved's /run/systemd/resolved.conf.d
   * before dotstub's drop-in): putting `absent` back removes the directory
   * again when nothing else is in it, so a restore leaves no trace.
   */
  | { readonly type: 'absent'; readonly noDir?: true }
  | { readonly type: 'file'; readonly base64: string; readonly mode: number }
  | { readonly type: 'symlink'; readonly target: string };

export function readState(file: string): FileState {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return fs.existsSync(path.dirname(file)) ? { type: 'absent' } : { type: 'absent', noDir: true };
    throw err;
  }
  if (st.isSymbolicLink()) return { type: 'symlink', target: fs.readlinkSync(file) };
  return { type: 'file', base64: fs.readFileSync(file).toString('base64'), mode: st.mode & 0o7777 };
}

export function fileState(text: string, mode = 0o644): FileState {
  return { type: 'file', base64: Buffer.from(text).toString('base64'), mode };
}

export function sameState(a: FileState, b: FileState): boolean {
  if (a.type !== b.type) return false;
  if (a.type === 'file' && b.type === 'file') return a.base64 === b.base64;
  if (a.type === 'symlink' && b.type === 'symlink') return a.target === b.target;
  return true;
}

/** Errors a rename over a bind-mounted file (or across filesystems) gives: write in place instead. */
const IN_PLACE_CODES = new Set(['EBUSY', 'EXDEV', 'EPERM']);

function writeBytes(file: string, bytes: Buffer, mode: number): 'renamed' | 'copied' {
  try {
    writeFileAtomicSync(file, bytes, mode, { hiddenTemp: true });
    return 'renamed';
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.syscall !== 'rename' || !IN_PLACE_CODES.has(e.code ?? '')) throw err;
  }
  // The target is a mount point (a bind-mounted resolv.conf in a container or
  // namespace): rename can't replace it, so truncate and write in place. Not
  // atomic, but a reader sees at worst a short file for an instant.
  const out = fs.openSync(file, 'w');
  try {
    fs.writeFileSync(out, bytes);
    fs.fsyncSync(out);
  } finally {
    fs.closeSync(out);
  }
  return 'copied';
}

/** Removes `dir` if it is there and empty; anything in it (another program's files) keeps it. */
function removeEmptyDir(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTEMPTY' || code === 'EEXIST') return;
    throw err;
  }
  syncDirSync(path.dirname(dir));
}

/**
 * Makes `file` be `state`. Files go through temp + rename (copy when the file
 * is a bind mount); symlinks through a temp link + rename (both
 * files/config-file.ts's); absent removes.
 */
export function writeState(file: string, state: FileState): 'renamed' | 'copied' | 'removed' | 'unchanged' {
  if (sameState(readState(file), state)) {
    // A restore cut short between the file and its directory: finish it.
    if (state.type === 'absent' && state.noDir) removeEmptyDir(path.dirname(file));
    return 'unchanged';
  }
  switch (state.type) {
    case 'absent':
      fs.rmSync(file, { force: true });
      syncDirSync(path.dirname(file));
      if (state.noDir) removeEmptyDir(path.dirname(file));
      return 'removed';
    case 'file':
      fs.mkdirSync(path.dirname(file), { recursive: true });
      return writeBytes(file, Buffer.from(state.base64, 'base64'), state.mode);
    case 'symlink': {
      const tmp = tempLinkBeside(file);
      fs.symlinkSync(state.target, tmp);
      renameIntoPlaceSync(tmp, file);
      return 'renamed';
    }
  }
}
