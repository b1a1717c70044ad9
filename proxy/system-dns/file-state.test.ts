/**
 * Putting a recorded state back leaves no trace of the takeover: a drop-in
 * whose directory dotstub had to create (resolved's
 * /run/systemd/resolved.conf.d, absent on a stock Debian) takes that
 * directory with it when it goes, unless something else is in it by then.
 * Seen in the install lab: after `systemctl stop dotstub` and after purge,
 * an empty /run/systemd/resolved.conf.d was left behind.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { Backend } from './backend.js';
import { fileState, readState, writeState } from './file-state.js';
import { systemHost } from './host.js';
import { Journal } from './journal.js';
import { dropInText } from './resolved-backend.js';
import { enable, replayStaleJournal } from './takeover.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function root(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-file-state-'));
  dirs.push(d);
  return d;
}

describe('writeState: a file and the directory it needed', () => {
  test('a drop-in in a directory that was not there: putting it back removes both', () => {
    const dir = path.join(root(), 'resolved.conf.d');
    const file = path.join(dir, '50-dotstub.conf');
    const before = readState(file);
    writeState(file, fileState('[Resolve]\nDNS=127.0.0.1:53\n'));
    expect(fs.readFileSync(file, 'utf8')).toContain('DNS=127.0.0.1:53');
    expect(writeState(file, before)).toBe('removed');
    expect(fs.existsSync(dir)).toBe(false);
  });

  test('the directory stays when it was there before, or when another file is in it by now', () => {
    const base = root();
    const had = path.join(base, 'had');
    fs.mkdirSync(had);
    const f1 = path.join(had, '50-dotstub.conf');
    const before1 = readState(f1);
    writeState(f1, fileState('x\n'));
    writeState(f1, before1);
    expect(fs.readdirSync(had)).toEqual([]);

    const made = path.join(base, 'made');
    const f2 = path.join(made, '50-dotstub.conf');
    const before2 = readState(f2);
    writeState(f2, fileState('x\n'));
    fs.writeFileSync(path.join(made, '60-admin.conf'), 'theirs\n');
    writeState(f2, before2);
    expect(fs.readdirSync(made)).toEqual(['60-admin.conf']);
  });

  test('a restore cut short after the file went (the directory left) finishes the job when run again', () => {
    const dir = path.join(root(), 'resolved.conf.d');
    const file = path.join(dir, '50-dotstub.conf');
    const before = readState(file);
    writeState(file, fileState('x\n'));
    fs.rmSync(file);
    expect(writeState(file, before)).toBe('unchanged');
    expect(fs.existsSync(dir)).toBe(false);
  });

  test('a recorded state from a journal written before directories were recorded still restores the file', () => {
    const dir = path.join(root(), 'resolved.conf.d');
    const file = path.join(dir, '50-dotstub.conf');
    writeState(file, fileState('x\n'));
    expect(writeState(file, { type: 'absent' })).toBe('removed');
    expect(fs.existsSync(file)).toBe(false);
  });

  test('through the journal: enable writes a drop-in into a directory it had to make; a restore from the journal file (as after a crash) removes both', async () => {
    const base = root();
    const file = path.join(base, 'run/systemd/resolved.conf.d/50-dotstub.conf');
    fs.mkdirSync(path.join(base, 'run/systemd'), { recursive: true });
    const backend: Backend = {
      name: 'systemd-resolved',
      detect: async () => ({ usable: true, why: 'test' }),
      describeCurrent: async () => ['test'],
      plan: async () => [{ kind: 'file', path: file, before: readState(file), after: fileState(dropInText(53)), why: 'test' }],
      inForce: async () => ({ inForce: true, why: 'test' }),
      leaks: async () => [],
    };
    const host = { ...systemHost(base), run: async () => ({ code: 1, stdout: '', stderr: 'no programs here', missing: true }) };
    const state = path.join(base, 'state');
    await enable({ host, stateDir: state }, { chosen: backend, why: 'test', all: [] }, { port: 53 }, process.pid);
    expect(fs.existsSync(file)).toBe(true);
    // The journal as a later process reads it (from the file), its owner gone and the boot another one.
    const j = new Journal(state).read();
    expect(j?.steps[0]?.step).toMatchObject({ before: { type: 'absent', noDir: true } });
    new Journal(state).write({ ...(j as NonNullable<typeof j>), bootId: 'an-earlier-boot' });
    expect(await replayStaleJournal({ host, stateDir: state })).not.toBeNull();
    expect(fs.existsSync(path.dirname(file))).toBe(false);
    expect(fs.readdirSync(path.join(base, 'run/systemd'))).toEqual([]);
  });
});
