/**
 * The API's routes: a handler for each endpoint of the table
 * (api-client/endpoints.ts: method, path, body, request and response types).
 * Handlers get parsed input and return a Reply; the server (server.ts) does
 * transport, auth and limits.
 */
import type { QueryRecord } from '../engine/query-record.js';
import { csvHeader, csvLine, exportFilename, type ResolverLabel } from './api-client/query-export.js';
import { BLOCKED_FILTERS, ROUTE_FILTERS, type BlockedFilter, type QueryFilter, type RouteFilter } from './query-log.js';
import { ApiFailure, validationFailure } from './errors.js';
import { localNamesView, setLocalNames } from './actions/local-names.js';
import { forgetNetwork, networksView, setNetworkChoice } from './actions/networks.js';
import { exportSettings, importSettings } from './actions/settings-transfer.js';
import { API, type Download, type Endpoint, type EndpointName, type EventStream, type Method, type AnswerOf, type RouteName } from './api-client/endpoints.js';
import type { ControlService } from './service.js';

interface JsonReply<T> {
  readonly kind: 'json';
  readonly status: number;
  readonly body: T;
}
interface EmptyReply {
  readonly kind: 'empty';
  readonly status: number;
}
interface StreamReply {
  readonly kind: 'stream';
}
interface DownloadReply {
  readonly kind: 'download';
  readonly filename: string;
  readonly type: string;
  readonly chunks: Iterable<string>;
}

export type Reply = JsonReply<unknown> | EmptyReply | StreamReply | DownloadReply;

/** The reply an endpoint's response type calls for: a file, the event stream, 204, or that type as JSON. */
type ReplyFor<Res> = [Res] extends [Download<unknown>] ? DownloadReply : [Res] extends [EventStream] ? StreamReply : [Res] extends [void] ? EmptyReply : JsonReply<Res>;

interface RouteInput {
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** Parsed JSON body (undefined for GET/DELETE): the handler checks it, whatever the client's type says. */
  readonly body: unknown;
}

export interface Route {
  readonly method: Method;
  /** Path pattern; `:name` segments match one URL-encoded segment. */
  readonly path: string;
  /** Reads a JSON body. */
  readonly body: boolean;
  readonly handler: (input: RouteInput) => Reply | Promise<Reply>;
}

/** One handler per endpoint the routes serve: a missing one, or one the table doesn't have, fails the typecheck. */
type Handlers = {
  readonly [K in RouteName]: (input: RouteInput) => ReplyFor<AnswerOf<(typeof API)[K]>> | Promise<ReplyFor<AnswerOf<(typeof API)[K]>>>;
};

/** The table's endpoints, in its order, each with its handler. */
function bind(handlers: Handlers): Route[] {
  return (Object.keys(API) as EndpointName[]).flatMap((name): Route[] => {
    const endpoint: Endpoint = API[name];
    if (endpoint.socketOnly) return [];
    return [{ method: endpoint.method, path: endpoint.path, body: endpoint.body, handler: handlers[name as RouteName] }];
  });
}

const json = <T>(body: T, status = 200): JsonReply<T> => ({ kind: 'json', status, body });
const empty = (): EmptyReply => ({ kind: 'empty', status: 204 });

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
  // Answers that read as blocked: by an EDE the resolver sent ('resolver'), by a 0.0.0.0 or :: answer ('null-address'), either ('any', or 1).
  let blocked = text('blocked');
  if (blocked === '1' || blocked === 'true') blocked = 'any';
  if (blocked !== undefined && !(BLOCKED_FILTERS as readonly string[]).includes(blocked)) fields.blocked = `blocked must be one of ${BLOCKED_FILTERS.join(', ')}`;
  const filter: QueryFilter = {
    name: text('name'),
    type: text('type'),
    rcode: text('rcode'),
    resolver: text('resolver'),
    minLatencyMs,
    route: route as RouteFilter | undefined,
    includeOwn,
    blocked: blocked as BlockedFilter | undefined,
  };
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

/** The dashboard's download has the same columns (api-client/query-export.ts). */
function* csvExport(records: Iterable<QueryRecord>, label: ResolverLabel): Generator<string> {
  yield csvHeader();
  for (const r of records) yield csvLine(r, label);
}

export function routes(service: ControlService): Route[] {
  return bind({
    status: () => json(service.status()),
    resolvers: () => json(service.resolvers()),
    addResolver: async ({ body }) => json(await service.resolverActions.add(body), 201),
    testResolvers: async () => json(await service.resolverActions.test()),
    lastResolverTest: () => json(service.resolverActions.lastTest()),
    probeResolver: async ({ body }) => json(await service.resolverActions.probe(body)),
    validateResolver: ({ body }) => json(service.resolverActions.validate(body)),
    switchResolver: async ({ body }) => json(await service.resolverActions.switch(body)),
    dismissRetiredNotice: async () => {
      await service.dismissRetiredNotice();
      return empty();
    },
    removeResolver: async ({ params }) => {
      await service.resolverActions.remove(params.id as string);
      return empty();
    },
    retryNow: () => json(service.retryNow()),
    connections: () => json(service.connections()),
    metrics: () => json(service.metricsView()),
    queries: ({ query }) => {
      const { filter, offset, limit } = parseQueryFilter(query);
      return json(service.queries(filter, offset, limit));
    },
    clearQueries: () => {
      service.clearLog();
      return empty();
    },
    exportQueries: ({ query }) => {
      const format = query.get('format') ?? 'json';
      if (format !== 'csv' && format !== 'json') throw validationFailure({ format: 'format must be csv or json' });
      const { filter } = parseQueryFilter(query);
      const records = service.log.filter(filter);
      const filename = exportFilename(format, Date.now());
      if (format === 'json') return { kind: 'download', filename, type: 'application/json; charset=utf-8', chunks: jsonExport(records) };
      const known = service.resolvers().resolvers;
      const label = (id: string): string => known.find((r) => r.id === id)?.label ?? id;
      return { kind: 'download', filename, type: 'text/csv; charset=utf-8', chunks: csvExport(records, label) };
    },
    recentEvents: () => json(service.recentEvents()),
    signIn: () => json(service.signIn()),
    captive: ({ body }) => json(service.captiveAction(body)),
    settings: () => json(service.settings()),
    updateSettings: async ({ body }) => json(await service.settingsActions.update(body)),
    exportSettings: () => {
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      return { kind: 'download', filename: `dotstub-settings-${stamp}.json`, type: 'application/json; charset=utf-8', chunks: [JSON.stringify(exportSettings(service), null, 2) + '\n'] };
    },
    importSettings: async ({ body }) => json(await importSettings(service, body)),
    localNames: () => json(localNamesView(service.proxy)),
    setLocalNames: ({ body }) => json(setLocalNames(service.proxy, body)),
    networks: () => json(networksView(service.proxy)),
    setNetworkChoice: ({ params, body }) => json(setNetworkChoice(service.proxy, params.key as string, body)),
    forgetNetwork: ({ params }) => {
      forgetNetwork(service.proxy, params.key as string);
      return empty();
    },
    systemDns: async () => json(await service.systemDnsActions.view()),
    setSystemDns: async ({ body }) => json(await service.systemDnsActions.set(body)),
    leakTest: async () => json(await service.systemDnsActions.leakTest()),
    stream: () => ({ kind: 'stream' }),
  });
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
