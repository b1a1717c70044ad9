/**
 * Noticing that the network changed under us (issue 8): a new default route,
 * an address that came or went, or a resume from sleep (a timer that fires
 * far too late). Connections opened on the old path can't be trusted to
 * have survived; the proxy drops them, reconnects at once and re-runs the
 * ladder. Linux reads `/proc/net/route` and `/proc/net/ipv6_route`; every
 * platform gets the interface addresses from os.networkInterfaces(). Cheap
 * polling (every 2 s), no native module.
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';

type NetworkChangeReason = 'route' | 'address' | 'resume';

export interface NetworkChange {
  readonly reason: NetworkChangeReason;
  /** For people: "the default route changed", "this machine woke from sleep (12 s late)". */
  readonly sentence: string;
}

export interface WatchSources {
  /** The default routes, as text to compare (interface and gateway). */
  defaultRoutes(): string;
  /** The machine's non-internal addresses, as text to compare. */
  addresses(): string;
}

/** Linux's /proc, and os.networkInterfaces() everywhere. */
export const systemSources: WatchSources = {
  defaultRoutes(): string {
    const lines: string[] = [];
    try {
      // Iface Destination Gateway Flags ...: the default route has destination 00000000.
      for (const l of fs.readFileSync('/proc/net/route', 'utf8').split('\n').slice(1)) {
        const f = l.trim().split(/\s+/);
        if (f[1] === '00000000') lines.push(`${f[0]} via ${f[2]}`);
      }
    } catch {
      // not Linux, or no /proc: addresses alone tell us
    }
    try {
      for (const l of fs.readFileSync('/proc/net/ipv6_route', 'utf8').split('\n')) {
        const f = l.trim().split(/\s+/);
        if (f[0] === '00000000000000000000000000000000' && f[1] === '00' && f[4] !== '00000000000000000000000000000000') lines.push(`${f[9]} via ${f[4]}`);
      }
    } catch {
      // no IPv6 routes to read
    }
    return lines.sort().join(',');
  },
  addresses(): string {
    const out: string[] = [];
    for (const [name, list] of Object.entries(os.networkInterfaces())) {
      for (const a of list ?? []) if (!a.internal) out.push(`${name}=${a.address}`);
    }
    return out.sort().join(',');
  },
};

export interface NetworkWatchOptions {
  readonly intervalMs: number;
  /** A tick this much later than planned means the machine slept. */
  readonly lateMs: number;
}

export class NetworkWatch extends EventEmitter<{ change: [NetworkChange] }> {
  readonly #sources: WatchSources;
  readonly #opts: NetworkWatchOptions;
  readonly #now: () => number;
  #routes = '';
  #addresses = '';
  #expectedAt = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(sources: WatchSources = systemSources, opts: NetworkWatchOptions = { intervalMs: 2_000, lateMs: 10_000 }, now: () => number = Date.now) {
    super();
    this.#sources = sources;
    this.#opts = opts;
    this.#now = now;
  }

  start(): void {
    if (this.#timer) return;
    this.#routes = this.#sources.defaultRoutes();
    this.#addresses = this.#sources.addresses();
    this.#schedule();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** One look at the network now (the timer calls it; tests may too). */
  check(): void {
    const late = this.#now() - this.#expectedAt;
    const routes = this.#sources.defaultRoutes();
    const addresses = this.#sources.addresses();
    let change: NetworkChange | undefined;
    if (late > this.#opts.lateMs) change = { reason: 'resume', sentence: `this machine woke from sleep (a ${Math.round(late / 1000)} s gap)` };
    else if (routes !== this.#routes) change = { reason: 'route', sentence: routes ? 'the default route changed' : 'the default route went away' };
    else if (addresses !== this.#addresses) change = { reason: 'address', sentence: "this machine's network addresses changed" };
    this.#routes = routes;
    this.#addresses = addresses;
    if (change) this.emit('change', change);
  }

  #schedule(): void {
    this.#expectedAt = this.#now() + this.#opts.intervalMs;
    this.#timer = setTimeout(() => {
      this.check();
      if (this.#timer) this.#schedule();
    }, this.#opts.intervalMs);
    this.#timer.unref();
  }
}
