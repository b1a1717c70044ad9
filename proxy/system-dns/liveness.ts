/**
 * The liveness watchdog (SYSTEM-DNS.md, "While enabled"): a separate process
 * that, while the takeover holds, asks dotstub on loopback every half second
 * for a name it answers itself (under resolver.arpa, never forwarded, so a
 * slow or blocked resolver doesn't look like a dead stub). If no answer came
 * for more than `graceMs` (3 s), or the journal's owner is gone, it gives the
 * system its old DNS back and says why. A hung dotstub (SIGSTOP, a busy
 * loop, a deadlock) leaves the machine with DNS all the same: Tailscale
 * #11558 (a panicked daemon left resolv.conf pointing at nothing).
 *
 * It ends by itself when the journal goes (disabled or restored elsewhere).
 */
import crypto from 'node:crypto';
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import { dnsPacket as packet } from '../dns/dns-packet.js';
import { Journal, readBootId, staleReason } from './journal.js';
import { restore, type TakeoverContext } from './takeover.js';

/** What the watchdog leaves in the state dir when it restored, for the proxy to tell the user. */
export const LIVENESS_NOTE_FILE = 'system-dns.liveness.json';
const NOTE_FILE = LIVENESS_NOTE_FILE;

export interface LivenessNote {
  readonly at: string;
  readonly why: string;
}

export interface LivenessOptions {
  readonly ctx: TakeoverContext;
  /** Where dotstub answers on loopback. */
  readonly probePort: number;
  readonly probeHost?: string;
  /** No answer for longer than this: restore (default 3000). */
  readonly graceMs?: number;
  /** Between probes (default 500). */
  readonly intervalMs?: number;
}

export interface LivenessResult {
  readonly restored: boolean;
  readonly why: string;
}

/** Asks once; resolves true on any answer with our ID within `timeoutMs`. */
export function probe(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const id = crypto.randomInt(0, 0x10000);
    const sock = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
    let settled = false;
    const done = (ok: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.close();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    // Connected: nothing listening comes back at once as ECONNREFUSED (an ICMP error) instead of a timeout.
    sock.on('error', () => done(false));
    sock.on('message', (msg) => {
      if (msg.length >= 2 && msg.readUInt16BE(0) === id) done(true);
    });
    const query = packet.encode({ id, type: 'query', flags: packet.RECURSION_DESIRED, questions: [{ name: 'liveness.dotstub.resolver.arpa', type: 'A', class: 'IN' }] });
    sock.connect(port, host, () => {
      sock.send(query, (err) => {
        if (err) done(false);
      });
    });
  });
}

/**
 * Waits until dotstub answers on `host:port` (a real DNS query, as every
 * program's lookups will be), asking every 50 ms for at most `ms`. False
 * when it never answered, or `alive()` said the process went away.
 */
export async function waitAnswering(host: string, port: number, ms: number, alive: () => boolean = () => true): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive()) return false;
    const started = Date.now();
    if (await probe(host, port, Math.max(50, Math.min(500, end - Date.now())))) return true;
    const rest = 50 - (Date.now() - started);
    if (rest > 0) await new Promise((r) => setTimeout(r, rest));
  }
  return false;
}

export function readLivenessNote(stateDir: string): LivenessNote | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(stateDir, NOTE_FILE), 'utf8')) as LivenessNote;
  } catch {
    return null;
  }
}

export function clearLivenessNote(stateDir: string): void {
  fs.rmSync(path.join(stateDir, NOTE_FILE), { force: true });
}

/** Watches until the journal goes (returns restored: false) or the stub dies (restores, returns why). */
export async function watchLiveness(o: LivenessOptions): Promise<LivenessResult> {
  const host = o.probeHost ?? '127.0.0.1';
  const grace = o.graceMs ?? 3000;
  const interval = o.intervalMs ?? 500;
  const journal = new Journal(o.ctx.stateDir);
  let lastAnswer = Date.now();
  for (;;) {
    const j = journal.read();
    if (j === null) return { restored: false, why: 'private DNS was disabled: nothing to watch' };
    const stale = staleReason(j, readBootId(o.ctx.bootIdFile));
    let why: string | null = stale === null ? null : `the takeover has no owner (${stale})`;
    if (why === null) {
      const started = Date.now();
      if (await probe(host, o.probePort, Math.min(1000, grace))) lastAnswer = Date.now();
      else if (Date.now() - lastAnswer > grace) {
        why = `dotstub stopped answering on ${host}:${o.probePort} for more than ${(grace / 1000).toFixed(0)} s`;
      }
      const rest = interval - (Date.now() - started);
      if (why === null && rest > 0) await new Promise((r) => setTimeout(r, rest));
    }
    if (why !== null) {
      // Re-read: a disable that raced with us has already done the work.
      if (journal.read() === null) return { restored: false, why: 'private DNS was disabled: nothing to watch' };
      o.ctx.log?.(`${why}: giving the old DNS back`);
      // The note first: whoever sees the journal gone must also find why.
      const note: LivenessNote = { at: new Date().toISOString(), why };
      fs.writeFileSync(path.join(o.ctx.stateDir, NOTE_FILE), JSON.stringify(note) + '\n', { mode: 0o600 });
      // Only the takeover watched: under the lock, a new one (taken meanwhile) is left alone.
      await restore(o.ctx, { only: j });
      return { restored: true, why };
    }
  }
}

export interface WatchdogSpawn {
  readonly stateDir: string;
  readonly root: string;
  readonly probePort: number;
  readonly graceMs?: number;
  readonly checkName?: string;
}

/**
 * Starts `dotstub system-dns watchdog` as its own process (detached: it must
 * outlive a hung or killed dotstub), with the same dotstub this process runs
 * ($DOTSTUB_CLI when set, as in the package scripts). Returns its pid.
 */
export function spawnWatchdog(w: WatchdogSpawn): number {
  const cli = process.env.DOTSTUB_CLI;
  const script = process.argv[1];
  const argv = cli ? [cli] : script !== undefined && fs.existsSync(script) ? [process.execPath, ...process.execArgv, script] : null;
  if (argv === null) throw new Error('cannot tell how to run dotstub again for the watchdog: set DOTSTUB_CLI');
  const args = ['system-dns', 'watchdog', '--state-dir', w.stateDir, '--root', w.root, '--probe-port', String(w.probePort), '--grace-ms', String(w.graceMs ?? 3000), '--check-name', w.checkName ?? ''];
  const child = spawn(argv[0] as string, [...argv.slice(1), ...args], { detached: true, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } });
  child.unref();
  return child.pid ?? 0;
}
