/**
 * The API's routes: method + path → handler. Handlers get parsed input and
 * return a Reply; the server (server.ts) does transport, auth and limits.
 */
import type { QueryRecord } from '../engine/query-record.js';
import { csvHeader, csvRow, ROUTE_FILTERS, type QueryFilter, type RouteFilter } from './query-log.js';
import { ApiFailure, validationFailure } from './errors.js';
import { localNamesView, setLocalNames } from './actions/local-names.js';
import { forgetNetwork, networksView, setNetworkLocalNames } from './actions/networks.js';
import { exportSettings, importSettings } from './actions/settings-transfer.js';
import type { ControlService } from './service.js';

export type Reply =
  | { readonly kind: 'json'; readonly status: number; readonly body: unknown }
  | { readonly kind: 'empty'; readonly status: number }
  | { readonly kind: 'stream' }
  | { readonly kind: 'download'; readonly filename: string; readonly type: string; readonly chunks: Iterable<string> };

interface RouteInput {
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** Parsed JSON body (undefined for GET/DELETE). */
  readonly body: unknown;
}

export interface Route {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path pattern; `:name` segments match one URL-encoded segment. */
  readonly path: string;
  /** Reads a JSON body. */
  readonly body?: boolean;
  readonly handler: (input: RouteInput) => Reply | Promise<Reply>;
}

const json = (body: unknown, status = 200): Reply => ({ kind: 'json', status, body });

const MAX_FILTER_TEXT = 253;

/** Reads the query-log filter and paging from the URL; throws a validation failure with per-field messages. */
function parseQueryFilter(q: URLSearchParams): { filter: QueryFilter; offset: number; limit: number } {
  const fields: Record<string, string> = {};
  const text = (k: string): string | undefined => {
    const v = q.get(k);
    if (v === null || v === '') return undefined;
    if (v.length > MAX_FILTER_TEXT) fields[k] = `${k} must be at most ${MAX_FILTER_TEXT} characters`;
    return v;
  };
  const int = (k: string, def: number, min: number, max: number): number => {
    const v = q.get(k);
    if (v === null || v === '') return def;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      fields[k] = `${k} must be a whole number from ${min} to ${max}`;
      return def;
    }
    return Number(v);
  };
  let minLatencyMs: number | undefined;
  const ml = q.get('minLatencyMs');
  if (ml !== null && ml !== '') {
    const n = Number(ml);
    if (!Number.isFinite(n) || n < 0) fields.minLatencyMs = 'minLatencyMs must be a number of milliseconds, 0 or more';
    else minLatencyMs = n;
  }
  const route = text('route');
  if (route !== undefined && !(ROUTE_FILTERS as readonly string[]).includes(route)) fields.route = `route must be one of ${ROUTE_FILTERS.join(', ')}`;
  // dotstub's own checks only when asked (issue 29): `internal=1` (or true) adds them, 0/false or absent leaves them out.
  const own = q.get('internal');
  let includeOwn = false;
  if (own !== null && own !== '') {
    if (own === '1' || own === 'true') includeOwn = true;
    else if (own !== '0' && own !== 'false') fields.internal = 'internal must be 1 (include dotstub’s own checks) or 0';
  }
  const filter: QueryFilter = { name: text('name'), type: text('type'), rcode: text('rcode'), resolver: text('resolver'), minLatencyMs, route: route as RouteFilter | undefined, includeOwn };
  const offset = int('offset', 0, 0, 1_000_000);
  const limit = int('limit', 100, 1, 1000);
  if (Object.keys(fields).length > 0) throw validationFailure(fields);
  return { filter, offset, limit };
}

function* jsonExport(records: Iterable<QueryRecord>): Generator<string> {
  // Streamed as a JSON array, one record per line, without building one big string.
  let first = true;
  yield '[';
  for (const r of records) {
    yield (first ? '\n' : ',\n') + JSON.stringify(r);
    first = false;
  }
  yield '\n]\n';
}

function* csvExport(records: Iterable<QueryRecord>): Generator<string> {
  yield csvHeader();
  for (const r of records) yield csvRow(r);
}

