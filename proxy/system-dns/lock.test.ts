/**
 * The journal lock on real files: one holder at a time, a lock left by a
 * dead process or an earlier boot is taken over, a live one is waited for
 * (bounded, with a sentence that says what to do).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, onTestFinished, test } from 'vitest';
import { LOCK_FILE, withJournalLock } from './lock.js';
import { readBootId } from './journal.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function stateDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-lock-'));
  dirs.push(d);
  return d;
}

function plant(dir: string, lock: object): void {
  fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ start: null, nonce: 'planted', at: new Date().toISOString(), ...lock }));
}

test('holders run one at a time, in the same process too', async () => {
  const dir = stateDir();
  let inside = 0;
  let most = 0;
  const work = (): Promise<void> =>
    withJournalLock(dir, async () => {
      inside++;
      most = Math.max(most, inside);
      await new Promise((r) => setTimeout(r, 20));
      inside--;
    });
  await Promise.all([work(), work(), work(), work()]);
  expect(most).toBe(1);
  expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
});

test('a lock left by a dead process, or taken in an earlier boot, is taken over', async () => {
  const dir = stateDir();
  const dead = spawnSync('true').pid as number;
  plant(dir, { pid: dead, bootId: readBootId() });
  const log: string[] = [];
  expect(await withJournalLock(dir, async () => 'ran', { log: (l) => log.push(l) })).toBe('ran');
  expect(log).toEqual([`took over the journal lock (its owner, process ${dead}, is gone)`]);
  // Our own pid is alive, but the lock is from another boot.
  plant(dir, { pid: process.pid, bootId: 'earlier-boot' });
  expect(await withJournalLock(dir, async () => 'ran again')).toBe('ran again');
});

test('a live owner is waited for, and past the bound the error says what to do', async () => {
  const dir = stateDir();
  const sleeper = spawn('sleep', ['30']);
  onTestFinished(() => void sleeper.kill());
  plant(dir, { pid: sleeper.pid, bootId: readBootId() });
  const t0 = Date.now();
  await expect(withJournalLock(dir, async () => 'never', { timeoutMs: 300 })).rejects.toThrow(
    new RegExp(`another dotstub process \\(process ${String(sleeper.pid)}\\) has been changing the DNS settings .* remove that file if no dotstub is running`),
  );
  expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
  // Its lock is still there, untouched.
  expect(JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: sleeper.pid, nonce: 'planted' });
});
