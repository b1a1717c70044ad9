/**
 * DNS over TCP on loopback (RFC 7766): a client may pipeline queries on one
 * connection and gets each answer as soon as it is ready, in whatever order
 * (§6.2.1.1).
 */
import net from 'node:net';
import { frame, FrameReader } from '../dns/framing.js';
import { listenError, type ListenAddress, type QueryHandler } from './address.js';

/** TCP clients idle this long with nothing outstanding are closed (RFC 7766 §6.2.3). */
const TCP_IDLE_MS = 30_000;
/** Queries one TCP client may have outstanding before we stop reading from it. */
const TCP_PIPELINE_LIMIT = 256;

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
          socket.write(frame(answer));
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
