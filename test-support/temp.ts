/** Temporary directories of a test process, removed when it exits (one 'exit' listener for all). */
import fs from 'node:fs';

const dirs = new Set<string>();
let listening = false;

export function removeOnExit(dir: string): string {
  dirs.add(dir);
  if (!listening) {
    listening = true;
    process.once('exit', () => {
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    });
  }
  return dir;
}
