/**
 * What root will do from a journal, and nothing else.
 *
 * Root (the service's start and stop hooks, dotstub-enable/-disable/-restore,
 * the watchdog) replays the journal: it writes the `before` of every file
 * step, runs reloads and command undos, and the rewrite watch writes the
 * `after` of dotstub's own files again. Whoever can change the journal can
 * therefore make root write files and run programs, so root reads it as
 * untrusted input and accepts only what dotstub itself ever journals:
 *
 * | field          | accepted                                                               |
 * | -------------- | ---------------------------------------------------------------------- |
 * | backend        | one of BACKENDS                                                        |
 * | port, pid      | a port (1-65535); a process id (1 to PID_MAX)                          |
 * | file step path | exactly one of MANAGED_FILES under the host root, each at most once,  |
 * |                | its directory not reached through a symlink                            |
 * | resolv.conf    | before: the user's original as it was read (a file of at most         |
 * |                | MAX_FILE_BYTES, no setuid/setgid/sticky bit, not world-writable; or   |
 * |                | a symlink into a directory of RESOLV_CONF_LINK_DIRS; or absent);       |
 * |                | after: dotstub's stub, whose nameservers are loopback only            |
 * | drop-in, NM    | before: absent, or dotstub's own text (a leftover);                    |
 * |                | after: exactly dotstub's text (the drop-in's for the journal's port)  |
 * | reload step    | systemd-resolved or NetworkManager                                    |
 * | command step   | only in a macOS or Windows journal, one of the argv shapes their      |
 * |                | plans write (desktop-plans.ts); never on a Linux backend              |
 * | strings        | bounded, no control characters (they end up in the log)                |
 *
 * Anything else refuses the WHOLE journal: a journal with one step dotstub
 * would never write was not written by dotstub as it is, and none of its
 * steps is to be believed. Refusing writes nothing, runs nothing, keeps the
 * journal where it is for a person to look at, and says in words what was
 * refused and why (the error's message, which the root commands print to
 * their log).
 *
 * Enable checks its own journal with the same rules before anything
 * changes, so a takeover is only ever made when its restore will be
 * accepted (an original this module would refuse is refused at enable,
 * never discovered at restore with the machine pointing at dotstub).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { BackendName } from './backend.js';
import { SystemDnsError } from './errors.js';
import type { FileState } from './file-state.js';
import type { SystemHost } from './host.js';
import type { JournalData } from './journal.js';
import { NM_CONF, NM_CONF_TEXT } from './network-manager-backend.js';
import { RESOLV_CONF } from './resolv-conf-backend.js';
import { MANAGED_MARKER, parseResolvConf, STUB_ADDRESSES } from './resolv-conf.js';
import { DROP_IN, dropInText } from './resolved-backend.js';
import type { Step } from './steps.js';

const BACKENDS: readonly BackendName[] = ['systemd-resolved', 'networkmanager', 'resolv.conf', 'macos', 'windows'];

/** Linux's PID_MAX_LIMIT: no process has a larger id. */
const PID_MAX = 4_194_304;
/** A resolv.conf is a few hundred bytes; its limit in glibc is far below this. */
const MAX_FILE_BYTES = 64 * 1024;
/** Every plan has at most a few steps per adapter; far more is not a plan. */
const MAX_STEPS = 64;
const MAX_WORDS = 2000;

/** The files root writes for dotstub (system paths; under the host root in a test). */
type ManagedFile = 'resolv.conf' | 'drop-in' | 'networkmanager';
const MANAGED_FILES: Readonly<Record<ManagedFile, string>> = {
  'resolv.conf': RESOLV_CONF,
  'drop-in': DROP_IN,
  networkmanager: NM_CONF,
};

/**
 * Where a symlinked resolv.conf points on the systems dotstub runs on
 * (resolved's stub and uplink files, resolvconf's, NetworkManager's,
 * connman's, netconfig's, WSL's), as a system path. A link elsewhere (a
 * user's home, /tmp, /run/user) would hand the machine's DNS to whoever
 * writes there.
 */
const RESOLV_CONF_LINK_DIRS: readonly string[] = [
  '/run/systemd/resolve/',
  '/usr/lib/systemd/',
  '/lib/systemd/',
  '/run/resolvconf/',
  '/etc/resolvconf/run/',
  '/run/NetworkManager/',
  '/run/connman/',
  '/run/netconfig/',
  '/mnt/wsl/',
];

