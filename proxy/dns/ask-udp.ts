/**
 * One DNS question over UDP to one address, with a timeout: what the checks
 * that stand outside the query path ask (the DNS-interception check, DDR's
 * SVCB question, the liveness watchdog's probe) written once. dns/'s only
 * I/O, kept here because network/ and system-dns/ both need it and both stand
 * above dns/.
 *
 * The socket is connected, so the kernel drops datagrams from anyone but the
 * address asked, and an ICMP error for the query comes back as 'error' (at
 * once, instead of a timeout). The query is the question alone: RD set, no
 * EDNS, a random ID. What counts as its answer is the caller's `read`: the
 * watchdog, which runs as root, looks only at the ID and parses nothing
 * (docs/rights.md); the others decode with `decodedAnswer`.
 */
import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import { dnsPacket } from './dns-packet.js';

export interface UdpQuestion<T> {
  /** An IP address (an IPv6 one may carry its %zone); the socket's family follows it. */
  readonly host: string;
  readonly port: number;
  readonly name: string;
  /** dns-packet's name for the type ('A', `UNKNOWN_64`). */
  readonly type: string;
  readonly timeoutMs: number;
  /** Aborted: stop waiting (the outcome is 'stopped'). */
  readonly signal?: AbortSignal;
  /** The answer read from a datagram, or null: not this query's answer (ignored; the wait goes on). */
  readonly read: (message: Buffer, id: number) => T | null;
}

export type UdpOutcome<T> =
  | { readonly answered: true; readonly answer: T; readonly afterMs: number }
  | { readonly answered: false; readonly why: 'not-an-address' | 'timeout' | 'stopped' }
  | { readonly answered: false; readonly why: 'failed'; readonly detail: string };

type Decoded = ReturnType<typeof dnsPacket.decode>;

/** A `read` for the watchdog: any datagram that starts with our ID, parsed no further. */
export const idOnly = (message: Buffer, id: number): Buffer | null => (message.length >= 2 && message.readUInt16BE(0) === id ? message : null);

/** A `read` that decodes: a response with our ID and our question (`name`, any case); garbage and answers to other queries are ignored. */
export const decodedAnswer =
  (name: string) =>
  (message: Buffer, id: number): { readonly message: Buffer; readonly decoded: Decoded } | null => {
    let decoded: Decoded;
    try {
      decoded = dnsPacket.decode(message);
    } catch {
      return null;
    }
    const q = decoded.questions?.[0];
    if (decoded.type !== 'response' || decoded.id !== id || q?.name.toLowerCase() !== name.toLowerCase()) return null;
    return { message, decoded };
  };

const ERRNO_WORDS: Readonly<Record<string, string>> = {
  ENETUNREACH: 'no route to it from this network',
  EHOSTUNREACH: 'the host is unreachable from this network',
  EADDRNOTAVAIL: 'this machine has no address of that family here',
  EAFNOSUPPORT: 'this machine has no IPv6',
  ECONNREFUSED: 'refused (nothing listens there)',
  EPERM: 'not permitted (a firewall on this machine?)',
  EACCES: 'not permitted (a firewall on this machine?)',
};

/** "no route to it from this network (ENETUNREACH)": a socket error in words, with its code. */
export function errnoWords(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const words = code !== undefined ? ERRNO_WORDS[code] : undefined;
  if (words !== undefined && code !== undefined) return `${words} (${code})`;
  return err instanceof Error ? err.message : String(err);
}

/** Asks once; settles at the first answer `read` accepts, at the timeout, on a socket error, or when `signal` aborts. Never throws. */
export function askOverUdp<T>(o: UdpQuestion<T>): Promise<UdpOutcome<T>> {
  return new Promise((resolve) => {
    const family = net.isIP(o.host.replace(/%.*$/, ''));
    if (family === 0 || o.signal?.aborted) {
      resolve({ answered: false, why: family === 0 ? 'not-an-address' : 'stopped' });
      return;
    }
    const id = randomInt(0, 0x10000);
    const query = dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: o.type as 'A', name: o.name }] });
    const socket = dgram.createSocket(family === 6 ? 'udp6' : 'udp4');
    const t0 = Date.now();
    let done = false;
    const finish = (outcome: UdpOutcome<T>): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', stop);
      socket.close();
      resolve(outcome);
    };
    const stop = (): void => finish({ answered: false, why: 'stopped' });
    const timer = setTimeout(() => finish({ answered: false, why: 'timeout' }), o.timeoutMs);
    o.signal?.addEventListener('abort', stop, { once: true });
    socket.on('error', (err) => finish({ answered: false, why: 'failed', detail: `not sent or not answered: ${errnoWords(err)}` }));
    socket.on('message', (message) => {
      const answer = o.read(message, id);
      if (answer !== null) finish({ answered: true, answer, afterMs: Date.now() - t0 });
    });
    // A connect that fails (no route for this family: ENETUNREACH on an IPv4-only network) comes to this callback, not to
    // 'error'; the socket is then unconnected, and send() without an address would throw inside the callback, where
    // nothing catches it (it ended the proxy: issue 41). Every failure here is this question's outcome, never a throw.
    socket.connect(o.port, o.host, (err?: Error) => {
      if (done) return;
      if (err) {
        finish({ answered: false, why: 'failed', detail: `not sent: ${errnoWords(err)}` });
        return;
      }
      try {
        socket.send(query, (sendErr) => {
          if (sendErr) finish({ answered: false, why: 'failed', detail: `not sent: ${errnoWords(sendErr)}` });
        });
      } catch (thrown) {
        finish({ answered: false, why: 'failed', detail: `not sent: ${errnoWords(thrown)}` });
      }
    });
  });
}
