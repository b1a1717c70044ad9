/**
 * How dotstub's runs ended, kept in the config dir so the next start can say
 * what happened and notice a crash loop (issue 41; DESIGN.md: "a crash loop
 * is noticed and said, never repeated silently").
 *
 *   stops.json    { "version": 1, "stops": [ { "at", "how", "reason", "signature" }, … ], "saidUpTo": "…" }
 *                 oldest first, the last 10; saidUpTo: the last stop a start has told
 *   running.json  { "pid", "since" }   while a run lasts; removed by a stop that was announced
 *
 * Two ways a run ends without its clean stop:
 *   - 'error': an exception nothing caught (cli.ts's fail-safe stop records it
 *     here, synchronously, before it does anything else);
 *   - 'unannounced': the run left running.json behind and its process is gone
 *     (SIGKILL, the OOM killer, a native crash, a power cut): found by the
 *     next start.
 * A stop asked for (SIGTERM, Ctrl-C, the supervisor gone) is not recorded: it
 * is no crash.
 *
 * A crash loop: this start comes after at least two stops of the same kind
 * (the same signature: the error's code and where it was thrown) within the
 * last minute. The start then holds back the takeover of the machine's DNS
 * for a while that doubles with each further stop, so a machine whose
 * dotstub dies at every start keeps its usual DNS instead of losing it every
 * few seconds.
 *
 * Never throws: a config dir that can't be read or written loses only this
 * record (the proxy's work does not depend on it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomicSync } from '../files/config-file.js';

export interface StopRecord {
  /** ISO time. */
  readonly at: string;
  readonly how: 'error' | 'unannounced';
  /** In words, for the user: "TypeError: x is not a function (at ask-udp.ts:92)". */
  readonly reason: string;
  /** What makes two stops "the same way": the error's name or code and the first frame of our code. */
  readonly signature: string;
}

export interface CrashLoop {
  /** Stops in the window, this kind. */
  readonly count: number;
  readonly reason: string;
  /** Epoch ms: the takeover waits until then. */
  readonly holdUntil: number;
}

const KEEP = 10;
const WINDOW_MS = 60_000;
const FIRST_HOLD_MS = 60_000;
const MAX_HOLD_MS = 15 * 60_000;

const isRecord = (v: unknown): v is StopRecord => {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.at === 'string' && (o.how === 'error' || o.how === 'unannounced') && typeof o.reason === 'string' && typeof o.signature === 'string';
};

