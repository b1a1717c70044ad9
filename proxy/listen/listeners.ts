/**
 * Where the machine's DNS comes in: UDP and TCP on loopback.
 *
 * TCP follows RFC 7766: a client may pipeline queries on one connection and
 * gets each answer as soon as it is ready, in whatever order (§6.2.1.1).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { ConfigError, ListenError } from '../errors.js';
import { FrameReader } from '../dns/framing.js';
import type { Transport } from '../engine/query-record.js';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

export type QueryHandler = (raw: Buffer, transport: Transport, reply: (answer: Buffer) => void) => void;

export const DEFAULT_LISTEN: readonly ListenAddress[] = [
  { host: '127.0.0.1', port: 53 },
  { host: '::1', port: 53 },
];

/** TCP clients idle this long with nothing outstanding are closed (RFC 7766 §6.2.3). */
const TCP_IDLE_MS = 30_000;
/** Queries one TCP client may have outstanding before we stop reading from it. */
const TCP_PIPELINE_LIMIT = 256;

/** Parses `127.0.0.1:5300`, `[::1]:5300`, `::1` or `:5300` (both loopbacks). */
export function parseListenArg(arg: string): ListenAddress[] {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(arg);
  let host: string;
  let portText: string | undefined;
  if (m) {
    host = m[1] as string;
    portText = m[2];
  } else if (net.isIPv6(arg)) {
    host = arg;
  } else {
    const idx = arg.lastIndexOf(':');
    host = idx >= 0 ? arg.slice(0, idx) : arg;
    portText = idx >= 0 ? arg.slice(idx + 1) : undefined;
  }
  const port = portText === undefined ? 53 : Number(portText);
  if (portText !== undefined && (!/^\d{1,5}$/.test(portText) || port > 65535)) {
    throw new ConfigError(`--listen ${arg}: port must be a number from 0 to 65535`);
  }
  if (host === '') return DEFAULT_LISTEN.map((a) => ({ host: a.host, port }));
  if (net.isIP(host) === 0) throw new ConfigError(`--listen ${arg}: "${host}" is not an IP address (e.g. 127.0.0.1:5300 or [::1]:5300)`);
  return [{ host, port }];
}

function listenError(err: NodeJS.ErrnoException, addr: ListenAddress, transport: Transport): ListenError {
  const where = `${addr.host.includes(':') ? `[${addr.host}]` : addr.host}:${addr.port}/${transport}`;
  if (err.code === 'EACCES' && addr.port < 1024) {
    return new ListenError(
      `cannot listen on ${where}: ports below 1024 need root or CAP_NET_BIND_SERVICE. ` +
        'Run unprivileged on a high port with `dotstub --listen 127.0.0.1:5300`, ' +
        'or grant the capability: `sudo setcap cap_net_bind_service=+ep "$(command -v node)"`.',
      addr.host,
      addr.port,
      { cause: err },
    );
  }
  if (err.code === 'EADDRINUSE') {
    return new ListenError(
      `cannot listen on ${where}: another program is using it (often systemd-resolved, dnsmasq or another stub). ` +
        'Stop it, or choose another port with --listen 127.0.0.1:5300.',
      addr.host,
      addr.port,
      { cause: err },
    );
  }
  if (err.code === 'EADDRNOTAVAIL') {
    return new ListenError(`cannot listen on ${where}: this machine has no such address`, addr.host, addr.port, { cause: err });
  }
  return new ListenError(`cannot listen on ${where}: ${err.code ?? err.message}`, addr.host, addr.port, { cause: err });
}

export class UdpListener {
  readonly address: ListenAddress;
  readonly #socket: dgram.Socket;
  #bound: ListenAddress | undefined;
  #accepting = true;
  #closed = false;

  constructor(address: ListenAddress, handler: QueryHandler) {
    this.address = address;
    const v6 = net.isIPv6(address.host);
    // Replies go to IP literals: resolve them synchronously instead of through
    // dns.lookup's nextTick, and send without a callback so Node can take its
    // synchronous uv_udp_try_send path.
    const lookup = (host: string, _opts: unknown, cb: (err: null, address: string, family: number) => void): void =>
      cb(null, host, v6 ? 6 : 4);
    this.#socket = dgram.createSocket(v6 ? { type: 'udp6', ipv6Only: true, lookup } : { type: 'udp4', lookup });
    this.#socket.on('message', (msg, rinfo) => {
      if (!this.#accepting) return;
      handler(msg, 'udp', (answer) => {
        if (!this.#closed) this.#socket.send(answer, rinfo.port, rinfo.address);
      });
    });
    // A send to a client that went away yields ICMP errors; they must never stop the listener.
    this.#socket.on('error', () => undefined);
  }

