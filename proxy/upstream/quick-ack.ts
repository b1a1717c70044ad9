/**
 * Acknowledge a resolver's answers at once (Linux TCP_QUICKACK).
 *
 * Why: a resolver that leaves Nagle's algorithm on (unbound as Debian ships
 * it) sends a small answer only when everything it sent before has been
 * acknowledged. Our kernel delays its ACKs (up to 40 ms) while the
 * connection looks interactive, and sends them with the next query instead.
 * Two queries at once (glibc asks A and AAAA together) are enough to start
 * a chain that then never breaks while lookups keep coming: each answer
 * waits in the resolver for the ACK that rides on the *next* query, so every
 * lookup costs one gap between lookups more (6 ms at 200 a second, 12 ms at
 * 100, up to 40 ms), and a lone A+AAAA pair costs the second answer a
 * delayed ACK on a slow link. Measured on loopback with real unbound:
 * a pair then 200 queries a second gave a median of 6.3 ms; with quick ACKs,
 * 1.1 ms.
 *
 * Used by DoT connections (dot/connection.ts). unbound's DoH server was
 * measured not to hold answers this way (A+AAAA lookups 20 ms apart: 2.2–2.5
 * ms with quick ACKs and without), so DoH connections do without.
 *
 * Node cannot set TCP_QUICKACK, and the kernel clears it again by itself,
 * so it is set after every read that leaves queries in flight (one
 * setsockopt, ~1 µs), through the `sockopt` package: a small N-API addon
 * (one binary serves every Node version and Electron). Its linux-x64
 * "prebuild" is a Mach-O file that never loads on Linux, so the addon is
 * compiled from source: by `npm ci` (node-gyp: a C++ compiler, make and
 * python3), and by the package build against the runtime it bundles
 * (scripts/package-deb.mjs, which refuses to build without quick ACKs).
 * sockopt is an optional dependency, so `npm ci` without a compiler still
 * installs dotstub, leaving sockopt out. Elsewhere, or if the addon can't
 * load, this is a no-op and dotstub works as before; `quickAckSupport()`
 * says why and what to do.
 */
import { createRequire } from 'node:module';
import type net from 'node:net';

type SetSockOpt = (socket: net.Socket, level: number, name: number, value: number) => void;

/** <netinet/in.h> and <netinet/tcp.h> on Linux. */
const IPPROTO_TCP = 6;
const TCP_QUICKACK = 12;

let setsockopt: SetSockOpt | null | undefined;
let unavailable: string | undefined;
let fix: string | undefined;

/** What compiling the addon needs (node-gyp's own requirements on Linux). */
const BUILD_NEEDS = 'a C++ compiler, make and python3 (Debian: apt-get install g++ make python3)';

function load(): SetSockOpt | null {
  if (setsockopt !== undefined) return setsockopt;
  setsockopt = null;
  if (process.platform !== 'linux') {
    unavailable = `TCP_QUICKACK is Linux-only (this is ${process.platform})`;
    return null;
  }
  try {
    const require = createRequire(import.meta.url);
    const mod = require('sockopt') as { setsockopt: SetSockOpt };
    setsockopt = mod.setsockopt;
  } catch (err) {
    const message = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && message.includes("'sockopt'")) {
      // npm ci leaves an optional dependency out when its build fails: no compiler there.
      unavailable = 'the sockopt addon is not installed: npm ci compiles it from source and leaves it out where it cannot';
      fix = `To get quick ACKs, install ${BUILD_NEEDS}, then run npm ci again.`;
    } else {
      unavailable = `the sockopt addon did not load: ${message}`;
      fix = `To get quick ACKs, compile it for this machine: npm rebuild sockopt (needs ${BUILD_NEEDS}).`;
    }
  }
  return setsockopt;
}

/** Whether quick ACKs work here; if not, why, and what would make them work (undefined: nothing can, e.g. not Linux). */
export function quickAckSupport(): { readonly available: boolean; readonly reason: string | undefined; readonly fix: string | undefined } {
  const available = load() !== null;
  return { available, reason: unavailable, fix };
}

/**
 * Sends the ACK for what `socket` has read so far now, not with the next
 * write. Never throws: a socket that closed meanwhile is simply skipped.
 */
export function ackNow(socket: net.Socket): void {
  const set = load();
  if (!set || socket.destroyed) return;
  try {
    set(socket, IPPROTO_TCP, TCP_QUICKACK, 1);
  } catch {
    // EBADF/ENOTCONN from a socket closing under us: nothing left to acknowledge.
  }
}
