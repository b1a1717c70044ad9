/**
 * The query log: a ring buffer of the last N QueryRecords with filters,
 * paging (newest first) and export (CSV, JSON).
 *
 * Data structure: a fixed array used circularly. `#next` is where the next
 * record goes; the newest is at `#next - 1`, the oldest at `#next - size`
 * (mod capacity). Appends are O(1) and never allocate once full; queries
 * scan newest → oldest, O(size), which at the 100k cap is a few ms.
 */
import type { QueryRecord, RouteMark } from '../engine/query-record.js';

export interface QueryFilter {
  /** Case-insensitive substring of the name; records without a name never match. */
  readonly name?: string | undefined;
  readonly type?: string | undefined;
  readonly rcode?: string | undefined;
  readonly resolver?: string | undefined;
  readonly minLatencyMs?: number | undefined;
  /** Where the name router sent it: 'link' (a network's own resolver, unencrypted), 'answered' or 'refused' here, 'local' (any of them). */
  readonly route?: RouteFilter | undefined;
}

export const ROUTE_FILTERS = ['link', 'answered', 'refused', 'local'] as const;
export type RouteFilter = (typeof ROUTE_FILTERS)[number];

export interface QueryLogPage {
  readonly total: number;
  readonly offset: number;
  readonly records: readonly QueryRecord[];
}

export class QueryLog {
  #buf: (QueryRecord | undefined)[];
  #next = 0;
  #size = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`query log capacity must be a positive integer, got ${capacity}`);
    this.#buf = new Array<QueryRecord | undefined>(capacity);
  }

  get capacity(): number {
    return this.#buf.length;
  }

  get size(): number {
    return this.#size;
  }

  push(record: QueryRecord): void {
    this.#buf[this.#next] = record;
    this.#next = (this.#next + 1) % this.#buf.length;
    if (this.#size < this.#buf.length) this.#size++;
  }

  /** Newest first. */
  *newest(): Generator<QueryRecord> {
    const cap = this.#buf.length;
    for (let i = 1; i <= this.#size; i++) {
      const r = this.#buf[(this.#next - i + cap) % cap];
      if (r) yield r;
    }
  }

  /** Changes the capacity, keeping the newest records that fit. */
  resize(capacity: number): void {
    if (capacity === this.#buf.length) return;
    const keep = [...this.newest()].slice(0, capacity).reverse();
    this.#buf = new Array<QueryRecord | undefined>(capacity);
    this.#next = 0;
    this.#size = 0;
    for (const r of keep) this.push(r);
  }

  /** Drops the names of every stored record (the user turned name recording off). */
  forgetNames(): void {
    for (let i = 0; i < this.#buf.length; i++) {
      const r = this.#buf[i];
      if (r && r.name !== null) this.#buf[i] = { ...r, name: null };
    }
  }

  clear(): void {
    this.#buf = new Array<QueryRecord | undefined>(this.#buf.length);
    this.#next = 0;
    this.#size = 0;
  }

  *filter(f: QueryFilter): Generator<QueryRecord> {
    const name = f.name ? f.name.toLowerCase() : undefined;
    const type = f.type ? f.type.toUpperCase() : undefined;
    const rcode = f.rcode ? f.rcode.toUpperCase() : undefined;
    const minUs = f.minLatencyMs !== undefined ? f.minLatencyMs * 1000 : undefined;
    for (const r of this.newest()) {
      if (name !== undefined && (r.name === null || !r.name.toLowerCase().includes(name))) continue;
      if (type !== undefined && r.type.toUpperCase() !== type) continue;
      if (rcode !== undefined && r.rcode.toUpperCase() !== rcode) continue;
      if (f.resolver !== undefined && f.resolver !== '' && r.resolverId !== f.resolver) continue;
      if (minUs !== undefined && r.latencyUs < minUs) continue;
      if (f.route !== undefined && (r.route === undefined || (f.route !== 'local' && r.route.kind !== f.route))) continue;
      yield r;
    }
  }

  page(f: QueryFilter, offset: number, limit: number): QueryLogPage {
    const records: QueryRecord[] = [];
    let total = 0;
    for (const r of this.filter(f)) {
      if (total >= offset && records.length < limit) records.push(r);
      total++;
    }
    return { total, offset, records };
  }
}

const CSV_COLUMNS = [
  'seq',
  'startedAt',
  'name',
  'type',
  'transport',
  'rcode',
  'resolverId',
  'connectionId',
  'reused',
  'handshake',
  'latencyUs',
  'queueUs',
  'upstreamUs',
  'depth',
  'source',
  'attempts',
  'truncated',
  'error',
] as const satisfies readonly (keyof QueryRecord)[];

/**
 * One CSV cell (RFC 4180 quoting). Names come from any program on the
 * machine, so a cell that a spreadsheet would run as a formula (= + - @, tab,
 * CR) is prefixed with `'` (OWASP CSV injection advice).
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let s = typeof value === 'number' ? (Number.isInteger(value) ? String(value) : value.toFixed(1)) : String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Where the name router sent a query (QueryRecord.route), as columns: empty for the chosen encrypted resolver. */
const ROUTE_COLUMNS = ['route', 'routeLink', 'routeServers', 'routeSuffix', 'routeSource', 'routeWhy'] as const;

function routeCells(route: RouteMark | undefined): unknown[] {
  if (route === undefined) return ['', '', '', '', '', ''];
  if (route.kind === 'link') return [route.kind, route.link, route.servers, route.suffix, route.source, ''];
  return [route.kind, '', '', '', '', route.why];
}

export function csvHeader(): string {
  return [...CSV_COLUMNS, ...ROUTE_COLUMNS].join(',') + '\r\n';
}

export function csvRow(r: QueryRecord): string {
  const cells = CSV_COLUMNS.map((c) => (c === 'startedAt' ? new Date(r.startedAt).toISOString() : csvCell(r[c])));
  return [...cells, ...routeCells(r.route).map(csvCell)].join(',') + '\r\n';
}
