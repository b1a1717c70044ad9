/**
 * The sign-in window's own way out (issue 9, item 5): a loopback HTTP proxy
 * that exists only while a captive portal's sign-in exception is active and
 * resolves every host it is asked for through the network's own resolver,
 * in cleartext. The desktop app points its "Sign in to network" window —
 * and only that window, in its own session partition — at it with
 * `session.setProxy`, so a portal page that pulls in other hosts (a CDN, a
 * social login) works, while every other lookup on the machine stays held.
 *
 * Nobody else can use it: it binds 127.0.0.1 on a random port and every
 * request must carry `Proxy-Authorization: Basic` with a random credential
 * made for this sign-in, handed out only through the control API (token
 * required). Plain HTTP is forwarded; HTTPS goes through CONNECT tunnels
 * (the TLS is the browser's, end to end). Each new host is reported, so the
 * timeline says which names were let through.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface SignInProxyInfo {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly username: string;
  readonly password: string;
}

export interface SignInProxyOptions {
  /** Resolves a host through the network's own resolver (A and AAAA). */
  readonly lookup: (host: string) => Promise<string[]>;
  /** A host the sign-in window asked for (first time only). */
  readonly onHost?: (host: string) => void;
  /** Per upstream connection attempt. */
  readonly connectTimeoutMs?: number;
}

const MAX_TUNNELS = 64;

export class SignInProxy {
  readonly #opts: SignInProxyOptions;
  readonly #server: http.Server;
  readonly #username = 'signin';
  readonly #password = crypto.randomBytes(18).toString('base64url');
  readonly #seen = new Set<string>();
  readonly #sockets = new Set<net.Socket>();

  constructor(opts: SignInProxyOptions) {
    this.#opts = opts;
    this.#server = http.createServer((req, res) => void this.#forward(req, res));
    this.#server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => void this.#tunnel(req, socket, head));
    this.#server.on('connection', (s: net.Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
  }

  async listen(): Promise<SignInProxyInfo> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, '127.0.0.1', resolve);
    });
    return this.info;
  }

  /** Listening (its port is known). */
  get ready(): boolean {
    return this.#server.listening;
  }

  get info(): SignInProxyInfo {
    const port = (this.#server.address() as AddressInfo | null)?.port ?? 0;
    return { url: `http://127.0.0.1:${port}`, username: this.#username, password: this.#password };
  }

  close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #authorized(req: http.IncomingMessage): boolean {
    const h = req.headers['proxy-authorization'];
    if (typeof h !== 'string' || !h.startsWith('Basic ')) return false;
    const given = Buffer.from(h.slice(6), 'base64');
    const want = Buffer.from(`${this.#username}:${this.#password}`);
    return given.length === want.length && crypto.timingSafeEqual(given, want);
  }

  /** The host's addresses through the network's resolver (an IP literal as itself). */
  async #resolve(host: string): Promise<string[]> {
    const bare = host.replace(/^\[|\]$/g, '');
    if (net.isIP(bare) !== 0) return [bare];
    const name = bare.toLowerCase();
    if (!this.#seen.has(name)) {
      this.#seen.add(name);
      this.#opts.onHost?.(name);
    }
    return this.#opts.lookup(name);
  }

  #connect(addresses: readonly string[], port: number): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const first = addresses[0];
      if (first === undefined) {
        reject(new Error('no address'));
        return;
      }
      const s = net.connect({ host: first, port });
      const timer = setTimeout(() => s.destroy(new Error(`no answer from ${first}:${port}`)), this.#opts.connectTimeoutMs ?? 5000);
      s.once('connect', () => {
        clearTimeout(timer);
        resolve(s);
      });
      s.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  async #tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    if (!this.#authorized(req)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="dotstub sign-in"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (this.#sockets.size > MAX_TUNNELS) {
      client.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(req.url ?? '');
    const port = m ? Number(m[2]) : 0;
    if (!m?.[1] || port < 1 || port > 65535) {
      client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    let upstream: net.Socket;
    try {
      upstream = await this.#connect(await this.#resolve(m[1]), port);
    } catch (err) {
      client.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength((err as Error).message)}\r\n\r\n${(err as Error).message}`);
      return;
    }
    this.#sockets.add(upstream);
    upstream.on('close', () => this.#sockets.delete(upstream));
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  }

  async #forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!this.#authorized(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="dotstub sign-in"' }).end();
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute URL expected (this is a proxy)');
      return;
    }
    if (target.protocol !== 'http:') {
      res.writeHead(400).end('only http:// is forwarded; https goes through CONNECT');
      return;
    }
    let addresses: string[];
    try {
      addresses = await this.#resolve(target.hostname);
    } catch (err) {
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`${target.hostname} did not resolve at the network's resolver: ${(err as Error).message}`);
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const out = http.request(
      { host: addresses[0], port: Number(target.port || 80), method: req.method, path: `${target.pathname}${target.search}`, headers, agent: false },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.setTimeout(this.#opts.connectTimeoutMs ?? 5000, () => out.destroy(new Error('timed out')));
    out.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(err.message);
      else res.destroy();
    });
    req.pipe(out);
  }
}
