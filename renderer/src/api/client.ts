/**
 * The control API over same-origin fetch. Auth is the HttpOnly session
 * cookie the server set when the dashboard was opened with its one-time
 * link, so there is no token here; state changes carry our Origin, which
 * same-origin fetch sends by itself.
 */
import type {
  ApiError,
  ConnectionView,
  CustomResolverBody,
  MetricsView,
  QueryPage,
  ResolverView,
  ResolversView,
  Settings,
  StatusView,
  TimelineEvent,
  ValidationView,
} from '../../../proxy/control/api-types.js';
import { filterToParams, type QueryFilter } from '../lib/filters.js';

/** An API call that failed; `code` is the API's stable error code (or 'network'). */
export class ApiRequestError extends Error {
  readonly status: number;
  readonly code: string;
  readonly fields: Readonly<Record<string, string>>;
  constructor(status: number, code: string, message: string, fields: Readonly<Record<string, string>> = {}) {
    super(message);
    this.name = 'ApiRequestError';
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}

function isApiError(x: unknown): x is ApiError {
  return typeof x === 'object' && x !== null && 'error' in x && typeof (x as ApiError).error?.message === 'string';
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiRequestError(0, 'network', 'The dotstub proxy is not answering. Is it still running?');
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let json: unknown = undefined;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  if (!res.ok) {
    if (isApiError(json)) throw new ApiRequestError(res.status, json.error.code, json.error.message, json.error.fields ?? {});
    if (res.status === 401) throw new ApiRequestError(401, 'unauthorized', 'This browser session is not signed in to dotstub.');
    throw new ApiRequestError(res.status, 'http', `The proxy answered ${res.status} ${res.statusText}`.trim());
  }
  return json as T;
}

export const api = {
  status: () => request<StatusView>('GET', '/api/status'),
  resolvers: () => request<ResolversView>('GET', '/api/resolvers'),
  addResolver: (body: CustomResolverBody) => request<ResolverView>('POST', '/api/resolvers', body),
  validateResolver: (body: CustomResolverBody) => request<ValidationView>('POST', '/api/resolvers/validate', body),
  removeResolver: (id: string) => request<void>('DELETE', `/api/resolvers/${encodeURIComponent(id)}`),
  switchResolver: (id: string) => request<StatusView>('PUT', '/api/resolvers/active', { id }),
  connections: () => request<ConnectionView[]>('GET', '/api/connections'),
  metrics: () => request<MetricsView>('GET', '/api/metrics'),
  queries: (limit: number, offset = 0) => request<QueryPage>('GET', `/api/queries?limit=${limit}&offset=${offset}`),
  recentEvents: () => request<TimelineEvent[]>('GET', '/api/events/recent'),
  settings: () => request<Settings>('GET', '/api/settings'),
  saveSettings: (changes: Partial<Settings>) => request<Settings>('PUT', '/api/settings', changes),
};

/** The download link for the query log with the log's current filters applied. */
export function exportUrl(format: 'csv' | 'json', filter: QueryFilter): string {
  const p = filterToParams(filter);
  p.set('format', format);
  return `/api/queries/export?${p.toString()}`;
}
