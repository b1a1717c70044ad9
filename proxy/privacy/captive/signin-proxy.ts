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
 *
 * Nothing of this machine is reachable through it (issue 43): the portal's
 * page and the network's DNS are the network's to choose, and Chromium
 * can't apply its private-network checks to hosts the proxy resolves. So
 * every address is checked after resolving (network/off-limits.ts:
 * loopback, unspecified, this host, link-local, the metadata service,
 * multicast, broadcast, IPv4-mapped forms included), a name's first answer
 * holds for the whole sign-in (a second answer pointing it at 127.0.0.1
 * is never asked for: no DNS rebinding), and CONNECT goes to port 443 only.
 * A refusal is a 403 whose body says why.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { whyOffLimits } from '../../network/off-limits.js';

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
  /** Why an address may not be reached, or null (tests let their loopback portal through); network/off-limits.ts by default. */
  readonly offLimits?: (address: string) => string | null;
}

const MAX_TUNNELS = 64;

/** HTTPS only through a tunnel: any other port would carry whatever protocol a page chose to a host of the network. */
const TUNNEL_PORT = 443;

/** The request is refused, and `message` says why (the body of the 403 or 502). */
class Refusal extends Error {
  constructor(
    readonly status: 403 | 502,
    message: string,
  ) {
    super(message);
  }
}

export class SignInProxy {
  readonly #opts: SignInProxyOptions;
  readonly #server: http.Server;
  readonly #username = 'signin';
  readonly #password = crypto.randomBytes(18).toString('base64url');
  readonly #seen = new Set<string>();
  /** Each name's first answer, kept for the proxy's life (one sign-in): never looked up twice, so never re-pointed. */
  readonly #answers = new Map<string, Promise<string[]>>();
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

  /** The host's addresses through the network's resolver (an IP literal as itself), the first answer for a name kept. */
  #lookup(host: string): Promise<string[]> {
    const bare = host.replace(/^\[|\]$/g, '');
    if (net.isIP(bare) !== 0) return Promise.resolve([bare]);
    const name = bare.toLowerCase().replace(/\.$/, '');
    if (!this.#seen.has(name)) {
      this.#seen.add(name);
      this.#opts.onHost?.(name);
    }
    let answer = this.#answers.get(name);
    if (!answer) {
      answer = this.#opts.lookup(name);
      this.#answers.set(name, answer);
      // A failure is no answer: the next request asks again (nothing was pinned that could be re-pointed).
      answer.catch(() => {
        if (this.#answers.get(name) === answer) this.#answers.delete(name);
      });
    }
    return answer;
  }

  /** The first address of `host` that is the network's, or a Refusal saying why there is none. */
  async #resolve(host: string): Promise<string> {
    let addresses: string[];
    try {
      addresses = await this.#lookup(host);
    } catch (err) {
      throw new Refusal(502, `${host} did not resolve at the network's resolver: ${(err as Error).message}`);
    }
    const offLimits = this.#opts.offLimits ?? whyOffLimits;
    const reasons: string[] = [];
    for (const a of addresses) {
      const why = offLimits(a);
      if (why === null) return a;
      reasons.push(why);
    }
    const said = reasons.length ? reasons.join('; ') : 'no address';
    throw new Refusal(403, `dotstub's sign-in proxy refused ${host}: ${said}. A sign-in page may reach the network's hosts only, never this machine or its neighbours' link-local services.`);
  }

  #connect(address: string, port: number): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host: address, port });
      const timer = setTimeout(() => s.destroy(new Error(`no answer from ${address}:${port}`)), this.#opts.connectTimeoutMs ?? 5000);
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
    const refuse = (status: 403 | 502, message: string): void => {
      const reason = status === 403 ? 'Forbidden' : 'Bad Gateway';
      client.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(message)}\r\n\r\n${message}`);
    };
    if (port !== TUNNEL_PORT) {
      refuse(403, `dotstub's sign-in proxy refused a tunnel to port ${port}: tunnels go to port ${TUNNEL_PORT} (HTTPS) only; a sign-in page on another port is reached over plain http://.`);
      return;
    }
    let upstream: net.Socket;
    try {
      upstream = await this.#connect(await this.#resolve(m[1]), port);
    } catch (err) {
      if (err instanceof Refusal) refuse(err.status, err.message);
      else refuse(502, `could not connect to ${m[1]}:${port}: ${(err as Error).message}`);
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
    let address: string;
    try {
      address = await this.#resolve(target.hostname);
    } catch (err) {
      const refusal = err instanceof Refusal ? err : new Refusal(502, (err as Error).message);
      res.writeHead(refusal.status, { 'content-type': 'text/plain; charset=utf-8' }).end(refusal.message);
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const out = http.request(
      { host: address, port: Number(target.port || 80), method: req.method, path: `${target.pathname}${target.search}`, headers, agent: false },
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
