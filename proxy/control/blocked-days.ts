/**
 * Answers that read as blocked (QueryRecord.blocked), counted per day for
 * the Overview: how many the resolver refused and said so (an Extended DNS
 * Error, RFC 8914) and how many it answered 0.0.0.0 or ::, for each of the
 * last DAYS_KEPT days (the proxy's local calendar days), since the proxy
 * started. A few numbers per day; nothing is kept of the names.
 */
import type { QueryRecord } from '../engine/query-record.js';
import type { BlockedDay } from './api-types.js';

/** Days kept: a week, today included. */
export const DAYS_KEPT = 7;

/** YYYY-MM-DD of `t` (ms since the epoch) in the proxy's local time. */
export function localDay(t: number): string {
  const d = new Date(t);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

export class BlockedDays {
  /** Oldest first; at most DAYS_KEPT, one per day that had a blocked answer. */
  #days: { day: string; byResolver: number; nullAddress: number }[] = [];

  record(r: Pick<QueryRecord, 'blocked' | 'startedAt' | 'internal'>): void {
    if (r.blocked === undefined || r.internal === true) return;
    const day = localDay(r.startedAt);
    let last = this.#days.at(-1);
    if (last?.day !== day) {
      last = { day, byResolver: 0, nullAddress: 0 };
      this.#days.push(last);
      if (this.#days.length > DAYS_KEPT) this.#days.shift();
    }
    if (r.blocked.kind === 'ede') last.byResolver++;
    else last.nullAddress++;
  }

  /** The days with a blocked answer, newest first, within DAYS_KEPT days of `now`. */
  view(now: number): BlockedDay[] {
    const oldest = localDay(now - (DAYS_KEPT - 1) * 86_400_000);
    return this.#days.filter((d) => d.day >= oldest).map((d) => ({ ...d })).reverse();
  }
}
