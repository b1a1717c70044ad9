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
    socket.on('error', (err) => finish({ answered: false, why: 'failed', detail: `not sent or not answered: ${err.message}` }));
    socket.on('message', (message) => {
      const answer = o.read(message, id);
      if (answer !== null) finish({ answered: true, answer, afterMs: Date.now() - t0 });
    });
    socket.connect(o.port, o.host, () => {
      if (done) return;
      socket.send(query, (err) => {
        if (err) finish({ answered: false, why: 'failed', detail: `not sent: ${err.message}` });
      });
    });
  });
}