  listen(): Promise<ListenAddress> {
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => reject(listenError(err, this.address, 'udp'));
      this.#socket.once('error', onError);
      this.#socket.bind(this.address.port, this.address.host, () => {
        this.#socket.off('error', onError);
        try {
          // Bursts from a busy machine (or dnsperf) must not overflow the default buffer.
          this.#socket.setRecvBufferSize(4 * 1024 * 1024);
          this.#socket.setSendBufferSize(4 * 1024 * 1024);
        } catch {
          // Capped by net.core.rmem_max; the default still works.
        }
        const a = this.#socket.address();
        this.#bound = { host: a.address, port: a.port };
        resolve(this.#bound);
      });
    });
  }

  get bound(): ListenAddress | undefined {
    return this.#bound;
  }

  /** Stops taking new queries; answers to queries already taken still go out. */
  stopAccepting(): void {
    this.#accepting = false;
  }

  close(): Promise<void> {
    this.#accepting = false;
    this.#closed = true;
    return new Promise((resolve) => {
      try {
        this.#socket.close(() => resolve());
      } catch {
        resolve();
      }
    });
  }
}

export class TcpListener {
  readonly address: ListenAddress;
  readonly #server: net.Server;
  readonly #clients = new Set<net.Socket>();
  /** Outstanding queries per client socket. */
  readonly #outstanding = new WeakMap<net.Socket, number>();
  #bound: ListenAddress | undefined;
  #closing = false;

  constructor(address: ListenAddress, handler: QueryHandler) {
    this.address = address;
    this.#server = net.createServer({ noDelay: true }, (socket) => this.#onClient(socket, handler));
  }

  #onClient(socket: net.Socket, handler: QueryHandler): void {
    this.#clients.add(socket);
    this.#outstanding.set(socket, 0);
    const reader = new FrameReader();
    socket.setTimeout(TCP_IDLE_MS);
    socket.on('timeout', () => {
      if ((this.#outstanding.get(socket) ?? 0) === 0) socket.end();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.#clients.delete(socket));
    socket.on('data', (chunk: Buffer) => {
      let messages: Buffer[];
      try {
        messages = reader.push(chunk);
      } catch {
        socket.destroy();
        return;
      }
      for (const msg of messages) {
        this.#outstanding.set(socket, (this.#outstanding.get(socket) ?? 0) + 1);
        if ((this.#outstanding.get(socket) ?? 0) >= TCP_PIPELINE_LIMIT) socket.pause();
        handler(msg, 'tcp', (answer) => {
          const left = (this.#outstanding.get(socket) ?? 1) - 1;
          this.#outstanding.set(socket, left);
          if (socket.destroyed) return;
          const out = Buffer.allocUnsafe(answer.length + 2);
          out.writeUInt16BE(answer.length, 0);
          answer.copy(out, 2);
          socket.write(out);
          if (socket.isPaused() && left < TCP_PIPELINE_LIMIT / 2) socket.resume();
          if (this.#closing && left === 0) socket.end();
        });
      }
    });
  }

  listen(): Promise<ListenAddress> {
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => reject(listenError(err, this.address, 'tcp'));
      this.#server.once('error', onError);
      this.#server.listen({ port: this.address.port, host: this.address.host, ipv6Only: net.isIPv6(this.address.host) }, () => {
        this.#server.off('error', onError);
        const a = this.#server.address() as net.AddressInfo;
        this.#bound = { host: a.address, port: a.port };
        resolve(this.#bound);
      });
    });
  }

  get bound(): ListenAddress | undefined {
    return this.#bound;
  }

  /** Stops accepting; idle clients are closed now, busy ones after their last answer. */
  close(): Promise<void> {
    this.#closing = true;
    for (const s of this.#clients) if ((this.#outstanding.get(s) ?? 0) === 0) s.end();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  /** Drops every client connection (after the engine has answered everything). */
  destroyClients(): void {
    for (const s of this.#clients) s.destroy();
  }
}
