/**
 * Noticing that the network changed under us (issue 8): a new default route,
 * an address that came or went, or a resume from sleep. Connections opened
 * on the old path can't be trusted to have survived; the proxy drops them,
 * reconnects at once and re-runs the ladder.
 *
 * Idle means idle (issue 23): on Linux the kernel says when routes or
 * addresses change (`ip -o monitor route address`, a child that sleeps until
 * rtnetlink has news; killed with us through PR_SET_PDEATHSIG via `setpriv`),
 * and only then are `/proc/net/route`, `/proc/net/ipv6_route` and the
 * interface addresses read and compared. A resume from sleep shows as the
 * wall clock running ahead of the monotonic one (CLOCK_MONOTONIC stops while
 * the machine sleeps), checked on every kernel event (a wake-up brings link
 * and address changes at once) and by one slow timer (`clockCheckMs`, once a
 * minute). Where there is no `ip` (not Linux, a minimal system), it polls
 * every `intervalMs` as before.
 */
import { spawn, type ChildProcess } from 'node:child_process';
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
  /**
   * Calls `onEvent` whenever the kernel reports a route or address change;
   * returns the function that stops it, or null when this system can't tell
   * (then the watch polls). `onGone`: the notifications stopped by themselves.
   */
  subscribe?(onEvent: () => void, onGone: () => void): (() => void) | null;
}

const IP = '/usr/sbin/ip';
const SETPRIV = '/usr/bin/setpriv';

/** `ip -o monitor route address`, one line per change; dies with us (setpriv --pdeathsig) where setpriv exists. */
function kernelEvents(onEvent: () => void, onGone: () => void): (() => void) | null {
  if (process.platform !== 'linux' || !fs.existsSync(IP)) return null;
  const monitor = [IP, '-o', 'monitor', 'route', 'address'];
  const argv = fs.existsSync(SETPRIV) ? [SETPRIV, '--pdeathsig', 'KILL', ...monitor] : monitor;
  let child: ChildProcess;
  try {
    child = spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
  let stopped = false;
  child.stdout?.on('data', () => onEvent());
  child.once('error', () => {
    if (!stopped) onGone();
  });
  child.once('exit', () => {
    if (!stopped) onGone();
  });
  // The child never keeps the proxy alive on its own.
  child.unref();
  (child.stdout as unknown as { unref?: () => void } | null)?.unref?.();
  return () => {
    stopped = true;
    child.kill('SIGTERM');
  };
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
  subscribe: kernelEvents,
};

export interface NetworkWatchOptions {
  /** Polling period where the kernel can't notify. */
  readonly intervalMs: number;
  /** The wall clock this much ahead of the monotonic one means the machine slept. */
  readonly lateMs: number;
  /** With kernel notifications: how often the clocks are compared anyway (default once a minute). */
  readonly clockCheckMs?: number;
  /** Coalesces a burst of kernel events (a link coming up brings several) into one look, ms (default 100). */
  readonly settleMs?: number;
}

export class NetworkWatch extends EventEmitter<{ change: [NetworkChange] }> {
  readonly #sources: WatchSources;
  readonly #opts: NetworkWatchOptions;
  readonly #now: () => number;
  readonly #mono: () => number;
  #routes = '';
  #addresses = '';
  /** Wall and monotonic clocks at the last look: their drift apart is sleep. */
  #wallAt = 0;
  #monoAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #settle: NodeJS.Timeout | undefined;
  /** Stops the kernel notifications; null while polling. */
  #unsubscribe: (() => void) | null = null;
  #running = false;

  constructor(
    sources: WatchSources = systemSources,
    opts: NetworkWatchOptions = { intervalMs: 2_000, lateMs: 10_000 },
    now: () => number = Date.now,
    mono: () => number = () => performance.now(),
  ) {
    super();
    this.#sources = sources;
    this.#opts = opts;
    this.#now = now;
    this.#mono = mono;
  }

  /** Whether changes come from the kernel (true) or from polling. */
  get notified(): boolean {
    return this.#unsubscribe !== null;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#routes = this.#sources.defaultRoutes();
    this.#addresses = this.#sources.addresses();
    this.#wallAt = this.#now();
    this.#monoAt = this.#mono();
    this.#unsubscribe = this.#sources.subscribe?.(() => this.#onKernelEvent(), () => this.#onKernelGone()) ?? null;
    this.#schedule();
  }

  stop(): void {
    this.#running = false;
    clearTimeout(this.#timer);
    clearTimeout(this.#settle);
    this.#timer = undefined;
    this.#settle = undefined;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
  }

  /** One look at the network now (the timer and kernel events call it; tests may too). */
  check(): void {
    const wall = this.#now();
    const mono = this.#mono();
    const slept = wall - this.#wallAt - (mono - this.#monoAt);
    this.#wallAt = wall;
    this.#monoAt = mono;
    const routes = this.#sources.defaultRoutes();
    const addresses = this.#sources.addresses();
    let change: NetworkChange | undefined;
    if (slept > this.#opts.lateMs) change = { reason: 'resume', sentence: `this machine woke from sleep (a ${Math.round(slept / 1000)} s gap)` };
    else if (routes !== this.#routes) change = { reason: 'route', sentence: routes ? 'the default route changed' : 'the default route went away' };
    else if (addresses !== this.#addresses) change = { reason: 'address', sentence: "this machine's network addresses changed" };
    this.#routes = routes;
    this.#addresses = addresses;
    if (change) this.emit('change', change);
  }

  #onKernelEvent(): void {
    if (!this.#running || this.#settle) return;
    this.#settle = setTimeout(() => {
      this.#settle = undefined;
      if (this.#running) this.check();
    }, this.#opts.settleMs ?? 100);
    this.#settle.unref();
  }

  /** The notifications stopped (the child died): poll from now on, and look at once. */
  #onKernelGone(): void {
    this.#unsubscribe = null;
    if (!this.#running) return;
    this.check();
    this.#schedule();
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    const ms = this.#unsubscribe ? (this.#opts.clockCheckMs ?? 60_000) : this.#opts.intervalMs;
    this.#timer = setTimeout(() => {
      this.check();
      if (this.#running) this.#schedule();
    }, ms);
    this.#timer.unref();
  }
}
