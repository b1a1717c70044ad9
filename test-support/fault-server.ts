/**
 * A fault-injecting DNS-over-TLS server for what unbound won't do on demand:
 * per-name delays (so answers come back out of order), resets with queries
 * in flight, idle closes, wrong certificates, answers with the wrong
 * question. It is a real TLS server on 127.0.0.1, speaking real DNS.
 *
 * Names `q<N>.<anything>` (and `n<N>.test`) answer A 192.0.2.(N % 254 + 1);
 * other names answer A 192.0.2.254; names in `behaviour.blocks` are refused
 * as a filtering resolver does (an EDE, or 0.0.0.0 and ::).
 */
import { createRequire } from 'node:module';
import net from 'node:net';
import tls from 'node:tls';
import dnsPacket from 'dns-packet';
import type { Answer as Rr, DecodedPacket, Question } from 'dns-packet';
import { FrameReader, frame } from '../proxy/dns/framing.js';
import { testPki } from './certs.js';

export interface FaultBehaviour {
  /** Delay before answering a name (lower-cased, no trailing dot), ms. */
  delays: Map<string, number>;
  /**
   * Names the resolver has to look up, ms: as a recursive resolver's cache
   * miss, the first query for one is answered that long after it arrived,
   * any other asked meanwhile (on any connection) together with it, and
   * every one after that at once (cached).
   */
  misses: Map<string, number>;
  /** Answer these names with a different question (must be dropped by the client). */
  wrongQuestion: Set<string>;
  /** Reset the connection (TCP RST) once it has received this many queries, without answering them. Applies to the next connection only. */
  resetAfter: number | undefined;
  /** Close connections idle this long (ms) from the server side. */
  idleCloseMs: number | undefined;
  /** RFC 7828 keepalive timeout to announce in answers, ms (multiple of 100). */
  keepaliveMs: number | undefined;
  /** Don't answer at all (black hole) while true. */
  silent: boolean;
  /**
   * Connections (numbered from 1 in the order accepted) that read queries but
   * answer none from now on, while the others answer: a resolver that never
   * answers them. Its TCP still acknowledges what it is sent; for a path
   * that lost the connection (nothing acknowledged either), `dropPath`.
   */
  silentConnections: Set<number>;
  /**
   * Names answered with unframed bytes instead of an answer (a server or
   * middlebox that lost DNS framing): `garbage` writes text, `tiny` a frame
   * too short to be DNS, `query` a frame holding a query instead of a response.
   */
  desync: Map<string, 'garbage' | 'tiny' | 'query'>;
  /** Names whose queries close the connection at once (a server that rejects them); the count says how many times. */
  killers: Map<string, number>;
  /**
   * A cap on connections at once (dnsdist's setMaxTCPConnectionsPerClient):
   * a TCP connection beyond it is closed as it is accepted, before TLS.
   */
  maxConnections: number | undefined;
  /** Every new connection is closed as it is accepted (a server that has banned this client); the open ones carry on. */
  refuseAll: boolean;
  /** Answer this many queries on a connection, then close it (FIN, dnsdist's setMaxTCPQueriesPerConnection); queries after those are not answered. */
  closeAfterQueries: number | undefined;
  /**
   * Names refused as a filtering resolver refuses them: 'ede' answers
   * NXDOMAIN (with the last label's SOA) and an Extended DNS Error
   * (RFC 8914, as Quad9 does) when the query had an OPT; 'zero-address' answers A 0.0.0.0 or AAAA :: and says
   * nothing else (as most blocklist resolvers do).
   */
  blocks: Map<string, { readonly kind: 'ede'; readonly code: number; readonly text: string } | { readonly kind: 'zero-address' }>;
}

export interface FaultServerOptions {
  /** 'good': signed by the test CA for dns.test; 'impostor': same name, unknown CA. */
  readonly cert?: 'good' | 'impostor';
  readonly port?: number;
}

export interface SeenQuery {
  readonly connection: number;
  readonly id: number;
  readonly name: string;
  /** Length of the DNS message (without the 2-octet frame), to check padding. */
  readonly length: number;
  readonly packet: DecodedPacket;
}

