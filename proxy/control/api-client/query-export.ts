/**
 * The query log as a file: one format, whoever makes it. The dashboard's
 * download (renderer/src/lib/export.ts, the rows the screen counts) and the
 * proxy's /api/queries/export (its own log, for scripts and `curl`) both
 * write their CSV, and the dashboard its JSON, from these columns and this
 * row. Before, each side had its own columns, units and quoting, and
 * neither said that a query had been sent again on a second connection.
 * (The API's JSON stays the records themselves: the API's own type.)
 *
 * Browser-safe: no Node modules (the dashboard bundles it).
 */
import type { QueryRecord } from '../api-types.js';

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
  // Sent again on a second connection after its own went silent (upstream/pool/hedge.ts): that connection, and the silence.
  'hedgeConnection',
  'hedgeAfterMs',
  'truncated',
  // The time before the attempt that answered, when it wasn't the first (a retry, a held query, a hedge's copy); queueMs and upstreamMs are that attempt's.
  'earlierMs',
  'queueMs',
  'upstreamMs',
  'depth',
  'error',
  // Why the answer reads as blocked: ede (the resolver said so with an Extended DNS Error, RFC 8914) or zero-address (0.0.0.0 or ::).
  'blocked',
  // The answer's EDE: the one that blocked, else the first; its INFO-CODE, the code's name and the resolver's EXTRA-TEXT.
  'edeCode',
  'edeName',
  'edeText',
  // Any further EDEs, "3 Stale Answer: text" each, joined by " | ".
  'edeOthers',
  'resolverId',
  'seq',
  // Where the name router sent it when not to the chosen encrypted resolver: link (a network's own resolver, unencrypted), answered or refused here.
  'route',
  'routeLink',
  'routeServers',
  'routeSuffix',
  'routeSource',
  'routeWhy',
  // dotstub's own checks (only in an export that asked for them).
  'internal',
] as const;

export type ExportRow = Record<(typeof EXPORT_COLUMNS)[number], string | number | boolean | null>;

/** A resolver's name for people, from its id (the dashboard and the proxy each know their list). */
export type ResolverLabel = (id: string) => string;

const ms = (us: number): number => Math.round(us) / 1000;

export function exportRow(r: QueryRecord, label: ResolverLabel): ExportRow {
  const route = r.route;
  const b = r.blocked;
  const errors = r.extendedErrors ?? [];
  const main = (b?.kind === 'ede' ? errors.find((e) => e.code === b.code && e.text === b.text) : undefined) ?? errors[0];
  const link = route?.kind === 'link' ? route : undefined;
  return {
    time: new Date(r.startedAt).toISOString(),
    name: r.name,
    type: r.type,
    rcode: r.rcode,
    latencyMs: ms(r.latencyUs),
    resolver: r.resolverId === null ? null : label(r.resolverId),
    connection: r.connectionId,
    reused: r.reused,
    handshake: r.handshake,
    transport: r.transport,
    source: r.source,
    attempts: r.attempts,
    hedgeConnection: r.hedge?.connectionId ?? null,
    hedgeAfterMs: r.hedge?.afterMs ?? null,
    truncated: r.truncated,
    earlierMs: r.earlierUs === undefined ? null : ms(r.earlierUs),
    queueMs: ms(r.queueUs),
    upstreamMs: ms(r.upstreamUs),
    depth: r.depth,
    error: r.error,
    blocked: b?.kind ?? null,
    edeCode: main?.code ?? null,
    edeName: main?.name ?? null,
    edeText: main?.text ?? null,
    edeOthers:
      errors
        .filter((e) => e !== main)
        .map((e) => `${e.code} ${e.name}${e.text ? `: ${e.text}` : ''}`)
        .join(' | ') || null,
    resolverId: r.resolverId,
    seq: r.seq,
    route: route?.kind ?? null,
    routeLink: link?.link ?? null,
    routeServers: link?.servers ?? null,
    routeSuffix: link?.suffix ?? null,
    routeSource: link?.source ?? null,
    routeWhy: route !== undefined && route.kind !== 'link' ? route.why : null,
    internal: r.internal === true,
  };
}

/**
 * One CSV cell (RFC 4180 quoting). Names come from any program on the
 * machine, so text a spreadsheet would run as a formula (= + - @, tab, CR
 * first) gets a leading `'` (OWASP CSV injection advice).
 */
export function csvCell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  let s = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The header line, CRLF-terminated. */
export function csvHeader(): string {
  return EXPORT_COLUMNS.join(',') + '\r\n';
}

/** One record's line, CRLF-terminated. */
export function csvLine(r: QueryRecord, label: ResolverLabel): string {
  const row = exportRow(r, label);
  return EXPORT_COLUMNS.map((c) => csvCell(row[c])).join(',') + '\r\n';
}

/** "dotstub-queries-2026-11-22T06-40-00-000Z.csv" */
export function exportFilename(format: 'csv' | 'json', at: number): string {
  return `dotstub-queries-${new Date(at).toISOString().replace(/[:.]/g, '-')}.${format}`;
}