export function routes(service: ControlService): Route[] {
  return [
    { method: 'GET', path: '/api/status', handler: () => json(service.status()) },
    { method: 'GET', path: '/api/resolvers', handler: () => json(service.resolvers()) },
    { method: 'POST', path: '/api/resolvers', body: true, handler: async ({ body }) => json(await service.resolverActions.add(body), 201) },
    { method: 'POST', path: '/api/resolvers/test', handler: async () => json(await service.resolverActions.test()) },
    { method: 'GET', path: '/api/resolvers/test', handler: () => json(service.resolverActions.lastTest()) },
    { method: 'POST', path: '/api/resolvers/probe', body: true, handler: async ({ body }) => json(await service.resolverActions.probe(body)) },
    { method: 'POST', path: '/api/resolvers/validate', body: true, handler: ({ body }) => json(service.resolverActions.validate(body)) },
    { method: 'PUT', path: '/api/resolvers/active', body: true, handler: async ({ body }) => json(await service.resolverActions.switch(body)) },
    {
      method: 'DELETE',
      path: '/api/resolvers/retired-notice',
      handler: async () => {
        await service.dismissRetiredNotice();
        return { kind: 'empty', status: 204 };
      },
    },
    {
      method: 'DELETE',
      path: '/api/resolvers/:id',
      handler: async ({ params }) => {
        await service.resolverActions.remove(params.id as string);
        return { kind: 'empty', status: 204 };
      },
    },
    { method: 'POST', path: '/api/retry', handler: () => json(service.retryNow()) },
    { method: 'GET', path: '/api/connections', handler: () => json(service.connections()) },
    { method: 'GET', path: '/api/metrics', handler: () => json(service.metricsView()) },
    {
      method: 'GET',
      path: '/api/queries',
      handler: ({ query }) => {
        const { filter, offset, limit } = parseQueryFilter(query);
        return json(service.queries(filter, offset, limit));
      },
    },
    {
      method: 'DELETE',
      path: '/api/queries',
      handler: () => {
        service.clearLog();
        return { kind: 'empty', status: 204 };
      },
    },
    {
      method: 'GET',
      path: '/api/queries/export',
      handler: ({ query }) => {
        const format = query.get('format') ?? 'json';
        if (format !== 'csv' && format !== 'json') throw validationFailure({ format: 'format must be csv or json' });
        const { filter } = parseQueryFilter(query);
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        const records = service.log.filter(filter);
        return format === 'csv'
          ? { kind: 'download', filename: `dotstub-queries-${stamp}.csv`, type: 'text/csv; charset=utf-8', chunks: csvExport(records) }
          : { kind: 'download', filename: `dotstub-queries-${stamp}.json`, type: 'application/json; charset=utf-8', chunks: jsonExport(records) };
      },
    },
    { method: 'GET', path: '/api/events/recent', handler: () => json(service.recentEvents()) },
    { method: 'GET', path: '/api/captive/sign-in', handler: () => json(service.signIn()) },
    { method: 'POST', path: '/api/captive', body: true, handler: ({ body }) => json(service.captiveAction(body)) },
    { method: 'GET', path: '/api/settings', handler: () => json(service.settings()) },
    { method: 'PUT', path: '/api/settings', body: true, handler: async ({ body }) => json(await service.settingsActions.update(body)) },
    {
      method: 'GET',
      path: '/api/settings/export',
      handler: () => {
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        return { kind: 'download', filename: `dotstub-settings-${stamp}.json`, type: 'application/json; charset=utf-8', chunks: [JSON.stringify(exportSettings(service), null, 2) + '\n'] };
      },
    },
    { method: 'POST', path: '/api/settings/import', body: true, handler: async ({ body }) => json(await importSettings(service, body)) },
    { method: 'GET', path: '/api/network/local-names', handler: () => json(localNamesView(service.proxy)) },
    { method: 'PUT', path: '/api/network/local-names', body: true, handler: ({ body }) => json(setLocalNames(service.proxy, body)) },
    { method: 'GET', path: '/api/networks', handler: () => json(networksView(service.proxy)) },
    { method: 'PUT', path: '/api/networks/:key', body: true, handler: ({ params, body }) => json(setNetworkLocalNames(service.proxy, params.key as string, body)) },
    {
      method: 'DELETE',
      path: '/api/networks/:key',
      handler: ({ params }) => {
        forgetNetwork(service.proxy, params.key as string);
        return { kind: 'empty', status: 204 };
      },
    },
    { method: 'GET', path: '/api/system-dns', handler: async () => json(await service.systemDnsActions.view()) },
    { method: 'PUT', path: '/api/system-dns', body: true, handler: async ({ body }) => json(await service.systemDnsActions.set(body)) },
    { method: 'POST', path: '/api/system-dns/leak-test', handler: async () => json(await service.systemDnsActions.leakTest()) },
    { method: 'GET', path: '/api/stream', handler: () => ({ kind: 'stream' }) },
  ];
}

/** Finds the route for a path; 404 when no path matches, 405 when only the method is wrong. */
export function matchRoute(table: readonly Route[], method: string, pathname: string): { route: Route; params: Record<string, string> } {
  const segments = pathname.split('/');
  let pathMatched = false;
  for (const route of table) {
    const pattern = route.path.split('/');
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < pattern.length && ok; i++) {
      const p = pattern[i] as string;
      const s = segments[i] as string;
      if (p.startsWith(':')) {
        if (s === '') ok = false;
        else {
          try {
            params[p.slice(1)] = decodeURIComponent(s);
          } catch {
            ok = false;
          }
        }
      } else if (p !== s) ok = false;
    }
    if (!ok) continue;
    // A literal route wins over a parameter route for the same path (e.g. /api/resolvers/active).
    pathMatched = true;
    if (route.method === method) return { route, params };
  }
  if (pathMatched) throw new ApiFailure('method_not_allowed', `${method} is not allowed on ${pathname}`);
  throw new ApiFailure('not_found', `no API endpoint ${pathname}`);
}