export class FaultServer {
  readonly behaviour: FaultBehaviour = {
    delays: new Map(),
    misses: new Map(),
    wrongQuestion: new Set(),
    resetAfter: undefined,
    idleCloseMs: undefined,
    keepaliveMs: undefined,
    silent: false,
    silentConnections: new Set(),
    desync: new Map(),
    killers: new Map(),
    maxConnections: undefined,
    refuseAll: false,
    closeAfterQueries: undefined,
    blocks: new Map(),
  };
  readonly seen: SeenQuery[] = [];
  /** Tests waiting for a query (whenSeen), checked as each one arrives. */
  readonly #waiters = new Set<{ readonly match: (q: SeenQuery) => boolean; readonly resolve: () => void }>();
  readonly handshakes = { full: 0, resumed: 0 };
  /** Plain TCP server; each connection is wrapped in TLS so the test can reset the raw socket. */
  readonly #server: net.Server;
  readonly #context: tls.SecureContext;
  readonly #sockets = new Map<tls.TLSSocket, net.Socket>();
  /** Accepted connections by number (from 1), for dropPath. */
  readonly #byNumber = new Map<number, { readonly socket: tls.TLSSocket; readonly raw: net.Socket }>();
  /** Every accepted TCP connection, before and after its TLS handshake. */
  readonly #raw = new Set<net.Socket>();
  #connections = 0;
  /** The most TCP connections open at once (accepted, before or after TLS; refused ones not counted). */
  #mostAtOnce = 0;
  /** TCP connections closed as they were accepted (maxConnections, refuseAll). */
  #refused = 0;
  #port = 0;
  /** performance.now() when each missed name's lookup ends (behaviour.misses). */
  readonly #resolvedAt = new Map<string, number>();

