/**
 * DNS over UDP on loopback: one datagram in, one datagram out.
 *
 * A datagram whose header cannot be a query (screenQueryHeader) goes straight
 * to the handler's cheap reject path, with no per-client bookkeeping. A
 * plausible query takes a slot of its client's share (a client is a source
 * address and port); beyond the share it gets an empty TC answer at once:
 * the client retries over TCP, where backpressure paces it instead of loss
 * (RFC 7766 §5; the "slip" of response rate limiting). Dropping would leave a
 * real stub waiting 1-5 s before its retry, REFUSED would make it give up
 * (or move to the next server); both lose what a TC only delays.
 *
 * FORMERR and NOTIMP made here (for malformed datagrams) are limited to
 * ERROR_REPLIES_PER_SECOND per listener; beyond it malformed datagrams are
 * dropped. A flood of garbage would otherwise cost one send per datagram,
 * the largest part of its cost; a working client never sends any.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { parseClientQuery, plausibleQuery } from '../dns/client-query.js';
import { truncatedReply } from '../dns/local-reply.js';
import { listenError, type ListenAddress, type QueryHandler } from './address.js';
import { ClientShare, type ClientShares } from './client-shares.js';

/** What we ask the kernel for; it grants at most net.core.rmem_max (and reports double, for its bookkeeping). */
export const UDP_BUFFER_BYTES = 4 * 1024 * 1024;
/** Local FORMERR/NOTIMP answers per second (and burst) per listener. */
export const ERROR_REPLIES_PER_SECOND = 1000;

const RCODE_FORMERR = 1;
const RCODE_NOTIMP = 4;

/** A token bucket: `rate` tokens a second, at most `rate` held. */
class Budget {
  readonly #rate: number;
  #tokens: number;
  #at = performance.now();

  constructor(rate: number) {
    this.#rate = rate;
    this.#tokens = rate;
  }

  take(): boolean {
    const now = performance.now();
    this.#tokens = Math.min(this.#rate, this.#tokens + ((now - this.#at) * this.#rate) / 1000);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens--;
    return true;
  }
}

/** Idle clients (nothing outstanding) kept for reuse before they are swept out. */
const IDLE_CLIENTS_KEPT = 256;

/** A UDP client: a source address and port, and its share. */
class UdpClient extends ClientShare {
  constructor(
    readonly address: string,
    readonly port: number,
  ) {
    super();
  }
}

/**
 * A client's address and port as a small integer (FNV-1a), so that no key
 * string is built per datagram; clients whose keys collide are told apart
 * by their address and port (UdpListener.#clientFor).
 */
