/**
 * DNS over UDP on loopback: one datagram in, one datagram out.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { listenError, type ListenAddress, type QueryHandler } from './address.js';

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
