/**
 * The proxy's listeners: UDP and TCP on each listen address (one port for
 * both; with port 0, UDP picks it and TCP follows), bound together and
 * closed in the order that loses no query (stop taking TCP connections,
 * let queries drain, stop UDP, close).
 */
import { ConfigError, type DotstubError } from '../errors.js';
import type { ListenAddress, QueryHandler } from './address.js';
import type { ClientShares } from './client-shares.js';
import { TcpListener } from './tcp.js';
import { UdpListener } from './udp.js';

export class Listeners {
  readonly #handler: QueryHandler;
  readonly #shares: ClientShares;
  #udp: UdpListener[] = [];
  #tcp: TcpListener[] = [];
  #bound: ListenAddress[] = [];
  #tcpClosing: Promise<void> | null = null;

  constructor(handler: QueryHandler, shares: ClientShares) {
    this.#handler = handler;
    this.#shares = shares;
  }

  get bound(): readonly ListenAddress[] {
    return this.#bound;
  }

  /** Whether a DNS server at host:port is one of these listeners (a wildcard address serves loopback too). */
  serves(host: string, port: number): boolean {
    const wildcardServes = host.startsWith('127.') || host === '::1';
    return this.#bound.some((a) => a.port === port && (a.host === host || ((a.host === '0.0.0.0' || a.host === '::') && wildcardServes)));
  }

  /**
   * Binds every address; one IPv6 address that this machine lacks is skipped
   * with a warning when there are others (a machine without IPv6 still gets
   * DNS on 127.0.0.1). On failure nothing stays bound.
   */
  async bind(addresses: readonly ListenAddress[], warn: (message: string) => void): Promise<readonly ListenAddress[]> {
    try {
      for (const addr of addresses) {
        try {
          this.#bound.push(await this.#bindPair(addr));
        } catch (err) {
          const code = ((err as DotstubError).cause as NodeJS.ErrnoException | undefined)?.code;
          if (addresses.length > 1 && addr.host.includes(':') && (code === 'EADDRNOTAVAIL' || code === 'EAFNOSUPPORT')) {
            warn(`${(err as Error).message}; continuing without it`);
            continue;
          }
          throw err;
        }
      }
      if (this.#bound.length === 0) throw new ConfigError('no listen address could be bound');
    } catch (err) {
      await this.#closeAll();
      throw err;
    }
    return this.#bound;
  }

  /** Stops taking new TCP connections; queries already received are still answered. */
  stopTcp(): void {
    this.#tcpClosing ??= Promise.all(this.#tcp.map((t) => t.close())).then(() => undefined);
  }

  stopUdp(): void {
    for (const u of this.#udp) u.stopAccepting();
  }

  /** Closes everything (after stopTcp/stopUdp and the drain). */
  async close(): Promise<void> {
    this.stopTcp();
    const tcpClosing = this.#tcpClosing;
    await Promise.all(this.#udp.map((u) => u.close()));
    for (const t of this.#tcp) t.destroyClients();
    await tcpClosing;
    this.#reset();
  }

  async #bindPair(addr: ListenAddress): Promise<ListenAddress> {
    for (let tries = 0; ; tries++) {
      const udp = new UdpListener(addr, this.#handler, this.#shares);
      const bound = await udp.listen();
      const tcp = new TcpListener({ host: addr.host, port: bound.port }, this.#handler, this.#shares);
      try {
        await tcp.listen();
      } catch (err) {
        await udp.close();
        const code = ((err as DotstubError).cause as NodeJS.ErrnoException | undefined)?.code;
        if (addr.port === 0 && tries < 5 && code === 'EADDRINUSE') continue;
        throw err;
      }
      this.#udp.push(udp);
      this.#tcp.push(tcp);
      return bound;
    }
  }

  async #closeAll(): Promise<void> {
    await Promise.all(this.#udp.map((u) => u.close()));
    for (const t of this.#tcp) t.destroyClients();
    await Promise.all(this.#tcp.map((t) => t.close()));
    this.#reset();
  }

  #reset(): void {
    this.#udp = [];
    this.#tcp = [];
    this.#bound = [];
    this.#tcpClosing = null;
  }
}
