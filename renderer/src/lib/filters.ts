/**
 * Query-log filters: one predicate shared by the live view (in memory) and
 * the export (same filters sent to the API), and an incremental filtered
 * index over the ring buffer so 100,000 rows never get re-scanned per frame.
 */
import type { QueryRecord } from '../../../proxy/control/api-types.js';
import type { RingBuffer } from './ring.js';

export interface QueryFilter {
  /** Case-insensitive substring of the name; '' = any. */
  readonly name: string;
  /** 'A', 'AAAA', … or '' = any. */
  readonly type: string;
  /** 'NOERROR', 'NXDOMAIN', … or '' = any. */
  readonly rcode: string;
  readonly slowOnly: boolean;
  /** What counts as slow, ms. */
  readonly slowMs: number;
  /** Show dotstub's own checks (the liveness probe, records tagged `internal`); hidden by default. */
  readonly showOwn: boolean;
  /** Where the name router sent it (QueryRecord.route): '' = any. */
  readonly route?: RouteChoice;
  /** Answers that read as blocked (QueryRecord.blocked): '' = any answer. */
  readonly blocked?: BlockedChoice;
}

/**
 * The query log's "Blocked" choices: the API's blocked filter
 * (proxy/control/query-log.ts BLOCKED_FILTERS), '' for any answer:
 * 'resolver' the resolver said so (an Extended DNS Error), 'null-address'
 * it answered 0.0.0.0 or ::, 'any' either.
 */
export type BlockedChoice = '' | 'any' | 'resolver' | 'null-address';
const BLOCKED_CHOICES: readonly BlockedChoice[] = ['any', 'resolver', 'null-address'];

/** `#/queries?blocked=resolver` (the Overview's link) → 'resolver'; '' when the hash names none. */
export function blockedFromHash(hash: string): BlockedChoice {
  const q = hash.indexOf('?');
  const v = q < 0 ? '' : (new URLSearchParams(hash.slice(q + 1)).get('blocked') ?? '');
  return (BLOCKED_CHOICES as readonly string[]).includes(v) ? (v as BlockedChoice) : '';
}

/** The query log's "Sent to" choices: the API's route filter (proxy/control/query-log.ts ROUTE_FILTERS), '' for any. */
export type RouteChoice = '' | 'link' | 'answered' | 'refused' | 'local';
const ROUTE_CHOICES: readonly RouteChoice[] = ['link', 'answered', 'refused', 'local'];

export const EMPTY_FILTER: QueryFilter = Object.freeze({ name: '', type: '', rcode: '', slowOnly: false, slowMs: 100, showOwn: false, route: '', blocked: '' });

/** `#/queries?route=link` (the banner's link to the local names) → 'link'; '' when the hash names none. */
export function routeFromHash(hash: string): RouteChoice {
  const q = hash.indexOf('?');
  const v = q < 0 ? '' : (new URLSearchParams(hash.slice(q + 1)).get('route') ?? '');
  return (ROUTE_CHOICES as readonly string[]).includes(v) ? (v as RouteChoice) : '';
}

export function isFilterActive(f: QueryFilter): boolean {
  return f.name.trim() !== '' || f.type !== '' || f.rcode !== '' || f.slowOnly || (f.route ?? '') !== '' || (f.blocked ?? '') !== '';
}