  constructor(options: FaultServerOptions = {}) {
    const pki = testPki();
    const impostor = options.cert === 'impostor';
    this.#context = tls.createSecureContext({
      key: impostor ? pki.impostorKey : pki.serverKey,
      cert: impostor ? pki.impostorCert : pki.serverCert,
      minVersion: 'TLSv1.2',
    });
    this.#server = net.createServer((raw) => {
      const cap = this.behaviour.maxConnections;
      if (this.behaviour.refuseAll || (cap !== undefined && this.#raw.size >= cap)) {
        this.#refused++;
        raw.on('error', () => undefined);
        raw.destroy();
        return;
      }
      this.#raw.add(raw);
      this.#mostAtOnce = Math.max(this.#mostAtOnce, this.#raw.size);
      raw.once('close', () => this.#raw.delete(raw));
      raw.on('error', () => undefined);
      const socket = new tls.TLSSocket(raw, { isServer: true, secureContext: this.#context, ALPNProtocols: ['dot'] });
      socket.on('error', () => undefined);
      socket.once('secure', () => this.#onConnection(socket, raw));
    });
  }

  get port(): number {
    return this.#port;
  }
  /** Connections accepted so far. */
  get connections(): number {
    return this.#connections;
  }
  get openSockets(): number {
    return this.#sockets.size;
  }
  /** TCP connections open now, before or after TLS. */
  get tcpConnections(): number {
    return this.#raw.size;
  }
  /** The most TCP connections open at once so far; resetMostAtOnce() starts counting again from those open now. */
  get mostAtOnce(): number {
    return this.#mostAtOnce;
  }
  resetMostAtOnce(): void {
    this.#mostAtOnce = this.#raw.size;
  }
  /** TCP connections closed as they were accepted (behaviour.maxConnections, refuseAll). */
  get refused(): number {
    return this.#refused;
  }

  listen(port = 0): Promise<number> {
    return new Promise((resolve) => {
      this.#server.listen(port, '127.0.0.1', () => {
        this.#port = (this.#server.address() as net.AddressInfo).port;
        resolve(this.#port);
      });
    });
  }

  /** `127.0.0.1:PORT#dns.test`. */
  get resolverArg(): string {
    return `127.0.0.1:${this.#port}#dns.test`;
  }

  /**
   * The path loses connection `n` as a NAT or firewall that forgets it does:
   * from now on nothing sent on it is answered, acknowledged by TCP, or sent
   * back, and nothing says so (no RST, no FIN). The server's socket is put in
   * TCP repair mode (Linux, root: CAP_NET_ADMIN), where its kernel neither
   * acknowledges what arrives nor sends anything, and is never read again.
   * Throws where that is impossible; `dropPathSupport()` says beforehand.
   */
  dropPath(n: number): void {
    const c = this.#byNumber.get(n);
    if (!c) throw new Error(`the fault server has no connection ${n}`);
    const set = sockoptSet();
    if (typeof set === 'string') throw new Error(set);
    c.socket.pause();
    c.raw.pause();
    set(c.raw, IPPROTO_TCP, TCP_REPAIR, 1);
    this.behaviour.silentConnections.add(n);
  }

  /** Resets every open connection now. */
  resetAll(): void {
    for (const raw of this.#sockets.values()) raw.resetAndDestroy();
  }

  /** Stops listening and drops every connection, handshaking or not. */
  async stop(): Promise<void> {
    for (const raw of this.#raw) raw.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /**
   * Resolves once the server has received `count` queries that `match`
   * (counting those already seen); rejects after `timeoutMs`. For a test that
   * must act while queries are in flight, instead of sleeping.
   */
  whenSeen(match: (q: SeenQuery) => boolean, count = 1, timeoutMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      let left = count - this.seen.filter(match).length;
      if (left <= 0) {
        resolve();
        return;
      }
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`the fault server saw ${count - left} of ${count} queries in ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = {
        match,
        resolve: () => {
          if (--left > 0) return;
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          resolve();
        },
      };
      this.#waiters.add(waiter);
    });
  }

  #onConnection(socket: tls.TLSSocket, raw: net.Socket): void {
    const connection = ++this.#connections;
    this.#sockets.set(socket, raw);
    this.#byNumber.set(connection, { socket, raw });
    if (socket.isSessionReused()) this.handshakes.resumed++;
    else this.handshakes.full++;
    const reader = new FrameReader();
    const resetAfter = this.behaviour.resetAfter;
    this.behaviour.resetAfter = undefined;
    let received = 0;
    let answered = 0;
    const closeAfter = this.behaviour.closeAfterQueries;
    let inFlight = 0;
    let idleTimer: NodeJS.Timeout | undefined;
    const armIdle = (): void => {
      clearTimeout(idleTimer);
      const ms = this.behaviour.idleCloseMs;
      if (ms !== undefined && inFlight === 0) idleTimer = setTimeout(() => socket.end(), ms);
    };
    armIdle();
    socket.on('close', () => {
      clearTimeout(idleTimer);
      this.#sockets.delete(socket);
    });
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      for (const msg of reader.push(chunk)) {
        clearTimeout(idleTimer);
        received++;
        let packet: DecodedPacket;
        try {
          packet = dnsPacket.decode(msg);
        } catch {
          continue;
        }
        const q = packet.questions?.[0];
        const name = (q?.name ?? '').toLowerCase().replace(/\.$/, '');
        const seenQuery = { connection, id: packet.id ?? 0, name, length: msg.length, packet };
        this.seen.push(seenQuery);
        for (const w of this.#waiters) if (w.match(seenQuery)) w.resolve();
        if (resetAfter !== undefined && received >= resetAfter) {
          raw.resetAndDestroy();
          return;
        }
        // Past its query limit: read, never answered; the connection closes after the last one it takes.
        if (closeAfter !== undefined && received > closeAfter) continue;
        if (resetAfter !== undefined || this.behaviour.silent || this.behaviour.silentConnections.has(connection) || !q) continue;
        const killsLeft = this.behaviour.killers.get(name);
        if (killsLeft !== undefined && killsLeft > 0) {
          this.behaviour.killers.set(name, killsLeft - 1);
          socket.destroy();
          return;
        }
        const desync = this.behaviour.desync.get(name);
        if (desync) {
          if (desync === 'garbage') socket.write('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
          else if (desync === 'tiny') socket.write(Buffer.from([0, 3, 1, 2, 3]));
          else socket.write(frame(msg));
          continue;
        }
        inFlight++;
        const delay = this.behaviour.delays.get(name) ?? this.#missDelay(name);
        const send = (): void => {
          inFlight--;
          if (!socket.destroyed) socket.write(frame(this.#answer(packet, q, name)));
          if (closeAfter !== undefined && ++answered >= closeAfter) {
            socket.end();
            return;
          }
          armIdle();
        };
        if (delay > 0) setTimeout(send, delay);
        else send();
      }
    });
  }

  /** How long a query for `name` waits for the resolver's own lookup (behaviour.misses), ms. */
  #missDelay(name: string): number {
    const lookupMs = this.behaviour.misses.get(name);
    if (lookupMs === undefined) return 0;
    const now = performance.now();
    let at = this.#resolvedAt.get(name);
    if (at === undefined) {
      at = now + lookupMs;
      this.#resolvedAt.set(name, at);
    }
    return Math.max(0, at - now);
  }

  #answer(query: DecodedPacket, q: Question, name: string): Buffer {
    const m = /^[qn](\d+)\./.exec(`${name}.`);
    const address = m ? `192.0.2.${(Number(m[1]) % 254) + 1}` : '192.0.2.254';
    const question = this.behaviour.wrongQuestion.has(name) ? { ...q, name: `not-${q.name}` } : q;
    const additionals: Rr[] = [];
    const block = this.behaviour.blocks.get(name);
    const options: { code: number; data?: Buffer; timeout?: number }[] = [];
    if (this.behaviour.keepaliveMs !== undefined) options.push({ code: 11, timeout: Math.round(this.behaviour.keepaliveMs / 100) });
    if (block?.kind === 'ede') {
      const text = Buffer.from(block.text, 'utf8');
      const data = Buffer.alloc(2 + text.length);
      data.writeUInt16BE(block.code, 0);
      text.copy(data, 2);
      options.push({ code: 15, data });
    }
    if (query.additionals?.some((r) => r.type === 'OPT')) {
      additionals.push({
        type: 'OPT',
        name: '.',
        udpPayloadSize: 1232,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: 0,
        flag_do: false,
        options: options as never,
      });
    }
    const answers: Rr[] =
      block?.kind === 'ede'
        ? []
        : block?.kind === 'zero-address'
          ? q.type === 'A'
            ? [{ type: 'A', name: q.name, ttl: 60, data: '0.0.0.0' }]
            : q.type === 'AAAA'
              ? [{ type: 'AAAA', name: q.name, ttl: 60, data: '::' }]
              : []
          : q.type === 'A'
            ? [{ type: 'A', name: q.name, ttl: 60, data: address }]
            : [];
    return dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (block?.kind === 'ede' ? 3 : 0),
      questions: [question],
      answers,
      // A negative answer with its zone's SOA (RFC 2308), so it can be cached as a filtering resolver's is.
      ...(block?.kind === 'ede'
        ? { authorities: [{ type: 'SOA', name: q.name.split('.').slice(-1)[0] ?? '.', ttl: 60, data: { mname: 'ns.lab', rname: 'hostmaster.lab', serial: 1, refresh: 3600, retry: 600, expiration: 86400, minimum: 60 } } as Rr] }
        : {}),
      additionals,
    });
  }
}

const IPPROTO_TCP = 6;
/** <netinet/tcp.h>: a socket in repair mode sends nothing and acknowledges nothing. */
const TCP_REPAIR = 19;

type SetSockOpt = (socket: net.Socket, level: number, name: number, value: number) => void;

/** The optional addon's setsockopt, or why it can't be had. */
function sockoptSet(): SetSockOpt | string {
  if (process.platform !== 'linux') return `dropping a path needs Linux's TCP repair mode (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'dropping a path needs root (TCP repair mode needs CAP_NET_ADMIN)';
  try {
    return (createRequire(import.meta.url)('sockopt') as { setsockopt: SetSockOpt }).setsockopt;
  } catch {
    return 'dropping a path needs the sockopt addon (npm ci builds it where a compiler is present)';
  }
}

/** Null when `dropPath` works here, else why not (a test's skip reason). */
export function dropPathSupport(): string | null {
  const set = sockoptSet();
  return typeof set === 'string' ? set : null;
}

/** Starts a fault server on 127.0.0.1:0. */
export async function startFaultServer(options: FaultServerOptions = {}): Promise<FaultServer> {
  const server = new FaultServer(options);
  await server.listen(options.port ?? 0);
  return server;
}
