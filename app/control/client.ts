/**
 * A typed client for the proxy's control API (proxy/control/api-types.ts has
 * the contract). Used by the Electron main process for the tray; plain
 * node:http, so it runs (and is tested) without Electron.
 *
 * - Two transports: loopback HTTP to a proxy this app started (the token
 *   from its ready file), or the installed service's Unix socket
 *   (`socketPath`), where the socket's permissions are the authorization and
 *   no token is sent; the dashboard's origin and link then come from the
 *   socket's GET /api/dashboard-link (fetchDashboardLink).
 * - Auth over HTTP: `Authorization: Bearer <token>` on every call.
 * - State-changing calls (POST/PUT/DELETE) carry `Origin: <control origin>`:
 *   the server refuses changes without its own Origin (its CSRF gate).
 * - Every call has a deadline covering connect, headers and body.
 * - Every call goes through the endpoint table (proxy/control/api-client/
 *   endpoints.ts), which the server's routes bind too; failures are the one
 *   ControlError the dashboard's client throws as well.
 * - The live stream (GET /api/stream) is parsed with SseParser; it has a
 *   deadline for its headers and an idle deadline (the server pings every
 *   15 s), so a stuck stream is noticed and the caller can reconnect.
 */
import http from 'node:http';
import type { DashboardLinkView, LocalNamesView, MetricsView, NetworksView, RememberedNetworkView, ResolversView, Settings, SignInView, StatusView, SystemDnsView, StreamBatch, TimelineEvent } from '../../proxy/control/api-types.js';
import { API, endpointPath, type Endpoint, type RequestOf, type ResponseOf } from '../../proxy/control/api-client/endpoints.js';
import { answerError, ControlError } from '../../proxy/control/api-client/errors.js';
import { SseParser } from '../../proxy/control/api-client/sse.js';

/** A failure on the way to an answer (no status): timeout, unreachable, aborted, bad_response. */
const failure = (code: 'timeout' | 'unreachable' | 'aborted' | 'bad_response', message: string, cause?: unknown): ControlError =>
  new ControlError(0, code, message, cause === undefined ? {} : { cause });

interface CommonOptions {
  /** Deadline for one call, ms (default 5000). */
  readonly timeoutMs?: number;
  /** Largest JSON answer accepted, bytes (default 8 MiB). */
  readonly maxBodyBytes?: number;
}

interface HttpControlOptions extends CommonOptions {
  /** The control server's URL from the ready file, e.g. http://127.0.0.1:5380. */
  readonly baseUrl: string;
  readonly token: string;
}

interface SocketControlOptions extends CommonOptions {
  /** The service's control socket, e.g. /run/dotstub/control.sock. */
  readonly socketPath: string;
  /** The loopback dashboard's link, from GET /api/dashboard-link on the socket (its origin is the window's allowed origin). */
  readonly dashboardUrl: string;
}

export type ControlClientOptions = HttpControlOptions | SocketControlOptions;

