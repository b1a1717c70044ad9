/**
 * Vitest's global setup: every temporary file a test run makes goes under
 * one directory of its own (TMPDIR, which os.tmpdir() and the programs the
 * tests start read), removed when the run ends. Test workers can be
 * stopped without running their 'exit' listeners (temp.ts), so removing at
 * exit alone left config dirs and test PKIs behind run after run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-vitest-'));
  // Like /tmp itself (sticky, everyone may write): tests run some commands as nobody.
  fs.chmodSync(dir, 0o1777);
  process.env.TMPDIR = dir;
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
