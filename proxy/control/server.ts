/**
 * The control server: HTTP on loopback, the JSON API, the live stream and
 * the dashboard's files.
 *
 * Every request passes these gates, in order:
 *   1. Host: a loopback name or address with this server's port (defeats DNS
 *      rebinding: a page on evil.example resolved to 127.0.0.1 sends
 *      `Host: evil.example`).
 *   2. /api only — Origin / Sec-Fetch-Site: a browser request from any other
 *      origin is refused, even other ports on loopback.
 *   3. /api only — the token, as `Authorization: Bearer <token>`. Nothing
 *      else authenticates: no cookie is set or read (auth.ts says why), so a
 *      browser holds no ambient credential another page or server could use.
 *   4. /api state changes (POST/PUT/DELETE) must carry our own Origin (CSRF).
 *      Browsers always send it on these; scripts add it with -H.
 *   5. Bodies: application/json only (no form can send it without a
 *      preflight), at most `maxBodyBytes`, valid JSON, then the schema.
 * No CORS headers are ever sent, so cross-origin preflights fail.
 * The dashboard's files (HTML, JS, CSS) hold no data and load without the token.
 *
 * The same API is also served on a Unix socket when `socket` is given (the
 * service's /run/dotstub/control.sock, mode 0660, owned by root and the
 * `dotstub` group). There, the file's permissions are the authorization:
 * the kernel lets only root and the group's members connect, so no token,
 * Host or Origin is asked for (no browser can reach a Unix socket). The
 * socket serves only /api, plus GET /api/dashboard-link: the browser
 * dashboard's link with the token, handed out to whoever may connect.
 * (Node gives no SO_PEERCRED, so the peer's uid is not logged.)
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import fs from 'node:fs';
import net from 'node:net';
import { dashboardLink, isAuthenticated, safeEqual } from './auth.js';
import { ApiFailure } from './errors.js';
import { API } from './api-client/endpoints.js';
import { matchRoute, routes, type Reply, type Route } from './routes.js';
import type { ControlService } from './service.js';
import { defaultDashboardDir, sendHtml, StaticFiles } from './static.js';
import type { ApiError, DashboardLinkView } from './api-types.js';
import { formatHostPort } from '../runtime/host-port.js';
import { ConfigError } from '../errors.js';

export const DEFAULT_CONTROL_PORT = 5380;
const MAX_BODY_BYTES = 64 * 1024;

export interface ControlServerOptions {
  readonly service: ControlService;
  readonly token: string;
  /** Loopback address to bind (default 127.0.0.1). */
  readonly host?: string;
  /** Default 5380; 0 picks a free port. */
  readonly port?: number;
  /** The built dashboard (default: <package>/renderer/dist). */
  readonly dashboardDir?: string;
  readonly maxBodyBytes?: number;
  /** Also serve the API on this Unix socket, where the file's permissions are the authorization. */
  readonly socket?: ControlSocketOptions;
  /**
   * Serve no browser API on loopback, only the socket: its port is held by
   * another program (app.ts listenControl), and these words say so wherever
   * the dashboard link would be handed out. The token is then handed to no
   * loopback listener at all.
   */
  readonly loopbackRefused?: string;
  /**
   * Also listen on [::1] at the same port (default: when `host` is
   * 127.0.0.1). `localhost` in a browser or a script may try ::1 first: a
   * program holding [::1]:PORT while dotstub holds 127.0.0.1:PORT would be
   * given the token of every `http://localhost:PORT/#token=…` link.
   */
  readonly alsoIPv6?: boolean;
}

/** An address of ours another program already holds (EADDRINUSE), and which one. */
export class ControlPortTaken extends Error {
  readonly code = 'EADDRINUSE';
  constructor(readonly address: string, cause: unknown) {
    super(`${address} is held by another program`, { cause });
    this.name = 'ControlPortTaken';
  }
}

function listenOn(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: http.Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  return closed;
}