/** An attacker's string, shown safely in a log line: quoted, escaped, cut. */
function shown(v: unknown): string {
  const s = typeof v === 'string' ? v : String(v);
  return JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…` : s);
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

function words(v: string, what: string, problems: string[]): void {
  if (v.length > MAX_WORDS) problems.push(`${what} is ${v.length} characters long (at most ${MAX_WORDS})`);
  else if (CONTROL.test(v)) problems.push(`${what} ${shown(v)} holds control characters`);
}

function bytesOf(state: Extract<FileState, { type: 'file' }>): Buffer | null {
  // Canonical base64 only: what Buffer decodes and encodes back the same.
  if (state.base64.length > Math.ceil(MAX_FILE_BYTES / 3) * 4) return null;
  const bytes = Buffer.from(state.base64, 'base64');
  return bytes.toString('base64') === state.base64 ? bytes : null;
}

/** Why a file's content is not one root writes, or null: a text file of bounded size with a sane mode. */
function plainFileProblem(state: Extract<FileState, { type: 'file' }>, mode: 'original' | 'ours'): { problem: string } | { text: string } {
  const bytes = bytesOf(state);
  if (bytes === null) return { problem: `its content is not base64 of at most ${MAX_FILE_BYTES} bytes` };
  if (bytes.includes(0)) return { problem: 'its content holds NUL bytes: not a text file' };
  if (!Number.isInteger(state.mode) || (state.mode & ~0o777) !== 0) return { problem: `its mode ${state.mode.toString(8)} has setuid, setgid or sticky bits` };
  if ((state.mode & 0o002) !== 0) return { problem: `its mode ${state.mode.toString(8)} makes it writable by every user` };
  if (mode === 'ours' && state.mode !== 0o644) return { problem: `dotstub writes its files 0644, not ${state.mode.toString(8)}` };
  return { text: bytes.toString('utf8') };
}

/** A resolv.conf symlink's target as a system path (relative targets are relative to /etc). */
function linkTargetProblem(target: string): string | null {
  if (target.length === 0 || target.length > 4096 || target.includes('\0')) return `its symlink target ${shown(target)} is not a path`;
  const abs = path.posix.resolve(path.posix.dirname(RESOLV_CONF), target);
  if (!/^[\w.-]*resolv\.conf$/.test(path.posix.basename(abs))) return `its symlink target ${shown(target)} is not a resolv.conf`;
  if (!RESOLV_CONF_LINK_DIRS.some((d) => abs.startsWith(d))) {
    return `its symlink target ${shown(target)} is outside the directories that generate resolv.conf (${RESOLV_CONF_LINK_DIRS.join(', ')})`;
  }
  return null;
}

function stateProblem(file: ManagedFile, which: 'before' | 'after', state: FileState, port: number): string | null {
  if (file === 'resolv.conf') {
    if (which === 'before') {
      // The user's original, put back only here, where it was read from.
      if (state.type === 'absent') return state.noDir ? '/etc does not go away' : null;
      if (state.type === 'symlink') return linkTargetProblem(state.target);
      const r = plainFileProblem(state, 'original');
      return 'problem' in r ? r.problem : null;
    }
    // Ours: the stub, which sends lookups to this machine and nowhere else.
    if (state.type !== 'file') return `dotstub's resolv.conf is a file, not ${state.type === 'symlink' ? `a symlink to ${shown(state.target)}` : 'absent'}`;
    const r = plainFileProblem(state, 'ours');
    if ('problem' in r) return r.problem;
    if (!r.text.includes(MANAGED_MARKER)) return "it is not dotstub's resolv.conf (no managed-by line)";
    const servers = parseResolvConf(r.text).nameservers;
    const foreign = servers.filter((s) => !STUB_ADDRESSES.has(s));
    if (foreign.length > 0) return `it names nameserver ${foreign.map(shown).join(', ')}: dotstub's resolv.conf names only loopback (${[...STUB_ADDRESSES].join(', ')})`;
    if (servers.length === 0) return 'it names no nameserver';
    return null;
  }
  // dotstub's own files: nothing of the user's was ever there (before is absent, or a leftover of ours).
  if (state.type === 'absent') return which === 'after' ? `dotstub's ${file} file is written, not removed, when taking over` : null;
  if (state.type === 'symlink') return `it would be a symlink to ${shown(state.target)}; dotstub's ${file} file is a plain file`;
  const r = plainFileProblem(state, 'ours');
  if ('problem' in r) return r.problem;
  if (file === 'networkmanager') return r.text === NM_CONF_TEXT ? null : "its content is not dotstub's NetworkManager settings";
  const m = /^DNS=127\.0\.0\.1:(\d{1,5})$/m.exec(r.text);
  const written = m ? Number(m[1]) : NaN;
  if (which === 'after' && r.text !== dropInText(port)) return `its content is not dotstub's drop-in for port ${port}`;
  if (which === 'before' && r.text !== dropInText(written)) return "its content is not a dotstub drop-in";
  return null;
}

