/**
 * The control API's endpoints, written once: method, path, whether it reads
 * a JSON body, and (as types) what a call sends and what it answers. The
 * server binds a handler to each (routes.ts: one missing, or one more than
 * the table has, fails the typecheck), and both clients call through it
 * (app/control/client.ts over node:http, renderer/src/api/client.ts over
 * fetch). The shapes are in ../api-types.ts, with the rules every call
 * shares (auth, Host, Origin, bodies, errors).
 *
 * Order matters where a literal path and a `:param` path meet: the server
 * tries the routes in this order, so DELETE /api/resolvers/retired-notice
 * stands before DELETE /api/resolvers/:id.
 *
 * Data and types only: no Node modules, so the dashboard bundles it.
 */
import type {
  CustomResolverBody,
  DashboardLinkView,
  ImportResult,
  LocalNamesView,
  MetricsView,
  NetworksView,
  QueryPage,
  RememberedNetworkView,
  ResolverTestResult,
  ResolverView,
  ResolversView,
  RetryView,
  Settings,
  SettingsExport,
  SignInView,
  StatusView,
  SwitchProbeView,
  SystemDnsView,
  TimelineEvent,
  ConnectionView,
  ValidationView,
} from '../api-types.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** An answer that is a file to save (Content-Disposition: attachment); T: what the file holds, for a client that reads it. */
export interface Download<T = string> {
  readonly file: T;
}

/** GET /api/stream's answer: text/event-stream, `event: batch` with a StreamBatch (../api-types.ts). */
export interface EventStream {
  readonly eventStream: true;
}

/** No body: 204. */
export type NoContent = void;

export interface Endpoint<Req = unknown, Res = unknown> {
  readonly method: Method;
  /** `:name` segments stand for one URL-encoded segment (endpointPath fills them in). */
  readonly path: string;
  /** The server reads a JSON body (Req); false: it reads none. */
  readonly body: boolean;
  /** Served on the control socket only, by server.ts itself (not a route of the loopback API). */
  readonly socketOnly?: true;
  /** Types only, never set: what a call sends and what it answers. */
  readonly contract?: { readonly request: Req; readonly response: Res };
}

export type RequestOf<E> = E extends Endpoint<infer Req, unknown> ? Req : never;
/** What the endpoint answers, as its type says (a Download, the EventStream, JSON). */
export type AnswerOf<E> = E extends Endpoint<unknown, infer Res> ? Res : never;
/** What a client calling it reads: the JSON answer, or what a downloaded file holds. */
export type ResponseOf<E> = AnswerOf<E> extends Download<infer T> ? T : AnswerOf<E>;

const read = <Res>(path: string): Endpoint<undefined, Res> => ({ method: 'GET', path, body: false });
const send = <Req, Res>(method: Exclude<Method, 'GET'>, path: string): Endpoint<Req, Res> => ({ method, path, body: true });
const act = <Res>(method: Exclude<Method, 'GET'>, path: string): Endpoint<undefined, Res> => ({ method, path, body: false });

