/**
 * The query log's export, made from exactly the rows the screen counts
 * (issue 14, item 6): the same filter, the same pause point, the same
 * records the page holds, newest first, with resolver names. (The proxy's
 * own /api/queries/export reads the proxy's log, which may hold fewer
 * records than the page and keeps ids, for scripts.)
 */
import type { QueryRecord, ResolverView } from '../../../proxy/control/api-types.js';
import type { FilteredIndex } from './filters.js';
import { resolverLabel } from './query-row.js';
import type { RingBuffer } from './ring.js';

/** The records counted on screen: match numbers start…end-1 of the index, newest first. */
export function* shownRecords(index: Pick<FilteredIndex, 'start' | 'absoluteAt'>, end: number, ring: Pick<RingBuffer<QueryRecord>, 'atAbsolute'>): Generator<QueryRecord> {
  for (let k = end - 1; k >= index.start; k--) {
    const a = index.absoluteAt(k);
    const r = a === undefined ? undefined : ring.atAbsolute(a);
    if (r) yield r;
  }
}

export const EXPORT_COLUMNS = [
  'time',
  'name',
  'type',
  'rcode',
  'latencyMs',
  'resolver',
  'connection',
  'reused',
  'handshake',
  'transport',
  'source',
  'attempts',
  'truncated',
  'queueMs',
  'upstreamMs',
  'depth',
  'error',
  'resolverId',
  'seq',
  'route',
  'routeDetail',
] as const;

type ExportRow = Record<(typeof EXPORT_COLUMNS)[number], string | number | boolean | null>;

const ms = (us: number): number => Math.round(us) / 1000;

function exportRow(r: QueryRecord, resolvers: readonly Pick<ResolverView, 'id' | 'label'>[] | undefined): ExportRow {
  return {
    time: new Date(r.startedAt).toISOString(),
    name: r.name,
    type: r.type,
    rcode: r.rcode,
    latencyMs: ms(r.latencyUs),
    resolver: r.resolverId === null ? null : resolverLabel(resolvers, r.resolverId),
    connection: r.connectionId,
    reused: r.reused,
    handshake: r.handshake,
    transport: r.transport,
    source: r.source,
    attempts: r.attempts,
    truncated: r.truncated,
    queueMs: ms(r.queueUs),
    upstreamMs: ms(r.upstreamUs),
    depth: r.depth,
    error: r.error,
    resolverId: r.resolverId,
    seq: r.seq,
    // Where the name router sent it: link (a network's own resolver, unencrypted), answered or refused here; empty: the chosen resolver.
    route: r.route?.kind ?? null,
    routeDetail: r.route === undefined ? null : r.route.kind === 'link' ? `${r.route.link} ${r.route.servers} (${r.route.suffix}, from ${r.route.source})` : r.route.why,
  };
}

/**
 * One CSV cell (RFC 4180 quoting). Names come from any program on the
 * machine, so text a spreadsheet would run as a formula (= + - @, tab, CR
 * first) gets a leading `'` (OWASP CSV injection advice).
 */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  let s = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The CSV file: a header line, then one line per record, CRLF line ends. */
export function toCsv(records: Iterable<QueryRecord>, resolvers: readonly Pick<ResolverView, 'id' | 'label'>[] | undefined): string {
  const lines = [EXPORT_COLUMNS.join(',')];
  for (const r of records) {
    const row = exportRow(r, resolvers);
    lines.push(EXPORT_COLUMNS.map((c) => csvCell(row[c])).join(','));
  }
  return lines.join('\r\n') + '\r\n';
}

/** The JSON file: an array of rows, one per line. */
export function toJson(records: Iterable<QueryRecord>, resolvers: readonly Pick<ResolverView, 'id' | 'label'>[] | undefined): string {
  const rows: string[] = [];
  for (const r of records) rows.push(JSON.stringify(exportRow(r, resolvers)));
  return rows.length === 0 ? '[]\n' : `[\n${rows.join(',\n')}\n]\n`;
}

/** "dotstub-queries-2026-11-22T06-40-00-000Z.csv" */
export function exportFilename(format: 'csv' | 'json', at: number): string {
  return `dotstub-queries-${new Date(at).toISOString().replace(/[:.]/g, '-')}.${format}`;
}
