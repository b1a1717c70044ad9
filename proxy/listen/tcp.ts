/**
 * DNS over TCP on loopback (RFC 7766): a client may pipeline queries on one
 * connection and gets each answer as soon as it is ready, in whatever order
 * (§6.2.1.1).
 *
 * Per connection:
 *
 *   socket ─► frames ─► backlog ─(within the client's share)─► handler ─► reply ─► socket
 *
 * Reading pauses while the backlog holds anything (the client is beyond its
 * share of the proxy) or while the client is not reading our answers; it
 * resumes as answers go out. Only messages the handler will answer count as
 * outstanding, so a paused connection always has an answer coming that
 * resumes it.
 *
 * A connection ends (after every outstanding answer is written) when the
 * client sends FIN (§6.2.3), when it sends a message that gets no reply (the
 * stream cannot be trusted to be in step), when it has been idle for
 * TCP_IDLE_MS, when the listener closes, or, if it is the longest idle, when
 * MAX_TCP_CLIENTS others are connected.
 */
import net from 'node:net';
import { frame, FrameReader } from '../dns/framing.js';
import { listenError, type ListenAddress, type QueryHandler } from './address.js';
import { ClientShare, ClientShares } from './client-shares.js';

/** Idle clients are closed after this long (RFC 7766 §6.2.3: "of the order of seconds"). */
const TCP_IDLE_MS = 10_000;
/** Queries one TCP connection may have outstanding, whatever its share. */
const TCP_PIPELINE_LIMIT = 256;
/** Client connections kept at once; beyond it the longest idle is closed, or the newcomer if none is idle. */
const MAX_TCP_CLIENTS = 512;
/** Answers buffered for a client that isn't reading before we stop reading its queries. */
const WRITE_HIGH_WATER = 64 * 1024;

export interface TcpListenerOptions {
  readonly idleMs?: number;
  readonly maxClients?: number;
}

class TcpClient extends ClientShare {
  readonly socket: net.Socket;
  readonly reader = new FrameReader();
  /** Messages read and not yet handed to the handler, in order, from `head` on; waiting ones only while reading is paused. */
  backlog: Buffer[] = [];
  head = 0;
  /** No more queries are taken: FIN received, a message got no reply, or the listener is closing. */
  ending = false;
  /** Inside pump(): replies made synchronously by the handler must not re-enter it. */
  pumping = false;
  /** performance.now() of the last query read or answer written. */
  lastActive = performance.now();

  constructor(socket: net.Socket) {
    super();
    this.socket = socket;
  }

  get waiting(): number {
    return this.backlog.length - this.head;
  }

  next(): Buffer {
    const msg = this.backlog[this.head++] as Buffer;
    if (this.head === this.backlog.length) this.clear();
    return msg;
  }

  clear(): void {
    this.backlog = [];
    this.head = 0;
  }

  /** Nothing outstanding, nothing waiting, nothing unwritten. */
  get idle(): boolean {
    return this.outstanding === 0 && this.waiting === 0 && this.socket.writableLength === 0;
  }
}

export class TcpListener {
  readonly address: ListenAddress;
  readonly #server: net.Server;
  readonly #handler: QueryHandler;
  readonly #shares: ClientShares;
  readonly #idleMs: number;
  readonly #maxClients: number;
  /** Open client connections, oldest first. */
  readonly #clients = new Set<TcpClient>();
  #bound: ListenAddress | undefined;
  #closing = false;

  constructor(address: ListenAddress, handler: QueryHandler, shares: ClientShares, options: TcpListenerOptions = {}) {
    this.address = address;
    this.#handler = handler;
    this.#shares = shares;
    this.#idleMs = options.idleMs ?? TCP_IDLE_MS;
    this.#maxClients = options.maxClients ?? MAX_TCP_CLIENTS;
    // allowHalfOpen: on the client's FIN we still owe it the answers to what it sent.
    this.#server = net.createServer({ noDelay: true, allowHalfOpen: true }, (socket) => this.#onClient(socket));
  }

  /** Client connections open now. */
  get clientCount(): number {
    return this.#clients.size;
  }

  #onClient(socket: net.Socket): void {
    if (this.#closing) {
      socket.destroy();
      return;
    }
    if (this.#clients.size >= this.#maxClients && !this.#evictIdlest()) {
      socket.destroy();
      return;
    }
    const client = new TcpClient(socket);
    this.#clients.add(client);
    socket.setTimeout(this.#idleMs);
    socket.on('timeout', () => {
      // With queries outstanding an answer is coming (the engine answers within its deadline) and re-arms the timer.
      if (client.outstanding === 0 && client.waiting === 0) socket.destroy();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.#clients.delete(client);
      // Answers still coming go nowhere; their slots are given back as they arrive.
      client.clear();
    });
    socket.on('end', () => {
      client.ending = true;
      this.#pump(client);
    });
    socket.on('drain', () => this.#pump(client));
    socket.on('data', (chunk: Buffer) => {
      let messages: Buffer[];
      try {
        messages = client.reader.push(chunk);
      } catch {
        socket.destroy();
        return;
      }
      if (client.ending) return;
      client.lastActive = performance.now();
      for (const m of messages) client.backlog.push(m);
      this.#pump(client);
    });
  }

  /** Hands waiting messages to the handler within the client's share; pauses or resumes reading; ends a finished client. */
  #pump(client: TcpClient): void {
    if (client.pumping) return;
    client.pumping = true;
    const socket = client.socket;
    while (client.waiting > 0 && !socket.destroyed) {
      if (client.outstanding >= TCP_PIPELINE_LIMIT || !this.#shares.tryTake(client)) break;
      if (!this.#dispatch(client, client.next())) {
        // No reply will come: the stream is not DNS we can answer. Answer what came before, then close.
        this.#shares.release(client);
        client.clear();
        client.ending = true;
      }
    }
    client.pumping = false;
    if (socket.destroyed) return;
    if (client.ending) {
      socket.pause();
      // Flushed to the kernel, the fd is released at once; no wait for the client's FIN.
      if (client.outstanding === 0 && client.waiting === 0 && socket.writable) socket.end(() => socket.destroy());
    } else if (client.waiting > 0 || socket.writableLength > WRITE_HIGH_WATER) {
      socket.pause();
    } else if (socket.isPaused()) {
      socket.resume();
    }
  }

  /** Whether a reply will come; the slot is released by the reply (or by the caller when none will). */
  #dispatch(client: TcpClient, msg: Buffer): boolean {
    let replied = false;
    return this.#handler(msg, 'tcp', (answer) => {
      if (replied) return;
      replied = true;
      this.#shares.release(client);
      const socket = client.socket;
      if (socket.destroyed || !socket.writable) return;
      client.lastActive = performance.now();
      socket.write(frame(answer));
      this.#pump(client);
    });
  }

  /** Closes the idle client that has been quiet longest; false if none is idle. */
  #evictIdlest(): boolean {
    let idlest: TcpClient | undefined;
    for (const c of this.#clients) {
      if (c.idle && (!idlest || c.lastActive < idlest.lastActive)) idlest = c;
    }
    if (!idlest) return false;
    idlest.socket.destroy();
    this.#clients.delete(idlest);
    return true;
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

  /** Stops accepting and reading; every client is closed once its outstanding queries are answered. */
  close(): Promise<void> {
    this.#closing = true;
    for (const c of this.#clients) {
      c.ending = true;
      this.#pump(c);
    }
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  /** Drops every client connection (after the engine has answered everything). */
  destroyClients(): void {
    for (const c of this.#clients) c.socket.destroy();
  }
}