export const API = {
  status: read<StatusView>('/api/status'),
  resolvers: read<ResolversView>('/api/resolvers'),
  /** 201 ResolverView | 400 validation. */
  addResolver: send<CustomResolverBody, ResolverView>('POST', '/api/resolvers'),
  /**
   * When done (≤ 20 s): every resolver measured from this network over a
   * fresh and an open connection, DoT and DoH, ranked; the active upstream
   * is not touched.
   */
  testResolvers: act<ResolverTestResult>('POST', '/api/resolvers/test'),
  /** The last test (kept in the config dir across restarts); null before any. */
  lastResolverTest: read<ResolverTestResult | null>('/api/resolvers/test'),
  /** Does it answer now (~1 s)? Asked before a switch. */
  probeResolver: send<{ readonly id: string }, SwitchProbeView>('POST', '/api/resolvers/probe'),
  validateResolver: send<CustomResolverBody, ValidationView>('POST', '/api/resolvers/validate'),
  /**
   * The status after the switch, as soon as new queries go to the new
   * resolver (no query dropped; the old pool drains in the background).
   * 409 resolver_unverifiable when strict mode can't verify it (no auth
   * name, no pin), 404 unknown_resolver for an unknown id.
   */
  switchResolver: send<{ readonly id: string }, StatusView>('PUT', '/api/resolvers/active'),
  /** The notice of a move away from a retired preset is not shown again. */
  dismissRetiredNotice: act<NoContent>('DELETE', '/api/resolvers/retired-notice'),
  /** 404 unknown_resolver | 409 resolver_in_use, resolver_is_preset. */
  removeResolver: act<NoContent>('DELETE', '/api/resolvers/:id'),
  /** Try the resolver now, not after the back-off; the outcome follows as a connection event and a state change. */
  retryNow: act<RetryView>('POST', '/api/retry'),
  connections: read<ConnectionView[]>('/api/connections'),
  metrics: read<MetricsView>('/api/metrics'),
  /**
   * ?name=&type=&rcode=&resolver=&minLatencyMs=&route=&blocked=&internal=&offset=&limit=,
   * newest first. route=link|answered|refused|local: where the name router
   * sent it (records carry `route`); blocked=any|resolver|null-address (1 is
   * any): answers that read as blocked (records carry `blocked`, and the
   * resolver's Extended DNS Errors in `extendedErrors`); dotstub's own
   * checks, kept apart, only with internal=1 (records carry `internal: true`).
   */
  queries: read<QueryPage>('/api/queries'),
  /** The query log is emptied (metrics and counters stay). */
  clearQueries: act<NoContent>('DELETE', '/api/queries'),
  /** ?format=csv|json and the same filters as queries (internal=1 too); CSV's last column: internal. */
  exportQueries: read<Download>('/api/queries/export'),
  /** Connection and state events, newest last. */
  recentEvents: read<TimelineEvent[]>('/api/events/recent'),
  /** The portal page and the sign-in window's proxy | 409 sign_in_not_allowed. */
  signIn: read<SignInView>('/api/captive/sign-in'),
  /** 409 captive_nothing_to_do: not captive, or already so. */
  captive: send<{ readonly action: 'allow' | 'decline' | 'extend' | 'check'; readonly remember?: boolean }, StatusView>('POST', '/api/captive'),
  settings: read<Settings>('/api/settings'),
  /** 400 validation: nothing changed. `recordNames: false` also drops the names already in the log; pools are rebuilt in the background. */
  updateSettings: send<Partial<Settings>, Settings>('PUT', '/api/settings'),
  /** An attachment: the settings and each remembered network's choice. */
  exportSettings: read<Download<SettingsExport>>('/api/settings/export'),
  /** A SettingsExport, checked whole | 400 (nothing changed). */
  importSettings: send<SettingsExport, ImportResult>('POST', '/api/settings/import'),
  localNames: read<LocalNamesView>('/api/network/local-names'),
  setLocalNames: send<{ readonly allow: boolean }, LocalNamesView>('PUT', '/api/network/local-names'),
  networks: read<NetworksView>('/api/networks'),
  /** 400 | 404 unknown_network. */
  setNetworkChoice: send<{ readonly localNames: 'allow' | 'deny' | 'ask' } | { readonly ownResolver: 'use' | 'ask' }, RememberedNetworkView>('PUT', '/api/networks/:key'),
  /** "Forget this network": 404 unknown_network. */
  forgetNetwork: act<NoContent>('DELETE', '/api/networks/:key'),
  /** 404 system_dns_not_managed: start it with --system-dns. */
  systemDns: read<SystemDnsView>('/api/system-dns'),
  /**
   * On, off, or off for `pauseSeconds` (then back by itself). 403 needs_root
   * | 409 system_dns_already_enabled, system_dns_not_enabled,
   * system_dns_unavailable | 500 system_dns_failed (nothing left changed).
   */
  setSystemDns: send<{ readonly enabled: boolean; readonly pauseSeconds?: number }, SystemDnsView>('PUT', '/api/system-dns'),
  /** The view with lastLeakTest. */
  leakTest: act<SystemDnsView>('POST', '/api/system-dns/leak-test'),
  /**
   * `event: batch` with a StreamBatch every 250 ms, only when something
   * happened, with the views that changed; every view at least every 15 s.
   */
  stream: read<EventStream>('/api/stream'),
  /** The browser link with the token: on the Unix socket only. */
  dashboardLink: { ...read<DashboardLinkView>('/api/dashboard-link'), socketOnly: true },
} as const satisfies Readonly<Record<string, Endpoint>>;

export type EndpointName = keyof typeof API;

/** The endpoints the loopback API's routes serve (every one but the socket's own). */
export type RouteName = { [K in EndpointName]: (typeof API)[K] extends { readonly socketOnly: true } ? never : K }[EndpointName];

/**
 * The path to call: `:name` segments filled in (URL-encoded) from `params`,
 * then `query` as a query string (undefined values left out). A `:name`
 * with no value is a programming error: TypeError.
 */
export function endpointPath(endpoint: Endpoint, params: Readonly<Record<string, string>> = {}, query: Readonly<Record<string, string | number | undefined>> = {}): string {
  const path = endpoint.path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`${endpoint.method} ${endpoint.path}: no value for :${name}`);
    return encodeURIComponent(value);
  });
  const search = Object.entries(query)
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return search ? `${path}?${search}` : path;
}
