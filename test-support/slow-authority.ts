/**
 * An authority for `slow.lab.` on 127.0.0.1 (UDP and TCP on one port) that
 * answers each question after a fixed delay: what makes a real resolver
 * think. A DoT server that forwards (or stubs) `slow.lab.` here answers its
 * other names at once and these only after the delay, so a pipeline of one
 * slow name and fast ones after it comes back out of order. Every name
 * under it has A 192.0.2.250; other types get NODATA; names outside it
 * REFUSED. Nothing leaves loopback.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { FrameReader } from '../proxy/dns/framing.js';
import { freePort } from './unbound.js';

export const SLOW_ZONE = 'slow.lab';
export const SLOW_ADDRESS = '192.0.2.250';

export interface SlowAuthority {
  readonly port: number;
  readonly delayMs: number;
  /** Questions asked so far (name and type), as they came. */
  readonly asked: readonly string[];
  close(): Promise<void>;
}

function answer(query: Buffer, asked: string[]): Buffer | null {
  let q: dnsPacket.Packet;
  try {
    q = dnsPacket.decode(query);
  } catch {
    return null;
  }
  const question = q.questions?.[0];
  if (!question) return null;
  asked.push(`${question.name} ${question.type}`);
  const name = question.name.toLowerCase().replace(/\.$/, '');
  const inZone = name === SLOW_ZONE || name.endsWith(`.${SLOW_ZONE}`);
  const soa = { type: 'SOA' as const, name: `${SLOW_ZONE}.`, ttl: 60, data: { mname: `ns.${SLOW_ZONE}.`, rname: `admin.${SLOW_ZONE}.`, serial: 1, refresh: 60, retry: 60, expire: 600, minimum: 60 } };
  return dnsPacket.encode({
    type: 'response',
    id: q.id ?? 0,
    // AA: an authority; RCODE REFUSED (5) for what isn't ours.
    flags: (q.flags ?? 0) & dnsPacket.RECURSION_DESIRED | dnsPacket.AUTHORITATIVE_ANSWER | (inZone ? 0 : 5),
    questions: q.questions,
    answers: inZone && question.type === 'A' && name !== SLOW_ZONE ? [{ type: 'A', name: question.name, ttl: 60, data: SLOW_ADDRESS }] : [],
    authorities: inZone && !(question.type === 'A' && name !== SLOW_ZONE) ? [soa] : [],
  });
}

export async function startSlowAuthority(delayMs: number): Promise<SlowAuthority> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await listen(port, delayMs);
    } catch (err) {
      if (attempt >= 3 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
}

async function listen(port: number, delayMs: number): Promise<SlowAuthority> {
  const asked: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const later = (fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, delayMs);
    timers.add(t);
  };
  const udp = dgram.createSocket('udp4');
  udp.on('message', (msg, rinfo) => {
    const a = answer(msg, asked);
    if (a) later(() => udp.send(a, rinfo.port, rinfo.address, () => undefined));
  });
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    const reader = new FrameReader();
    s.on('data', (chunk: Buffer) => {
      let messages: Buffer[];
      try {
        messages = reader.push(chunk);
      } catch {
        s.destroy();
        return;
      }
      for (const m of messages) {
        const a = answer(m, asked);
        if (!a) continue;
        const framed = Buffer.alloc(2 + a.length);
        framed.writeUInt16BE(a.length, 0);
        a.copy(framed, 2);
        later(() => s.writable && s.write(framed));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(port, '127.0.0.1', () => resolve());
  });
  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(port, '127.0.0.1', () => resolve());
    });
  } catch (err) {
    udp.close();
    throw err;
  }
  return {
    port,
    delayMs,
    asked,
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      udp.close();
      await new Promise<void>((r) => tcp.close(() => r()));
    },
  };
}
