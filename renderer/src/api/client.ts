/**
 * The control API over same-origin fetch. Every call carries
 * `Authorization: Bearer <token>` (lib/session.ts says where the token comes
 * from); the browser holds no cookie for it. State changes carry our Origin,
 * which same-origin fetch sends by itself.
 *
 * Calls go through the endpoint table the server's routes bind
 * (proxy/control/api-client/endpoints.ts), and fail with the ControlError
 * the desktop app's client throws too.
 */
import type { CustomResolverBody, Settings } from '../../../proxy/control/api-types.js';
import { API, endpointPath, type Endpoint, type RequestOf, type ResponseOf } from '../../../proxy/control/api-client/endpoints.js';
import { answerError, ControlError } from '../../../proxy/control/api-client/errors.js';
import { bearer } from '../lib/session.js';

/** The token for this tab; null until signed in (then every call fails with 401 'signed_out' without a request). */
let token: string | null = null;

export function setToken(value: string | null): void {
  token = value;
}

/** Headers that authenticate a call, or a 401 when there is no token to send. */
export function authHeaders(): Record<string, string> {
  if (token === null) throw new ControlError(401, 'signed_out', 'no token: this page was opened without its sign-in link');
  return { authorization: bearer(token) };
}

interface CallOptions {
  readonly params?: Readonly<Record<string, string>>;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
}

/** One call of an endpoint of the table, with its JSON body (undefined: none). */
async function call<E extends Endpoint>(endpoint: E, body: RequestOf<E>, options: CallOptions = {}): Promise<ResponseOf<E>> {
  type T = ResponseOf<E>;
  const auth = authHeaders();
  let res: Response;
  try {
    res = await fetch(endpointPath(endpoint, options.params, options.query), {
      method: endpoint.method,
      // Nothing ambient: the header is the credential.
      credentials: 'omit',
      headers: body === undefined ? { ...auth, accept: 'application/json' } : { ...auth, accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ControlError(0, 'unreachable', 'The dotstub proxy is not answering.');
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  if (!res.ok) throw answerError(res.status, text);
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined as T;
  }
}

export const api = {
  status: () => call(API.status, undefined),
  resolvers: () => call(API.resolvers, undefined),
  addResolver: (body: CustomResolverBody) => call(API.addResolver, body),
  validateResolver: (body: CustomResolverBody) => call(API.validateResolver, body),
  removeResolver: (id: string) => call(API.removeResolver, undefined, { params: { id } }),
  switchResolver: (id: string) => call(API.switchResolver, { id }),
  dismissRetiredNotice: () => call(API.dismissRetiredNotice, undefined),
  probeResolver: (id: string) => call(API.probeResolver, { id }),
  testResolvers: () => call(API.testResolvers, undefined),
  lastResolverTest: () => call(API.lastResolverTest, undefined),
  retryNow: () => call(API.retryNow, undefined),
  connections: () => call(API.connections, undefined),
  metrics: () => call(API.metrics, undefined),
  // With dotstub's own checks (internal=1): the page hides them itself unless "Show dotstub's own checks" is on.
  queries: (limit: number, offset = 0) => call(API.queries, undefined, { query: { internal: 1, limit, offset } }),
  clearQueries: () => call(API.clearQueries, undefined),
  recentEvents: () => call(API.recentEvents, undefined),
  settings: () => call(API.settings, undefined),
  saveSettings: (changes: Partial<Settings>) => call(API.updateSettings, changes),
  captive: (action: 'allow' | 'decline' | 'extend' | 'check', remember = false) => call(API.captive, { action, remember }),
  systemDns: () => call(API.systemDns, undefined),
  setSystemDns: (enabled: boolean) => call(API.setSystemDns, { enabled }),
  pauseSystemDns: (seconds: number) => call(API.setSystemDns, { enabled: false, pauseSeconds: seconds }),
  runLeakTest: () => call(API.leakTest, undefined),
  localNames: () => call(API.localNames, undefined),
  setLocalNames: (allow: boolean) => call(API.setLocalNames, { allow }),
  networks: () => call(API.networks, undefined),
  setNetworkLocalNames: (key: string, localNames: 'allow' | 'deny' | 'ask') => call(API.setNetworkChoice, { localNames }, { params: { key } }),
  /** The network's own encrypted resolver on that network: 'use' its verified offer, or 'ask' (your own resolver). */
  setNetworkOwnResolver: (key: string, ownResolver: 'use' | 'ask') => call(API.setNetworkChoice, { ownResolver }, { params: { key } }),
  forgetNetwork: (key: string) => call(API.forgetNetwork, undefined, { params: { key } }),
  exportSettings: () => call(API.exportSettings, undefined),
  // The file as exported, checked whole by the proxy (a bad one is refused with a sentence).
  importSettings: (file: unknown) => call(API.importSettings, file as RequestOf<typeof API.importSettings>),
};