function clientKey(address: string, port: number): number {
  let h = 0x811c9dc5 ^ port;
  for (let i = 0; i < address.length; i++) {
    h ^= address.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h & 0x3fffffff;
}

/** FORMERR or NOTIMP in the header (RFC 1035 §4.1.1). */
function isLocalError(answer: Buffer): boolean {
  const rcode = answer.length >= 4 ? (answer[3] as number) & 0xf : 0;
  return rcode === RCODE_FORMERR || rcode === RCODE_NOTIMP;
}

export class UdpListener {
  readonly address: ListenAddress;
  readonly #socket: dgram.Socket;
  readonly #shares: ClientShares;
  /**
   * Clients by clientKey(); one with nothing outstanding stays (a client
   * usually asks again) until more than IDLE_CLIENTS_KEPT such gather, when
   * they are swept out together: no map churn per query. A client whose key
   * is taken by another address is kept in #collided, by "address port".
   */
  readonly #clients = new Map<number, UdpClient>();
  readonly #collided = new Map<string, UdpClient>();
  #idle = 0;
  #bound: ListenAddress | undefined;
  #accepting = true;
  #closed = false;
  #shed = 0;
  #errorsDropped = 0;
  readonly #errorBudget = new Budget(ERROR_REPLIES_PER_SECOND);

  constructor(address: ListenAddress, handler: QueryHandler, shares: ClientShares) {
    this.address = address;
    this.#shares = shares;
    const v6 = net.isIPv6(address.host);
    // Replies go to IP literals: resolve them synchronously instead of through
    // dns.lookup's nextTick, and send without a callback so Node can take its
    // synchronous uv_udp_try_send path.
    const lookup = (host: string, _opts: unknown, cb: (err: null, address: string, family: number) => void): void =>
      cb(null, host, v6 ? 6 : 4);
    this.#socket = dgram.createSocket(v6 ? { type: 'udp6', ipv6Only: true, lookup } : { type: 'udp4', lookup });
    this.#socket.on('message', (msg, rinfo) => {
      if (!this.#accepting) return;
      if (!plausibleQuery(msg)) {
        handler(msg, 'udp', (answer) => {
          if (this.#errorBudget.take()) this.#send(answer, rinfo.port, rinfo.address);
          else this.#errorsDropped++;
        });
        return;
      }
      const client = this.#clientFor(rinfo.address, rinfo.port);
      if (client.outstanding === 0) this.#idle--;
      if (!this.#shares.tryTake(client)) {
        if (client.outstanding === 0) this.#idle++;
        this.#shed++;
        const parsed = parseClientQuery(msg, 'udp');
        const reply = parsed.ok ? truncatedReply(parsed.query) : parsed.reply;
        if (reply) this.#send(reply, rinfo.port, rinfo.address);
        return;
      }
      let replied = false;
      // Answers given while the handler runs are made locally; only upstream answers come later.
      let synchronous = true;
      const willReply = handler(msg, 'udp', (answer) => {
        if (replied) return;
        replied = true;
        this.#release(client);
        if (synchronous && isLocalError(answer) && !this.#errorBudget.take()) {
          this.#errorsDropped++;
          return;
        }
        this.#send(answer, client.port, client.address);
      });
      synchronous = false;
      if (!willReply) this.#release(client);
    });
    // A send to a client that went away yields ICMP errors; they must never stop the listener.
    this.#socket.on('error', () => undefined);
  }

  #clientFor(address: string, port: number): UdpClient {
    const key = clientKey(address, port);
    let client = this.#clients.get(key);
    if (client && (client.port !== port || client.address !== address)) {
      const name = `${address} ${port}`;
      client = this.#collided.get(name);
      if (!client) {
        client = new UdpClient(address, port);
        this.#collided.set(name, client);
        this.#idle++;
      }
      return client;
    }
    if (!client) {
      client = new UdpClient(address, port);
      this.#clients.set(key, client);
      this.#idle++;
    }
    return client;
  }

  #release(client: UdpClient): void {
    this.#shares.release(client);
    if (client.outstanding > 0) return;
    if (++this.#idle > IDLE_CLIENTS_KEPT) this.#sweep();
  }

  /** Forgets every client with nothing outstanding. */
  #sweep(): void {
    for (const [key, c] of this.#clients) if (c.outstanding === 0) this.#clients.delete(key);
    for (const [name, c] of this.#collided) if (c.outstanding === 0) this.#collided.delete(name);
    this.#idle = 0;
  }

  /** Clients remembered now (bounded: those with queries outstanding, and at most IDLE_CLIENTS_KEPT others). */
  get clients(): number {
    return this.#clients.size + this.#collided.size;
  }

  #send(answer: Buffer, port: number, address: string): void {
    if (!this.#closed) this.#socket.send(answer, port, address);
  }

  listen(): Promise<ListenAddress> {
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => reject(listenError(err, this.address, 'udp'));
      this.#socket.once('error', onError);
      this.#socket.bind(this.address.port, this.address.host, () => {
        this.#socket.off('error', onError);
        try {
          // Bursts from a busy machine (or dnsperf, or a flood) must not overflow the default buffer.
          this.#socket.setRecvBufferSize(UDP_BUFFER_BYTES);
          this.#socket.setSendBufferSize(UDP_BUFFER_BYTES);
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

  /** The receive buffer the kernel granted, in bytes (Linux reports twice what it lets data use). */
  get receiveBufferBytes(): number {
    return this.#socket.getRecvBufferSize();
  }

  /** Error answers not sent because the error budget was spent. */
  get errorsDropped(): number {
    return this.#errorsDropped;
  }

  /** Queries answered TC because their client was beyond its share. */
  get shed(): number {
    return this.#shed;
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