/** Compiles a filter into a fast predicate. */
export function compileFilter(f: QueryFilter): (r: QueryRecord) => boolean {
  const needle = f.name.trim().toLowerCase().replace(/\.$/, '');
  const type = f.type.toUpperCase();
  const rcode = f.rcode.toUpperCase();
  const minUs = f.slowOnly ? Math.max(0, f.slowMs) * 1000 : -1;
  const showOwn = f.showOwn;
  const route = f.route ?? '';
  const blocked = f.blocked ?? '';
  if (!needle && !type && !rcode && minUs < 0 && !route && !blocked) return showOwn ? () => true : (r) => r.internal !== true;
  return (r) => {
    if (!showOwn && r.internal === true) return false;
    // As the API's blocked filter (query-log.ts matchesBlocked).
    if (blocked && (r.blocked === undefined || (blocked !== 'any' && (blocked === 'resolver') !== (r.blocked.kind === 'ede')))) return false;
    if (route && (r.route === undefined || (route !== 'local' && r.route.kind !== route))) return false;
    if (type && r.type !== type) return false;
    if (rcode && r.rcode !== rcode) return false;
    if (minUs >= 0 && r.latencyUs < minUs) return false;
    // A record without a name (names not recorded) can't match a name filter.
    if (needle && (r.name === null || !r.name.toLowerCase().includes(needle))) return false;
    return true;
  };
}

/** The API's query-string form of a filter (for /api/queries and /api/queries/export). */
export function filterToParams(f: QueryFilter): URLSearchParams {
  const p = new URLSearchParams();
  const name = f.name.trim();
  if (name) p.set('name', name);
  if (f.type) p.set('type', f.type);
  if (f.rcode) p.set('rcode', f.rcode);
  if (f.slowOnly) p.set('minLatencyMs', String(Math.max(0, f.slowMs)));
  if (f.route) p.set('route', f.route);
  if (f.blocked) p.set('blocked', f.blocked);
  return p;
}

/**
 * Absolute ring indexes of the records that pass a filter, oldest first.
 * `sync()` tests only records pushed since the last call and drops indexes
 * the ring has evicted, so the cost per frame is the batch, not the log.
 *
 * Matches are numbered monotonically (k = 0, 1, 2, … in the order found):
 *   [ dropped by compaction (base) | evicted (head) | live: start … end-1 ]
 */
export class FilteredIndex {
  #predicate: (r: QueryRecord) => boolean;
  #matches: number[] = [];
  /** Match number of #matches[0]. */
  #base = 0;
  /** #matches[#head…] are still in the ring. */
  #head = 0;
  /** Next absolute ring index to test. */
  #scanned = 0;

  constructor(predicate: (r: QueryRecord) => boolean) {
    this.#predicate = predicate;
  }

  /** Resets with a new predicate; the next sync rescans the ring. */
  setPredicate(predicate: (r: QueryRecord) => boolean): void {
    this.#predicate = predicate;
    this.#matches = [];
    this.#base = 0;
    this.#head = 0;
    this.#scanned = 0;
  }

  sync(ring: RingBuffer<QueryRecord>): void {
    const first = ring.first;
    if (this.#scanned < first) this.#scanned = first;
    for (let i = this.#scanned; i < ring.total; i++) {
      const r = ring.atAbsolute(i);
      if (r !== undefined && this.#predicate(r)) this.#matches.push(i);
    }
    this.#scanned = ring.total;
    while (this.#head < this.#matches.length && (this.#matches[this.#head] as number) < first) this.#head++;
    if (this.#head > 4096 && this.#head > this.#matches.length / 2) {
      this.#matches = this.#matches.slice(this.#head);
      this.#base += this.#head;
      this.#head = 0;
    }
  }

  /** Match number of the oldest live match. */
  get start(): number {
    return this.#base + this.#head;
  }

  /** One past the newest match's number. */
  get end(): number {
    return this.#base + this.#matches.length;
  }

  get length(): number {
    return this.end - this.start;
  }

  /** Absolute ring index of match number k, if it is live. */
  absoluteAt(k: number): number | undefined {
    if (k < this.start || k >= this.end) return undefined;
    return this.#matches[k - this.#base];
  }

  /** One past the number of the newest match whose ring index is below `absLimit` (binary search). */
  endBefore(absLimit: number): number {
    let lo = this.#head;
    let hi = this.#matches.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#matches[mid] as number) < absLimit) lo = mid + 1;
      else hi = mid;
    }
    return this.#base + lo;
  }
}
