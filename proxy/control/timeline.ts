/**
 * The events timeline (connections, state changes, switches, settings,
 * captive portals): the last `size` events, kept across restarts in one
 * small JSON file in the config dir, so "what happened" is still there after
 * a crash or a reboot (issue 29: a crash that ended private DNS left
 * "No events yet").
 *
 *   { "version": 1, "events": [ <TimelineEvent>, … ] }   oldest first
 *
 * Invariants:
 * - Written with the project's one atomic write (temp, fsync, rename). An
 *   event a crash right after must not lose (a privacy change, a takeover, a
 *   switch, a setting, a portal: every kind but connections) is written at
 *   once, whenever it comes: turned on, then killed half a second later, the
 *   next start still says it was turned on. Connection opens and closes come
 *   in bursts: written at once after a quiet `flushMs`, then at most once
 *   per `flushMs` while they keep coming, and at close(). A crash loses at
 *   most the connection events of its last second.
 * - A file that can't be read or isn't a timeline starts an empty one; it
 *   never stops the proxy. Entries that aren't events are dropped on load.
 */
import fs from 'node:fs';
import { writeFileAtomicSync } from '../files/config-file.js';
import type { TimelineEvent } from './api-types.js';

const KINDS: ReadonlySet<string> = new Set(['connection', 'state', 'resolver', 'settings', 'captive']);

/** An entry read back from the file: an object of a known kind, with its payload (or its own time) where the kind has one. */
function isEvent(v: unknown): v is TimelineEvent {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  if (typeof o.kind !== 'string' || !KINDS.has(o.kind)) return false;
  if (o.kind === 'resolver' || o.kind === 'settings') return typeof o.at === 'number';
  const e = o.event as Record<string, unknown> | null | undefined;
  return typeof e === 'object' && e !== null && typeof e.at === 'number';
}

export class Timeline {
  readonly #file: string | null;
  readonly #size: number;
  readonly #flushMs: number;
  #events: TimelineEvent[];
  #timer: NodeJS.Timeout | undefined;
  #dirty = false;
  #lastWrite = 0;

  /** `file`: where the timeline is kept (null: this run keeps it in memory only). */
  constructor(file: string | null, size: number, flushMs = 1000) {
    this.#file = file;
    this.#size = size;
    this.#flushMs = flushMs;
    this.#events = file ? load(file).slice(-size) : [];
  }

  push(e: TimelineEvent): void {
    this.#events.push(e);
    if (this.#events.length > this.#size) this.#events.splice(0, this.#events.length - this.#size);
    if (!this.#file) return;
    this.#dirty = true;
    const wait = this.#lastWrite + this.#flushMs - Date.now();
    if (wait <= 0 || e.kind !== 'connection') {
      this.#write();
    } else if (!this.#timer) {
      this.#timer = setTimeout(() => this.#write(), wait);
      this.#timer.unref();
    }
  }

  /** Every event kept, oldest first (a copy). */
  all(): TimelineEvent[] {
    return [...this.#events];
  }

  /** Writes the file now if anything is waiting to be written. */
  flush(): void {
    if (this.#dirty) this.#write();
  }

  #write(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#dirty = false;
    if (!this.#file) return;
    this.#lastWrite = Date.now();
    try {
      writeFileAtomicSync(this.#file, JSON.stringify({ version: 1, events: this.#events }) + '\n');
    } catch {
      // A full disk or a read-only config dir: the timeline still works in memory; the next event tries again.
    }
  }
}

function load(file: string): TimelineEvent[] {
  try {
    const j = JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: unknown; events?: unknown };
    return j.version === 1 && Array.isArray(j.events) ? j.events.filter(isEvent) : [];
  } catch {
    return [];
  }
}