export interface ControlSocketOptions {
  readonly path: string;
  /** The group allowed to connect (name or gid); the socket is chowned to it. Default: the process's own group. */
  readonly group?: string | number;
  /** Default 0o660: the owner and the group may connect, nobody else. */
  readonly mode?: number;
}

/** The gid of a group named in /etc/group (system groups, as addgroup --system creates them), or a ConfigError saying what to do. */
export function groupId(group: string | number, groupFile = '/etc/group'): number {
  if (typeof group === 'number') return group;
  if (/^\d+$/.test(group)) return Number(group);
  let text = '';
  try {
    text = fs.readFileSync(groupFile, 'utf8');
  } catch {
    // no group file: not found below
  }
  for (const line of text.split('\n')) {
    const [name, , gid] = line.split(':');
    if (name === group && gid !== undefined && /^\d+$/.test(gid)) return Number(gid);
  }
  throw new ConfigError(`the group "${group}" does not exist: the dotstub package creates it (addgroup --system ${group}); create it, or give --control-socket-group an existing group`);
}

/** Is something answering on this Unix socket? */
function socketAnswers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(file);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/** Is this a loopback address or the name localhost? */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost') return true;
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (net.isIPv6(h)) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  // Other origins can't embed our responses (<script src>, <img>) either.
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

const WRONG_TOKEN_PAGE = `<!doctype html><meta charset="utf-8"><title>dotstub</title>
<p>This dashboard link has a wrong token. Get the right link with <code>dotstub ctl dashboard</code> (a dotstub run by hand: its address with <code>#token=</code> and the contents of the token file its start line names), or open the dashboard from the dotstub desktop app.</p>
`;

const STATE_CHANGING = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

function sendError(res: ServerResponse, failure: ApiFailure): void {
  const body: ApiError = {
    error: {
      code: failure.code,
      message: failure.message,
      hint: failure.hint,
      ...(failure.field !== undefined ? { field: failure.field } : {}),
      ...(failure.fields ? { fields: failure.fields } : {}),
      ...(failure.fieldCodes ? { fieldCodes: failure.fieldCodes } : {}),
    },
  };
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Length': Buffer.byteLength(text),
  };
  if (failure.status === 401) headers['WWW-Authenticate'] = 'Bearer realm="dotstub"';
  res.writeHead(failure.status, headers);
  res.end(text);
}

export class ControlServer {
  readonly #service: ControlService;
  readonly #token: string;
  readonly #host: string;
  readonly #port: number;
  readonly #static: StaticFiles;
  readonly #maxBody: number;
  readonly #routes: Route[];
  readonly #server: http.Server;
  readonly #socket: ControlSocketOptions | undefined;
  readonly #loopbackRefused: string | undefined;
  readonly #alsoIPv6: boolean;
  #socketServer: http.Server | undefined;
  #v6Server: http.Server | undefined;
  #bound: number | undefined;

  constructor(options: ControlServerOptions) {
    const host = options.host ?? '127.0.0.1';
    // Invariant: the API is reachable only from this machine.
    if (!isLoopbackHost(host) || host.toLowerCase() === 'localhost') {
      throw new RangeError(`control server must bind a loopback address (127.0.0.1 or ::1), not ${host}`);
    }
    this.#service = options.service;
    this.#token = options.token;
    this.#host = host.replace(/^\[(.*)\]$/, '$1');
    this.#port = options.port ?? DEFAULT_CONTROL_PORT;
    this.#static = new StaticFiles(options.dashboardDir ?? defaultDashboardDir());
    this.#maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
    this.#routes = routes(this.#service);
    this.#server = this.#loopbackServer();
    this.#socket = options.socket;
    this.#loopbackRefused = options.loopbackRefused;
    this.#alsoIPv6 = options.alsoIPv6 ?? this.#host === '127.0.0.1';
  }

  #loopbackServer(): http.Server {
    const server = http.createServer((req, res) => this.#handle(req, res, 'loopback'));
    // Slow clients can't hold the server: headers and bodies have deadlines.
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    return server;
  }