/** The installed service's dashboard link, asked on its socket (the one place the token is handed out). */
export function fetchDashboardLink(socketPath: string, timeoutMs = 5000): Promise<DashboardLinkView> {
  return new Promise((resolve, reject) => {
    const { method, path } = API.dashboardLink;
    const req = http.request({ socketPath, path, method, agent: false, headers: { Accept: 'application/json' } }, (res) => {
      readBody(res, 64 * 1024).then((text) => {
        if (res.statusCode !== 200) return reject(answerError(res.statusCode ?? 0, text));
        try {
          resolve(JSON.parse(text) as DashboardLinkView);
        } catch (err) {
          reject(failure('bad_response', `${method} ${path}: the answer is not valid JSON`, err));
        }
      }, reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(failure('timeout', `${method} ${path}: no answer on ${socketPath} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

export interface StreamOptions {
  readonly onBatch: (batch: StreamBatch) => void;
  /** Called once the server accepted the stream (200 and headers). */
  readonly onOpen?: () => void;
  /** Deadline for the stream's headers, ms (default: the client's timeoutMs). */
  readonly connectTimeoutMs?: number;
  /** No bytes (not even the server's 15 s ping) for this long ends the stream, ms (default 40000). */
  readonly idleTimeoutMs?: number;
}

export interface StreamHandle {
  /** Resolves when the stream ends: with undefined if close() ended it, else with the error that did. */
  readonly ended: Promise<ControlError | undefined>;
  close(): void;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

function isLoopbackHostname(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export class ControlClient {
  readonly #base: URL;
  readonly #token: string | undefined;
  readonly #socketPath: string | undefined;
  readonly #dashboardUrl: string;
  readonly #timeoutMs: number;
  readonly #maxBody: number;
  readonly #requests = new Set<http.ClientRequest>();
  #closed = false;

  constructor(options: ControlClientOptions) {
    const socket = 'socketPath' in options;
    const baseUrl = socket ? dashboardOrigin(options.dashboardUrl) : options.baseUrl;
    let base: URL;
    try {
      base = new URL(baseUrl);
    } catch (err) {
      throw new TypeError(`control client: baseUrl ${JSON.stringify(baseUrl)} is not a URL; use the "control" URL from the ready file, e.g. http://127.0.0.1:5380`, { cause: err });
    }
    if (base.protocol !== 'http:' || !isLoopbackHostname(base.hostname) || base.port === '') {
      throw new TypeError(`control client: baseUrl ${baseUrl} must be http://<loopback address>:<port> (the control API listens on loopback only)`);
    }
    if (base.pathname !== '/' || base.search !== '' || base.username !== '' || base.password !== '') {
      throw new TypeError(`control client: baseUrl ${baseUrl} must be an origin only (no path, query or user), e.g. http://127.0.0.1:5380`);
    }
    if (socket) {
      if (typeof options.socketPath !== 'string' || !options.socketPath.startsWith('/')) throw new TypeError('control client: socketPath must be an absolute path, e.g. /run/dotstub/control.sock');
      this.#socketPath = options.socketPath;
      this.#dashboardUrl = options.dashboardUrl;
    } else {
      if (typeof options.token !== 'string' || !/^[\x21-\x7e]+$/.test(options.token)) {
        throw new TypeError('control client: token must be the non-empty token from the ready file or the config dir');
      }
      this.#token = options.token;
      this.#dashboardUrl = `${base.origin}/#token=${encodeURIComponent(options.token)}`;
    }
    const timeoutMs = options.timeoutMs ?? 5000;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError(`control client: timeoutMs must be a positive number of milliseconds, not ${timeoutMs}`);
    this.#base = base;
    this.#timeoutMs = timeoutMs;
    this.#maxBody = options.maxBodyBytes ?? 8 << 20;
  }

  /** The control server's origin, e.g. http://127.0.0.1:5380 (also the dashboard's origin). */
  get origin(): string {
    return this.#base.origin;
  }

  /**
   * The link that signs the dashboard in: the token in the fragment, which
   * is never sent to a server; the page keeps it in its own sessionStorage
   * and sends it as a Bearer header (no cookie: issue 13).
   */
  get dashboardUrl(): string {
    return this.#dashboardUrl;
  }

  /** The service's control socket, when this client talks to it (else undefined: loopback HTTP). */
  get socketPath(): string | undefined {
    return this.#socketPath;
  }

  /** Where calls go, for messages: the socket's path or the HTTP origin. */
  get #where(): string {
    return this.#socketPath ?? this.origin;
  }

  status(signal?: AbortSignal): Promise<StatusView> {
    return this.#call(API.status, undefined, signal);
  }

  resolvers(signal?: AbortSignal): Promise<ResolversView> {
    return this.#call(API.resolvers, undefined, signal);
  }

  metrics(signal?: AbortSignal): Promise<MetricsView> {
    return this.#call(API.metrics, undefined, signal);
  }

  recentEvents(signal?: AbortSignal): Promise<TimelineEvent[]> {
    return this.#call(API.recentEvents, undefined, signal);
  }

  settings(signal?: AbortSignal): Promise<Settings> {
    return this.#call(API.settings, undefined, signal);
  }

  /** Switches the active resolver; resolves with the status after the switch. */
  setActiveResolver(id: string, signal?: AbortSignal): Promise<StatusView> {
    return this.#call(API.switchResolver, { id }, signal);
  }

  /** The machine-wide takeover; null when this proxy does not manage system DNS (started without --system-dns). */
  async systemDns(signal?: AbortSignal): Promise<SystemDnsView | null> {
    try {
      return await this.#call(API.systemDns, undefined, signal);
    } catch (err) {
      if (err instanceof ControlError && err.status === 404) return null;
      throw err;
    }
  }

  /**
   * Points the machine's DNS at dotstub, or gives the old DNS back (for
   * `pauseSeconds`, then private DNS comes back by itself). Fails with
   * ControlError with code 'needs_root' when the proxy is unprivileged.
   */
  setSystemDns(enabled: boolean, signal?: AbortSignal, pauseSeconds?: number): Promise<SystemDnsView> {
    return this.#call(API.setSystemDns, pauseSeconds === undefined ? { enabled } : { enabled, pauseSeconds }, signal);
  }

  /** This network's own names and the user's choice for it; null when routing by name owner is off in this proxy. */
  async localNames(signal?: AbortSignal): Promise<LocalNamesView | null> {
    try {
      return await this.#call(API.localNames, undefined, signal);
    } catch (err) {
      if (err instanceof ControlError && err.code === 'name_routing_off') return null;
      throw err;
    }
  }

  /** The user's choice for this network's own names, remembered for it (the Network view's choice). */
  setLocalNames(allow: boolean, signal?: AbortSignal): Promise<LocalNamesView> {
    return this.#call(API.setLocalNames, { allow }, signal);
  }

  /** The networks remembered (the one we're on marked), with what each offers: its own encrypted resolver among them. */
  networks(signal?: AbortSignal): Promise<NetworksView> {
    return this.#call(API.networks, undefined, signal);
  }

  /** The network's own encrypted resolver on network `key`: 'use' its verified offer there, or 'ask' (the user's own resolver). */
  setNetworkOwnResolver(key: string, ownResolver: 'use' | 'ask', signal?: AbortSignal): Promise<RememberedNetworkView> {
    return this.#call(API.setNetworkChoice, { ownResolver }, signal, { key });
  }

  updateSettings(patch: Partial<Settings>, signal?: AbortSignal): Promise<Settings> {
    return this.#call(API.updateSettings, patch, signal);
  }

  /** Answers a captive portal: "Allow sign-in", "Not now", five more minutes, check again. */
  captive(action: 'allow' | 'decline' | 'extend' | 'check', remember: boolean, signal?: AbortSignal): Promise<StatusView> {
    return this.#call(API.captive, { action, remember }, signal);
  }

  /** The portal's page and the sign-in window's proxy (409 unless signing in is allowed now). */
  signIn(signal?: AbortSignal): Promise<SignInView> {
    return this.#call(API.signIn, undefined, signal);
  }

  /** Subscribes to GET /api/stream. The caller reconnects (with its own backoff) when `ended` resolves. */
  stream(options: StreamOptions): StreamHandle {
    const idleMs = options.idleTimeoutMs ?? 40_000;
    const connectMs = options.connectTimeoutMs ?? this.#timeoutMs;
    if (this.#closed) return { ended: Promise.resolve(failure('aborted', 'control client closed')), close: () => undefined };
    const parser = new SseParser();
    let finish!: (err: ControlError | undefined) => void;
    const ended = new Promise<ControlError | undefined>((resolve) => (finish = resolve));
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const end = (err: ControlError | undefined): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      finish(err);
    };
    const arm = (ms: number, make: () => ControlError): void => {
      clearTimeout(timer);
      timer = setTimeout(() => end(make()), ms);
    };
    const req = this.#request(API.stream.method, API.stream.path, { Accept: 'text/event-stream' });
    arm(connectMs, () => failure('timeout', `control stream: no answer from ${this.origin} within ${connectMs} ms`));
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        void readBody(res, 64 * 1024).then(
          (body) => end(answerError(res.statusCode ?? 0, body)),
          () => end(failure('unreachable', `control stream: the connection to ${this.origin} closed during an error answer`)),
        );
        return;
      }
      if (!/^text\/event-stream\b/i.test(res.headers['content-type'] ?? '')) {
        res.resume();
        end(failure('bad_response', `control stream: expected text/event-stream, got ${res.headers['content-type'] ?? 'no content type'}`));
        return;
      }
      options.onOpen?.();
      const idle = (): ControlError => failure('timeout', `control stream: nothing from ${this.origin} for ${idleMs} ms`);
      arm(idleMs, idle);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (done) return;
        arm(idleMs, idle);
        let events;
        try {
          events = parser.feed(chunk);
        } catch (err) {
          end(failure('bad_response', `control stream: ${(err as Error).message}`, err));
          return;
        }
        for (const e of events) {
          if (e.event !== 'batch') continue;
          let batch: StreamBatch;
          try {
            batch = JSON.parse(e.data) as StreamBatch;
          } catch (err) {
            end(failure('bad_response', 'control stream: a batch was not valid JSON', err));
            return;
          }
          options.onBatch(batch);
          if (done) return;
        }
      });
      res.on('end', () => end(failure('unreachable', `control stream: ${this.origin} ended the stream`)));
      res.on('error', (err) => end(failure('unreachable', `control stream: ${err.message}`, err)));
    });
    req.on('error', (err) => end(this.#closed ? failure('aborted', 'control client closed') : unreachable(this.#where, err)));
    req.end();
    return {
      ended,
      close: () => end(undefined),
    };
  }

  /** Aborts every call in flight (they reject with ControlError 'aborted') and refuses new ones. */
  close(): void {
    this.#closed = true;
    for (const req of this.#requests) req.destroy(failure('aborted', 'control client closed'));
    this.#requests.clear();
  }

  #request(method: string, path: string, headers: Record<string, string>): http.ClientRequest {
    // A fresh connection per call: the proxy restarts on new ports, and a
    // pooled socket to a dead process would only fail later.
    const req = this.#socketPath
      ? // The socket: its permissions are the authorization; no token is sent.
        http.request({ socketPath: this.#socketPath, method, path, agent: false, headers: { Host: 'localhost', ...headers } })
      : http.request({
          protocol: 'http:',
          hostname: this.#base.hostname.replace(/^\[(.*)\]$/, '$1'),
          port: Number(this.#base.port),
          method,
          path,
          agent: false,
          headers: {
            Host: this.#base.host,
            Authorization: `Bearer ${this.#token ?? ''}`,
            ...headers,
          },
        });
    this.#requests.add(req);
    req.once('close', () => this.#requests.delete(req));
    return req;
  }

  /** One call of an endpoint of the table, with its JSON body (undefined: none) and answer. */
  async #call<E extends Endpoint>(endpoint: E, body: RequestOf<E>, signal: AbortSignal | undefined, params?: Readonly<Record<string, string>>): Promise<ResponseOf<E>> {
    type T = ResponseOf<E>;
    const { method } = endpoint;
    const path = endpointPath(endpoint, params);
    if (this.#closed) throw failure('aborted', `${method} ${path}: control client closed`);
    if (signal?.aborted) throw failure('aborted', `${method} ${path}: aborted`);
    const headers: Record<string, string> = { Accept: 'application/json' };
    // The server's CSRF gate: changes must carry the dashboard's own Origin.
    if (method !== 'GET') headers.Origin = this.origin;
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
    if (payload) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const req = this.#request(method, path, headers);
      const settle = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const fail = (err: ControlError): void => {
        settle(() => reject(err));
        req.destroy();
      };
      const timer = setTimeout(
        () => fail(failure('timeout', `${method} ${path}: no complete answer from ${this.origin} within ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
      const onAbort = (): void => fail(failure('aborted', `${method} ${path}: aborted`));
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => fail(err instanceof ControlError && err.code === 'aborted' ? err : unreachable(this.#where, err)));
      req.on('response', (res) => {
        readBody(res, this.#maxBody).then(
          (text) => {
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) return fail(answerError(status, text));
            if (status === 204) return settle(() => resolve(undefined as T));
            if (!/^application\/json\b/i.test(res.headers['content-type'] ?? '')) {
              return fail(failure('bad_response', `${method} ${path}: expected JSON, got ${res.headers['content-type'] ?? 'no content type'}`));
            }
            try {
              const value = JSON.parse(text) as T;
              settle(() => resolve(value));
            } catch (err) {
              fail(failure('bad_response', `${method} ${path}: the answer is not valid JSON`, err));
            }
          },
          (err: unknown) =>
            fail(
              err instanceof ControlError && err.code === 'bad_response'
                ? err
                : this.#closed
                  ? failure('aborted', `${method} ${path}: control client closed`)
                  : failure('unreachable', `${method} ${path}: the connection closed mid-answer`, err),
            ),
        );
      });
      req.end(payload);
    });
  }
}

/** http://127.0.0.1:5380/#token=… → http://127.0.0.1:5380 (anything unparsable is passed on for the constructor's message). */
function dashboardOrigin(link: string): string {
  try {
    return new URL(link).origin;
  } catch {
    return link;
  }
}

function unreachable(origin: string, err: Error): ControlError {
  const code = (err as NodeJS.ErrnoException).code;
  return failure('unreachable', `cannot reach the control API at ${origin}${code ? ` (${code})` : ''}: is dotstub running?`, err);
}

function readBody(res: http.IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        res.destroy();
        reject(failure('bad_response', `answer over ${max} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    res.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.once('error', reject);
    res.once('aborted', () => reject(new Error('aborted')));
  });
}