/** The managed file a journal path names, with the problem when it names none (or goes through a symlinked directory). */
function managedFile(host: SystemHost, p: string): { file: ManagedFile } | { problem: string } {
  const entry = (Object.entries(MANAGED_FILES) as [ManagedFile, string][]).find(([, sys]) => host.at(sys) === p);
  if (entry === undefined) {
    return { problem: `${shown(p)} is not a file dotstub manages (only ${Object.values(MANAGED_FILES).map((f) => host.at(f)).join(', ')})` };
  }
  // Exact path, and no symlink on the way inside the host root: a directory
  // replaced by a link (/etc/NetworkManager/conf.d → /root/.ssh) would take
  // root's write elsewhere. (A file in the way only makes the write fail:
  // that is a restore's ordinary failure, not a refusal.)
  const [file, sys] = entry;
  for (let dir = path.posix.dirname(sys); dir !== '/'; dir = path.posix.dirname(dir)) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(host.at(dir));
    } catch {
      continue; // not there (yet): nothing to follow
    }
    if (st.isSymbolicLink()) return { problem: `${host.at(dir)}, on the way to ${p}, is a symlink (to ${shown(fs.readlinkSync(host.at(dir)))}): root writes only the real path` };
  }
  return { file };
}

// ---- command steps: only what the macOS and Windows plans write ----

const PS = ['powershell.exe', '-NoProfile', '-NonInteractive', '-Command'];
const NRPT_ADD = "Add-DnsClientNrptRule -Namespace '.' -NameServers '127.0.0.1' -Comment 'dotstub'";
const NRPT_REMOVE = "Get-DnsClientNrptRule | Where-Object { $_.Comment -eq 'dotstub' } | Remove-DnsClientNrptRule -Force";
const MAC_FLUSH = 'dscacheutil -flushcache; killall -HUP mDNSResponder';

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function windowsCommandOk(cmd: string): boolean {
  if (cmd === NRPT_ADD || cmd === NRPT_REMOVE) return true;
  if (/^Set-DnsClientServerAddress -InterfaceIndex [1-9]\d{0,8} -ResetServerAddresses$/.test(cmd)) return true;
  const m = /^Set-DnsClientServerAddress -InterfaceIndex [1-9]\d{0,8} -ServerAddresses \(('[0-9A-Fa-f:.]{1,45}'(?:,'[0-9A-Fa-f:.]{1,45}'){0,15})\)$/.exec(cmd);
  return m !== null && (m[1] as string).split(',').every((a) => net.isIP(a.slice(1, -1)) !== 0);
}

/** Whether an argv is one the macOS or Windows plan writes (run or undo). */
function commandOk(backend: string, argv: readonly string[]): boolean {
  if (backend === 'windows') {
    if (sameArgv(argv, ['ipconfig', '/flushdns'])) return true;
    return argv.length === PS.length + 1 && sameArgv(argv.slice(0, PS.length), PS) && windowsCommandOk(argv[PS.length] as string);
  }
  if (backend === 'macos') {
    if (sameArgv(argv, ['dscacheutil', '-flushcache']) || sameArgv(argv, ['killall', '-HUP', 'mDNSResponder']) || sameArgv(argv, ['sh', '-c', MAC_FLUSH])) return true;
    const [prog, verb, service, ...servers] = argv;
    if (prog !== 'networksetup' || verb !== '-setdnsservers' || service === undefined) return false;
    // A service name is the user's ("Wi-Fi"); as one argv element it is never a shell word, but it must not read as a flag.
    if (service.length > 128 || service.startsWith('-') || CONTROL.test(service)) return false;
    return (servers.length === 1 && servers[0] === 'Empty') || (servers.length > 0 && servers.length <= 16 && servers.every((s) => net.isIP(s) !== 0));
  }
  return false;
}