  /**
   * Binds host:port and, for 127.0.0.1, [::1] at the same port: both or
   * neither (a port half held by another program is a taken port). A
   * machine without IPv6 loopback has no [::1] for anyone to hold.
   */
  async #listenLoopback(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await listenOn(this.#server, this.#port, this.#host);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new ControlPortTaken(formatHostPort(this.#host, this.#port), err);
        throw err;
      }
      const port = (this.#server.address() as net.AddressInfo).port;
      if (!this.#alsoIPv6) return void (this.#bound = port);
      const v6 = this.#loopbackServer();
      try {
        await listenOn(v6, port, '::1');
        this.#v6Server = v6;
        return void (this.#bound = port);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EADDRNOTAVAIL' || code === 'EAFNOSUPPORT') return void (this.#bound = port);
        await closeServer(this.#server);
        // A free port picked for us whose ::1 twin is taken: pick again.
        if (code === 'EADDRINUSE' && this.#port === 0 && attempt < 5) continue;
        if (code === 'EADDRINUSE') throw new ControlPortTaken(formatHostPort('::1', port), err);
        throw err;
      }
    }
  }

  /**
   * Listens on the Unix socket: a stale file (nothing answers) is replaced,
   * a live one is another dotstub (an error). Then chowned to the group and
   * given its mode. (Under the usual umask 022 it is born 0755: connecting
   * needs write permission, so nobody else can connect in between; the umask
   * is process-wide, so it is not changed here.)
   */
  async #listenSocket(o: ControlSocketOptions): Promise<void> {
    const gid = o.group === undefined ? undefined : groupId(o.group);
    if (fs.existsSync(o.path)) {
      if (await socketAnswers(o.path)) throw new ConfigError(`${o.path} is in use: another dotstub serves its control API there`);
      fs.rmSync(o.path, { force: true });
    }
    const server = http.createServer((req, res) => this.#handle(req, res, 'socket'));
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(o.path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#socketServer = server;
    if (gid !== undefined) fs.chownSync(o.path, -1, gid);
    fs.chmodSync(o.path, o.mode ?? 0o660);
  }

  /** The Unix socket's path, when the API is served there too. */
  get socketPath(): string | undefined {
    return this.#socketServer ? this.#socket?.path : undefined;
  }

  /** Listens; null: on the socket only (`loopbackRefused`). */
  async listen(): Promise<{ host: string; port: number; url: string } | null> {
    if (this.#loopbackRefused === undefined) {
      await this.#listenLoopback();
      this.#service.controlUrl = this.url;
    }
    if (this.#socket) {
      try {
        await this.#listenSocket(this.#socket);
      } catch (err) {
        await closeServer(this.#server);
        if (this.#v6Server) await closeServer(this.#v6Server);
        throw err;
      }
    }
    return this.#bound === undefined ? null : { host: this.#host, port: this.#bound, url: this.url };
  }

  get port(): number {
    if (this.#bound === undefined) throw new Error('control server is not listening');
    return this.#bound;
  }

  /** The browser API's origin, or null when it is served on the socket only. */
  get loopbackUrl(): string | null {
    return this.#bound === undefined ? null : this.url;
  }

  /** Why the browser API is not served on loopback (its port is held by another program), or undefined. */
  get loopbackRefused(): string | undefined {
    return this.#loopbackRefused;
  }

  /** Whether [::1] at the same port is ours too. */
  get ipv6(): boolean {
    return this.#v6Server !== undefined;
  }

  get url(): string {
    return `http://${formatHostPort(this.#host, this.port)}`;
  }

  /** The link that signs the dashboard in: `/#token=…` (the fragment never reaches a server). */
  get dashboardUrl(): string {
    return dashboardLink(this.url, this.#token);
  }

  async close(): Promise<void> {
    this.#service.stream.close();
    const closed = this.#bound === undefined ? Promise.resolve() : closeServer(this.#server);
    if (this.#v6Server) await closeServer(this.#v6Server);
    const socket = this.#socketServer;
    if (socket) {
      const socketClosed = new Promise<void>((resolve) => socket.close(() => resolve()));
      socket.closeAllConnections();
      await socketClosed;
      // server.close() unlinks it; a file left would only look like a dead service.
      if (this.#socket) fs.rmSync(this.#socket.path, { force: true });
      this.#socketServer = undefined;
    }
    await closed;
  }

  /** The Host values we answer to: loopback names with our port. */
  #hostAllowed(host: string | undefined): boolean {
    if (host === undefined || this.#bound === undefined) return false;
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d+)$/.exec(host);
    if (!m || Number(m[2]) !== this.#bound) return false;
    const name = (m[1] as string).toLowerCase();
    const bare = name.replace(/^\[(.*)\]$/, '$1');
    return name === 'localhost' || bare === this.#host || bare === '127.0.0.1' || bare === '::1';
  }

  #handle(req: IncomingMessage, res: ServerResponse, via: 'loopback' | 'socket'): void {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    (via === 'socket' ? this.#routeSocket(req, res) : this.#route(req, res)).catch((err: unknown) => {
      const failure = err instanceof ApiFailure ? err : new ApiFailure('internal', 'internal error; see the dotstub log');
      if (!(err instanceof ApiFailure)) console.error('dotstub: control API:', err);
      if (!res.headersSent) sendError(res, failure);
      else res.destroy();
    });
  }

  /** A request on the Unix socket: the kernel let this peer connect, which is the authorization (see the header). */
  async #routeSocket(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/api' && !url.pathname.startsWith('/api/')) {
      throw new ApiFailure('not_found', `the control socket serves the API only; ${this.#bound === undefined ? 'the browser dashboard is not served' : `the dashboard is at ${this.url} (its link: GET /api/dashboard-link)`}`);
    }
    if (url.pathname === API.dashboardLink.path) {
      if (method !== API.dashboardLink.method) throw new ApiFailure('method_not_allowed', `${method} is not allowed on ${url.pathname}`);
      // No link to a port dotstub does not hold: whoever holds it would be given the token.
      if (this.#loopbackRefused !== undefined) throw new ApiFailure('dashboard_unavailable', this.#loopbackRefused);
      const body: DashboardLinkView = { url: this.dashboardUrl, origin: this.url, token: this.#token };
      this.#send(res, { kind: 'json', status: 200, body });
      return;
    }
    await this.#api(req, res, method, url);
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const host = req.headers.host;
    if (!this.#hostAllowed(host)) {
      // Close so a rebinding page can't keep a connection to try again.
      res.setHeader('Connection', 'close');
      throw new ApiFailure('bad_host', `Host "${host ?? ''}" is not this machine's dotstub; use ${this.url}`);
    }
    const url = new URL(req.url ?? '/', `http://${host as string}`);
    const own = `http://${host as string}`;
    if (url.pathname === '/api' || url.pathname.startsWith('/api/')) {
      const origin = req.headers.origin;
      if (origin !== undefined && origin !== own) {
        throw new ApiFailure('forbidden_origin', `requests from ${origin} are not allowed; only the dashboard at ${own} may call the API`);
      }
      const site = req.headers['sec-fetch-site'];
      if (site !== undefined && site !== 'same-origin' && site !== 'none') {
        throw new ApiFailure('forbidden_origin', `cross-origin request (${site}) refused; only the dashboard at ${own} may call the API`);
      }
      if (!isAuthenticated(req, this.#token)) {
        throw new ApiFailure('unauthorized', 'missing or wrong token: send "Authorization: Bearer <token>" (the token is in the config dir), or open the dashboard link dotstub printed');
      }
      if (STATE_CHANGING.has(method) && origin !== own) {
        throw new ApiFailure('forbidden_origin', `changes need the dashboard's Origin; from a script add -H 'Origin: ${own}'`);
      }
      if (method === 'OPTIONS') throw new ApiFailure('forbidden_origin', 'cross-origin requests are not allowed');
      await this.#api(req, res, method, url);
      return;
    }
    if (method !== 'GET' && method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      throw new ApiFailure('method_not_allowed', `${method} is not allowed here`);
    }
    if (url.pathname === '/' && url.searchParams.has('token')) {
      // The link format before issue 13. A valid token is moved into the
      // fragment (303, nothing set, not cached), so old links and bookmarks
      // still sign in while the token leaves the query string, which
      // browsers send to the server and keep in history; a wrong one gets a
      // page saying where to find the right link.
      if (safeEqual(url.searchParams.get('token') ?? '', this.#token)) {
        res.writeHead(303, { Location: dashboardLink('', this.#token), 'Cache-Control': 'no-store' });
        res.end();
      } else {
        sendHtml(res, 401, WRONG_TOKEN_PAGE);
      }
      return;
    }
    this.#static.serve(url.pathname, method === 'HEAD', res, host as string);
  }

  async #api(req: IncomingMessage, res: ServerResponse, method: string, url: URL): Promise<void> {
    const { route, params } = matchRoute(this.#routes, method, url.pathname);
    let body: unknown;
    if (route.body) body = await this.#readJson(req, res);
    else if (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') {
      throw new ApiFailure('bad_request', `${method} ${url.pathname} takes no body`);
    }
    const reply = await route.handler({ params, query: url.searchParams, body });
    this.#send(res, reply);
  }

  #send(res: ServerResponse, reply: Reply): void {
    switch (reply.kind) {
      case 'json': {
        const text = JSON.stringify(reply.body);
        res.writeHead(reply.status, {
          'Content-Type': 'application/json; charset=utf-8',
          'Cache-Control': 'no-store',
          'Content-Length': Buffer.byteLength(text),
        });
        res.end(text);
        return;
      }
      case 'empty':
        res.writeHead(reply.status, { 'Cache-Control': 'no-store' });
        res.end();
        return;
      case 'stream':
        this.#service.stream.add(res);
        return;
      case 'download': {
        res.writeHead(200, {
          'Content-Type': reply.type,
          'Content-Disposition': `attachment; filename="${reply.filename}"`,
          'Cache-Control': 'no-store',
        });
        const it = reply.chunks[Symbol.iterator]();
        // Write in slices of ~64 KiB and wait for 'drain', so a big log doesn't sit in memory twice.
        const pump = (): void => {
          for (;;) {
            let slice = '';
            while (slice.length < 65_536) {
              const n = it.next();
              if (n.done) {
                res.end(slice);
                return;
              }
              slice += n.value;
            }
            if (!res.write(slice)) {
              res.once('drain', pump);
              return;
            }
          }
        };
        pump();
        return;
      }
    }
  }

  /** Reads a JSON body: application/json, at most maxBodyBytes, parsed. */
  async #readJson(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') {
      req.resume();
      throw new ApiFailure('unsupported_media_type', 'send the body as JSON with Content-Type: application/json');
    }
    const declared = req.headers['content-length'];
    const tooLarge = (): ApiFailure => new ApiFailure('too_large', `request body over ${this.#maxBody} bytes`);
    if (declared !== undefined && Number(declared) > this.#maxBody) {
      // Don't read it: answer at once and close the connection.
      res.setHeader('Connection', 'close');
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    await new Promise<void>((resolve, reject) => {
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > this.#maxBody) {
          req.removeAllListeners('data');
          res.setHeader('Connection', 'close');
          req.resume();
          reject(tooLarge());
          return;
        }
        chunks.push(chunk);
      });
      req.once('end', () => resolve());
      req.once('error', reject);
    });
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') throw new ApiFailure('bad_request', 'the request body is empty: send a JSON object');
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new ApiFailure('bad_request', `the request body is not valid JSON (${(err as Error).message})`);
    }
  }
}