/** The error in words and its signature: the message's first line, the code, and the first frame in dotstub's own code. */
export function describeError(err: unknown): { readonly reason: string; readonly signature: string } {
  // A thrown non-Error (a string, a rejected promise's value) has no stack of its own: nothing to say where.
  const e = err instanceof Error ? err : Object.assign(new Error(String(err)), { stack: '' });
  const code = (e as NodeJS.ErrnoException).code;
  const frame = (e.stack ?? '')
    .split('\n')
    .slice(1)
    .map((l) => l.trim())
    .find((l) => l.startsWith('at ') && !l.includes('node:') && !l.includes('node_modules'));
  const where = frame ? /([^/\\( ]+\.(?:ts|js|mjs)):\d+/.exec(frame)?.[0] : undefined;
  const head = `${e.name}${code ? ` [${code}]` : ''}: ${(e.message.split('\n')[0] ?? '').slice(0, 160)}`;
  return { reason: where ? `${head} (at ${where})` : head, signature: `${e.name}|${code ?? ''}|${where ?? ''}` };
}

export class StopLog {
  readonly #stopsFile: string;
  readonly #runningFile: string;
  readonly #now: () => number;
  readonly #alive: (pid: number) => boolean;

  constructor(configDir: string, o: { readonly now?: () => number; readonly alive?: (pid: number) => boolean } = {}) {
    this.#stopsFile = path.join(configDir, 'stops.json');
    this.#runningFile = path.join(configDir, 'running.json');
    this.#now = o.now ?? Date.now;
    this.#alive = o.alive ?? processAlive;
  }

  /** The stops recorded, oldest first. */
  stops(): StopRecord[] {
    return this.#read().stops;
  }

  #read(): { readonly stops: StopRecord[]; readonly saidUpTo?: string } {
    try {
      const o = JSON.parse(fs.readFileSync(this.#stopsFile, 'utf8')) as { stops?: unknown; saidUpTo?: unknown };
      const stops = Array.isArray(o.stops) ? o.stops.filter(isRecord).slice(-KEEP) : [];
      return typeof o.saidUpTo === 'string' ? { stops, saidUpTo: o.saidUpTo } : { stops };
    } catch {
      return { stops: [] };
    }
  }

  /**
   * At start, before anything is taken over: a run that left running.json
   * behind with its process gone is recorded as unannounced. Returns the last
   * stop that was not asked for, if the previous run ended that way (to say at start), and the crash loop, if any.
   */
  begin(): { readonly lastCrash: StopRecord | null; readonly loop: CrashLoop | null } {
    try {
      const r = JSON.parse(fs.readFileSync(this.#runningFile, 'utf8')) as { pid?: unknown; since?: unknown };
      if (typeof r.pid === 'number' && r.pid !== process.pid && !this.#alive(r.pid)) {
        const since = typeof r.since === 'string' ? ` (it had run since ${r.since})` : '';
        this.record({ how: 'unannounced', reason: `it ended without a word: killed, out of memory, or the power went${since}`, signature: 'unannounced' });
      }
    } catch {
      // No run left running.json behind: the last one stopped cleanly, or never ran here.
    }
    const { stops, saidUpTo } = this.#read();
    const last = stops.at(-1);
    // Said once: the stop not yet told at a start.
    const lastCrash = last !== undefined && (saidUpTo === undefined || last.at > saidUpTo) ? last : null;
    if (lastCrash) this.#write(this.#stopsFile, { version: 1, stops, saidUpTo: lastCrash.at });
    return { lastCrash, loop: crashLoop(stops, this.#now()) };
  }

  /** This run is under way (written once the proxy answers). */
  running(): void {
    this.#write(this.#runningFile, { pid: process.pid, since: new Date(this.#now()).toISOString() });
  }

  /** This run stopped as asked: nothing to find at the next start. */
  stoppedCleanly(): void {
    fs.rmSync(this.#runningFile, { force: true });
  }

  /** Records a stop nobody asked for, synchronously (the process may be about to end). */
  record(stop: Omit<StopRecord, 'at'>): StopRecord {
    const rec: StopRecord = { at: new Date(this.#now()).toISOString(), ...stop };
    this.#write(this.#stopsFile, { ...this.#read(), version: 1, stops: [...this.stops(), rec].slice(-KEEP) });
    fs.rmSync(this.#runningFile, { force: true });
    return rec;
  }

  #write(file: string, body: unknown): void {
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      writeFileAtomicSync(file, JSON.stringify(body) + '\n', 0o600);
    } catch {
      // A config dir we can't write: the record is lost, the run is not.
    }
  }
}

/** Two or more stops of the same kind as the last one, within a minute of the last and of now: hold the takeover. */
export function crashLoop(stops: readonly StopRecord[], now: number): CrashLoop | null {
  const last = stops.at(-1);
  if (last === undefined || now - Date.parse(last.at) > WINDOW_MS) return null;
  const same = stops.filter((s) => s.signature === last.signature && now - Date.parse(s.at) <= WINDOW_MS);
  if (same.length < 2) return null;
  const holdMs = Math.min(MAX_HOLD_MS, FIRST_HOLD_MS * 2 ** (same.length - 2));
  return { count: same.length, reason: last.reason, holdUntil: now + holdMs };
}

/** "dotstub stopped 3 times in a minute: …; private DNS is off until 14:05:09 …": what every screen says while the takeover is held. */
export function crashLoopWords(loop: CrashLoop): string {
  const until = new Date(loop.holdUntil).toLocaleTimeString('en-GB');
  return `dotstub stopped ${loop.count} times in a minute (${loop.reason}); private DNS is off until ${until} so this machine keeps its usual DNS, then it turns back on by itself`;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
