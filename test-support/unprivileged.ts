/**
 * Running a server the tests start as `nobody` when the tests run as root
 * (CI does): setpriv drops every privilege before the program starts, and
 * the program's own directory (its configuration, its copy of the TLS key,
 * whatever it writes) is handed to nobody first. Not root: the program
 * runs as this process's user, unprivileged already.
 */
import fs from 'node:fs';
import path from 'node:path';

/** nobody and nogroup on Debian. */
const NOBODY = 65534;

/** Whether programs started here should drop root (this process is root). */
export function runsAsRoot(): boolean {
  return process.getuid?.() === 0;
}

/** `argv` as nobody (setpriv, no groups) when this process is root; unchanged otherwise. */
export function unprivilegedArgv(argv: readonly string[]): string[] {
  return runsAsRoot() ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...argv] : [...argv];
}

/** Hands `dir` and everything in it to nobody when this process is root. */
export function giveToNobody(dir: string): void {
  if (!runsAsRoot()) return;
  fs.chownSync(dir, NOBODY, NOBODY);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    fs.chownSync(path.join(entry.parentPath, entry.name), NOBODY, NOBODY);
  }
}
