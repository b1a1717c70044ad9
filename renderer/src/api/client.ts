/**
 * The control API over same-origin fetch. Every call carries
 * `Authorization: Bearer <token>` (lib/session.ts says where the token comes
 * from); the browser holds no cookie for it. State changes carry our Origin,
 * which same-origin fetch sends by itself.
 */
import type {
  ApiError,
  ConnectionView,
  CustomResolverBody,
  LocalNamesView,
  MetricsView,
  QueryPage,
  ResolverView,
  ResolversView,
  ResolverTestResult,
  RetryView,
  Settings,
  StatusView,
  SwitchProbeView,
  SystemDnsView,
  TimelineEvent,
  ValidationView,
} from '../../../proxy/control/api-types.js';
import { bearer } from '../lib/session.js';
import { errorWordsOf, type ControlErrorCode, type FieldCode } from '../../../proxy/error-codes.js';
import type { ImportResult, NetworksView, RememberedNetworkView, SettingsExport } from '../../../proxy/control/api-types.js';

/**
 * An API call that failed. `code` is from the product's vocabulary
 * (proxy/error-codes.ts): the API's own code, or the client's ('unreachable',
 * 'signed_out', 'http'); `hint` says what to do; a validation failure names
 * its fields (`fields`: sentences, `fieldCodes`: FieldCode).
 */
export class ApiRequestError extends Error {
  readonly status: number;
  readonly code: ControlErrorCode;
  readonly hint: string;
  readonly field: string | undefined;
  readonly fields: Readonly<Record<string, string>>;
  readonly fieldCodes: Readonly<Record<string, FieldCode>>;
  constructor(
    status: number,
    code: ControlErrorCode,
    message: string,
    detail: { hint?: string; field?: string; fields?: Readonly<Record<string, string>>; fieldCodes?: Readonly<Record<string, FieldCode>> } = {},
  ) {
    super(message);
    this.name = 'ApiRequestError';
    this.status = status;
    this.code = code;
    this.hint = detail.hint ?? errorWordsOf(code).hint;
    this.field = detail.field;
    this.fields = detail.fields ?? {};
    this.fieldCodes = detail.fieldCodes ?? {};
  }
}

/** What the dashboard says about a failed call: what happened, then what to do. */
export function failureText(err: unknown): string {
  if (!(err instanceof ApiRequestError)) return err instanceof Error ? err.message : String(err);
  return /[.?!]$/.test(err.message) ? `${err.message} ${err.hint}` : `${err.message}. ${err.hint}`;
}

function isApiError(x: unknown): x is ApiError {
  return typeof x === 'object' && x !== null && 'error' in x && typeof (x as ApiError).error?.message === 'string';
}

/** The token for this tab; null until signed in (then every call fails with 401 'signed_out' without a request). */
let token: string | null = null;

export function setToken(value: string | null): void {
  token = value;
}

/** Headers that authenticate a call, or a 401 when there is no token to send. */
export function authHeaders(): Record<string, string> {
  if (token === null) throw new ApiRequestError(401, 'signed_out', 'no token: this page was opened without its sign-in link');
  return { authorization: bearer(token) };
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const auth = authHeaders();
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      // Nothing ambient: the header is the credential.
      credentials: 'omit',
      headers: body === undefined ? { ...auth, accept: 'application/json' } : { ...auth, accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiRequestError(0, 'unreachable', 'The dotstub proxy is not answering.');
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
    if (isApiError(json)) {
      const e = json.error;
      throw new ApiRequestError(res.status, e.code, e.message, { hint: e.hint, field: e.field, fields: e.fields, fieldCodes: e.fieldCodes });
    }
    if (res.status === 401) throw new ApiRequestError(401, 'unauthorized', 'the proxy did not accept the token');
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
  dismissRetiredNotice: () => request<void>('DELETE', '/api/resolvers/retired-notice'),
  probeResolver: (id: string) => request<SwitchProbeView>('POST', '/api/resolvers/probe', { id }),
  testResolvers: () => request<ResolverTestResult>('POST', '/api/resolvers/test'),
  lastResolverTest: () => request<ResolverTestResult | null>('GET', '/api/resolvers/test'),
  retryNow: () => request<RetryView>('POST', '/api/retry'),
  connections: () => request<ConnectionView[]>('GET', '/api/connections'),
  metrics: () => request<MetricsView>('GET', '/api/metrics'),
  // With dotstub's own checks (internal=1): the page hides them itself unless "Show dotstub's own checks" is on.
  queries: (limit: number, offset = 0) => request<QueryPage>('GET', `/api/queries?internal=1&limit=${limit}&offset=${offset}`),
  clearQueries: () => request<void>('DELETE', '/api/queries'),
  recentEvents: () => request<TimelineEvent[]>('GET', '/api/events/recent'),
  settings: () => request<Settings>('GET', '/api/settings'),
  saveSettings: (changes: Partial<Settings>) => request<Settings>('PUT', '/api/settings', changes),
  captive: (action: 'allow' | 'decline' | 'extend' | 'check', remember = false) => request<StatusView>('POST', '/api/captive', { action, remember }),
  systemDns: () => request<SystemDnsView>('GET', '/api/system-dns'),
  setSystemDns: (enabled: boolean) => request<SystemDnsView>('PUT', '/api/system-dns', { enabled }),
  pauseSystemDns: (seconds: number) => request<SystemDnsView>('PUT', '/api/system-dns', { enabled: false, pauseSeconds: seconds }),
  runLeakTest: () => request<SystemDnsView>('POST', '/api/system-dns/leak-test'),
  localNames: () => request<LocalNamesView>('GET', '/api/network/local-names'),
  setLocalNames: (allow: boolean) => request<LocalNamesView>('PUT', '/api/network/local-names', { allow }),
  networks: () => request<NetworksView>('GET', '/api/networks'),
  setNetworkLocalNames: (key: string, localNames: 'allow' | 'deny' | 'ask') => request<RememberedNetworkView>('PUT', `/api/networks/${encodeURIComponent(key)}`, { localNames }),
  forgetNetwork: (key: string) => request<void>('DELETE', `/api/networks/${encodeURIComponent(key)}`),
  exportSettings: () => request<SettingsExport>('GET', '/api/settings/export'),
  importSettings: (file: unknown) => request<ImportResult>('POST', '/api/settings/import', file),
};
