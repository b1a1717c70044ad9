/**
 * The journal's promises on real files under a temp root: written before
 * anything changes, a crash at any point restores exactly what was started,
 * a failed enable rolls back, a corrupt journal is never guessed at.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { Backend, Target } from './backend.js';
import { fileState, readState } from './file-state.js';
import { systemHost, type SystemHost } from './host.js';
import { Journal, readBootId, sameBoot, staleReason, type JournalData } from './journal.js';
import { NM_CONF, NM_CONF_TEXT } from './network-manager-backend.js';
import { RESOLV_CONF, ResolvConfBackend } from './resolv-conf-backend.js';
import { parseResolvConf, renderStubResolvConf } from './resolv-conf.js';
import { DROP_IN, dropInText } from './resolved-backend.js';
import type { Step } from './steps.js';
import { detectBackend, enable, replayStaleJournal, restore } from './takeover.js';
import { runSystemDnsCli } from './cli.js';

/** The PID of a process that has exited (and been reaped). */
function deadPid(): number {
  return spawnSync('true').pid as number;
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempRoot(resolv = 'nameserver 192.0.2.1\nnameserver 2001:db8::1\nsearch corp.example\n'): { host: SystemHost; state: string; resolvPath: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-sysdns-unit-'));
  dirs.push(root);
  fs.mkdirSync(path.join(root, 'etc'));
  fs.writeFileSync(path.join(root, 'etc/resolv.conf'), resolv);
  // No program runs in these tests: a backend that tried would fail loudly.
  const host: SystemHost = { ...systemHost(root), run: async (argv) => ({ code: 1, stdout: '', stderr: `unexpected run: ${argv.join(' ')}`, missing: true }) };
  return { host, state: path.join(root, 'state'), resolvPath: path.join(root, 'etc/resolv.conf') };
}

/**
 * A backend whose plan writes the three files dotstub manages: resolv.conf,
 * resolved's drop-in and NetworkManager's conf (what root accepts from a
 * journal, journal-trust.ts). `files`: their paths under the root, in order.
 */
function threeFiles(host: SystemHost): { backend: Backend; files: [string, string, string] } {
  const files: [string, string, string] = [host.at(RESOLV_CONF), host.at(DROP_IN), host.at(NM_CONF)];
  fs.mkdirSync(path.dirname(files[2]), { recursive: true });
  const backend: Backend = {
    name: 'resolv.conf',
    detect: async () => ({ usable: true, why: 'test' }),
    describeCurrent: async () => ['test'],
    plan: async (t: Target): Promise<Step[]> => [
      { kind: 'file', path: files[0], before: readState(files[0]), after: fileState(renderStubResolvConf(parseResolvConf(fs.readFileSync(files[0], 'utf8')))), why: 'test' },
      { kind: 'file', path: files[1], before: readState(files[1]), after: fileState(dropInText(t.port)), why: 'test' },
      { kind: 'file', path: files[2], before: readState(files[2]), after: fileState(NM_CONF_TEXT), why: 'test' },
    ],
    inForce: async () => ({ inForce: false, why: 'test' }),
    leaks: async () => [],
  };
  return { backend, files };
}

describe('system-dns journal and takeover (temp root)', () => {
  test('a failure mid-enable puts back what was applied (resolv.conf bytes, the drop-in absent) and leaves no journal', async () => {
    const { host, state, resolvPath } = tempRoot();
    const original = fs.readFileSync(resolvPath);
    const { backend, files } = threeFiles(host);
    const detection = { chosen: backend, why: 'test', all: [] };
    // Once the second step is written, NetworkManager's conf.d becomes a file: the 3rd step fails.
    const log = (line: string): void => {
      if (!line.includes(files[1])) return;
      fs.rmSync(path.dirname(files[2]), { recursive: true });
      fs.writeFileSync(path.dirname(files[2]), 'not a directory');
    };
    const err = await enable({ host, stateDir: state, log }, detection, { port: 53 }, process.pid).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SYSDNS_APPLY_FAILED' });
    expect(String((err as Error).message)).toContain('what was changed has been put back');
    expect(fs.readFileSync(resolvPath).equals(original)).toBe(true);
    expect(fs.existsSync(files[1])).toBe(false);
    expect(new Journal(state).read()).toBeNull();
  });

  test('a crash between steps: restore undoes the applied and the started step, in reverse, and not the pending one', async () => {
    const { host, state, resolvPath } = tempRoot();
    const original = fs.readFileSync(resolvPath);
    const { backend, files } = threeFiles(host);
    const steps = await backend.plan({ port: 53 });
    // What a crash leaves: step 1 applied, step 2 started (and its write done), step 3 never reached.
    fs.writeFileSync(files[0], '# Managed by dotstub (private DNS).\nnameserver 127.0.0.1\n');
    fs.mkdirSync(path.dirname(files[1]), { recursive: true });
    fs.writeFileSync(files[1], dropInText(53));
    fs.writeFileSync(files[2], 'changed by the user since\n');
    const j: JournalData = {
      version: 1, backend: 'resolv.conf', port: 53, pid: deadPid(), bootId: readBootId(), startedAt: new Date().toISOString(), original: [],
      steps: [{ step: steps[0] as Step, progress: 'applied' }, { step: steps[1] as Step, progress: 'started' }, { step: steps[2] as Step, progress: 'pending' }],
    };
    new Journal(state).write(j);
    const r = await replayStaleJournal({ host, stateDir: state });
    expect(r?.reason).toMatch(/owner, process \d+, is gone/);
    expect(fs.readFileSync(resolvPath).equals(original)).toBe(true);
    expect(fs.existsSync(files[1])).toBe(false);
    expect(fs.readFileSync(files[2], 'utf8')).toBe('changed by the user since\n');
    expect(await restore({ host, stateDir: state })).toEqual({ restored: false, undone: [] });
  });

  test('enable records the original bytes in the journal, writes only our nameserver (IPv6 dropped, search kept); restore is byte-identical', async () => {
    const { host, state, resolvPath } = tempRoot();
    const original = fs.readFileSync(resolvPath);
    const backend = new ResolvConfBackend(host);
    await enable({ host, stateDir: state }, { chosen: backend, why: 't', all: [] }, { port: 53 }, process.pid);
    const j = new Journal(state).read();
    const step = j?.steps[0]?.step;
    expect(step?.kind === 'file' && step.before.type === 'file' && Buffer.from(step.before.base64, 'base64').equals(original)).toBe(true);
    expect(fs.readFileSync(resolvPath, 'utf8')).toBe(
      '# Managed by dotstub (private DNS).\n# Your original file is in the journal; `dotstub system-dns restore` puts it back.\nnameserver 127.0.0.1\nsearch corp.example\noptions trust-ad\n',
    );
    await restore({ host, stateDir: state });
    expect(fs.readFileSync(resolvPath).equals(original)).toBe(true);
  });

  test('a corrupt journal is never guessed at: restore exits 1, says what to do, and leaves the files and the journal', async () => {
    const { host, state, resolvPath } = tempRoot('nameserver 127.0.0.1\n');
    fs.mkdirSync(state, { recursive: true });
    fs.writeFileSync(path.join(state, 'system-dns.journal.json'), '{"version":1,"backend":');
    const errs: string[] = [];
    const code = await runSystemDnsCli(['restore', '--root', host.root, '--state-dir', state, '--check-name', ''], { configDir: state, out: () => {}, err: (l) => errs.push(l) });
    expect(code).toBe(1);
    expect(errs.join('\n')).toContain('is not valid JSON; it holds your original DNS settings, so it is left as it is');
    expect(fs.readFileSync(resolvPath, 'utf8')).toBe('nameserver 127.0.0.1\n');
    expect(fs.existsSync(path.join(state, 'system-dns.journal.json'))).toBe(true);
  });

  test('a resolv.conf dotstub wrote, with no journal, is never recorded as "the original"', async () => {
    const { host, state } = tempRoot('# Managed by dotstub (private DNS).\nnameserver 127.0.0.1\n');
    const d = await detectBackend(host, 'resolv.conf');
    await expect(enable({ host, stateDir: state }, d, { port: 53 }, process.pid)).rejects.toMatchObject({ code: 'SYSDNS_JOURNAL' });
    expect(new Journal(state).read()).toBeNull();
  });
});

describe('who may read the journal', () => {
  // The service's proxy runs as its own user and reads the journal root wrote; the root hooks run under the unit's UMask=0077.
  test('the journal is 0644 (readable, writable by root only) whatever the umask of the process writing it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-journal-mode-'));
    const old = process.umask(0o077);
    try {
      const journal = new Journal(dir);
      journal.write({ version: 1, backend: 'resolv.conf', port: 53, pid: process.pid, bootId: 'b', startedAt: new Date().toISOString(), original: [], steps: [] });
      expect((fs.statSync(journal.file).mode & 0o777).toString(8)).toBe('644');
    } finally {
      process.umask(old);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('which boot a journal belongs to', () => {
  test("a unit's boot id is systemd's (%b, no dashes), the same boot as the kernel file's dashed form; another boot is an earlier one", () => {
    const kernel = readBootId();
    const plain = kernel.replace(/-/g, '');
    expect(sameBoot(kernel, plain)).toBe(true);
    expect(sameBoot(kernel.toUpperCase(), plain)).toBe(true);
    const before = process.env.DOTSTUB_BOOT_ID;
    try {
      // As dotstub's units run it: the manager's view, whatever this sandbox's /proc/sys shows.
      process.env.DOTSTUB_BOOT_ID = '618b08471c6f4e0c9a0b1d2e3f405162';
      expect(readBootId()).toBe('618b08471c6f4e0c9a0b1d2e3f405162');
      const j = { version: 1, backend: 'resolv.conf', port: 53, pid: process.pid, bootId: '618b0847-1c6f-4e0c-9a0b-1d2e3f405162', startedAt: new Date().toISOString(), original: [], steps: [] } satisfies JournalData;
      // Written by a root hook that read the dashed file: the same boot, its owner (this process) alive.
      expect(staleReason(j, readBootId())).toBeNull();
      expect(staleReason({ ...j, bootId: 'a7cd3991-953b-4080-851a-c0374420cd28' }, readBootId())).toMatch(/earlier boot/);
      // Not a boot id: ignored, the file is read.
      process.env.DOTSTUB_BOOT_ID = '%b';
      expect(readBootId()).toBe(kernel);
    } finally {
      if (before === undefined) delete process.env.DOTSTUB_BOOT_ID;
      else process.env.DOTSTUB_BOOT_ID = before;
    }
  });
});