function stepProblems(host: SystemHost, j: JournalData, step: Step, seen: Set<string>): string[] {
  const problems: string[] = [];
  words(step.why, 'its reason', problems);
  switch (step.kind) {
    case 'file': {
      const m = managedFile(host, step.path);
      if ('problem' in m) return [...problems, m.problem];
      if (seen.has(m.file)) problems.push(`${step.path} appears twice (dotstub journals each file once)`);
      seen.add(m.file);
      const before = stateProblem(m.file, 'before', step.before, j.port);
      if (before) problems.push(`what it would put back in ${step.path}: ${before}`);
      const after = stateProblem(m.file, 'after', step.after, j.port);
      if (after) problems.push(`what it says dotstub wrote to ${step.path}: ${after}`);
      return problems;
    }
    case 'reload':
      if (step.target !== 'systemd-resolved' && step.target !== 'NetworkManager') problems.push(`it reloads ${shown(step.target)}, not systemd-resolved or NetworkManager`);
      if (seen.has(`reload ${step.target}`)) problems.push(`it reloads ${step.target} twice`);
      seen.add(`reload ${step.target}`);
      return problems;
    case 'command': {
      if (j.backend !== 'macos' && j.backend !== 'windows') return [...problems, `it runs ${shown(step.run.join(' '))}: a ${shown(j.backend)} takeover runs no commands`];
      for (const argv of [step.run, ...step.undo]) {
        if (!commandOk(j.backend, argv)) problems.push(`it runs ${shown(argv.join(' '))}, not a command dotstub's ${j.backend} plan writes`);
      }
      if (step.undo.length > 4) problems.push(`its undo has ${step.undo.length} commands (at most 4)`);
      return problems;
    }
    default:
      return [`a step of kind ${shown((step as { kind: unknown }).kind)}`];
  }
}

/** Every reason the journal is not one dotstub writes; empty when root may act on it. */
export function journalProblems(j: JournalData, host: SystemHost): string[] {
  const problems: string[] = [];
  if (!BACKENDS.includes(j.backend as BackendName)) problems.push(`its backend ${shown(j.backend)} is none of ${BACKENDS.join(', ')}`);
  if (!Number.isInteger(j.port) || j.port < 1 || j.port > 65535) problems.push(`its port ${shown(j.port)} is not a port`);
  if (!Number.isInteger(j.pid) || j.pid < 1 || j.pid > PID_MAX) problems.push(`its owner ${shown(j.pid)} is not a process id (a 0 or negative one would name a process group)`);
  // Only compared and quoted: any short printable text will do (a lab writes "previous-boot").
  if (j.bootId.length > 64 || CONTROL.test(j.bootId)) problems.push(`its boot id ${shown(j.bootId)} is not a boot id`);
  if (j.startedAt.length > 40 || Number.isNaN(Date.parse(j.startedAt))) problems.push(`its start time ${shown(j.startedAt)} is not a time`);
  if (j.original.length > 64) problems.push(`it records ${j.original.length} lines of original settings (at most 64)`);
  j.original.slice(0, 64).forEach((l, i) => words(l, `original settings line ${i + 1}`, problems));
  if (j.steps.length > MAX_STEPS) return [...problems, `it has ${j.steps.length} steps (at most ${MAX_STEPS})`];
  const seen = new Set<string>();
  j.steps.forEach((e, i) => {
    for (const p of stepProblems(host, j, e.step, seen)) problems.push(`step ${i + 1}: ${p}`);
  });
  return problems;
}

/**
 * The journal, when root may act on it; else throws SYSDNS_JOURNAL_REFUSED
 * saying what was refused and why. `source`: where it came from (the file),
 * for the words.
 */
export function trustJournal<J extends JournalData>(j: J, host: SystemHost, source: string): J {
  const problems = journalProblems(j, host);
  if (problems.length === 0) return j;
  const listed = problems.slice(0, 5).join('; ') + (problems.length > 5 ? `; and ${problems.length - 5} more` : '');
  throw new SystemDnsError(
    'SYSDNS_JOURNAL_REFUSED',
    `refused the journal ${source}: ${listed}. dotstub never writes such a journal, so nothing in it was written or run, and it is left as it is: look at it, put your DNS settings back by hand if they need it, then remove it`,
  );
}
