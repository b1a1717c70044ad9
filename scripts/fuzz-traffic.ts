/**
 * The fuzzer's traffic, in its own process so its load doesn't stall the
 * measuring client: UDP datagrams at a set rate from several sockets, and
 * TCP connections, many at once, each sending a random stream (fuzz
 * messages in random chunks, lying length prefixes, empty frames) and
 * ending at random (FIN, reset, cut mid-frame, or going quiet).
 *
 *   node --import tsx scripts/fuzz-traffic.ts   (with an IPC channel; see TrafficStart)
 *
 * Everything is bounded: it stops at `packets` or on { type: 'stop' }, and
 * each TCP connection is destroyed at the latest CONNECTION_MAX_MS after it opened.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { fuzzMessage, malformedMessage, prng, validQuery, type Rand } from './fuzz-messages.js';

export interface TrafficStart {
  readonly type: 'start';
  readonly port: number;
  readonly seed: number;
  /** UDP datagrams per second over all sockets. */
  readonly udpRate: number;
  readonly udpSockets: number;
  /** TCP connections open at once. */
  readonly tcpConcurrency: number;
  /** Stop after this many packets (datagrams + frames). */
  readonly packets: number;
  /** Names n0.test … in the zone. */
  readonly names: number;
  /** 'mixed': every kind of message; 'malformed': UDP garbage only, never a query that would be forwarded. */
  readonly kinds: 'mixed' | 'malformed';
}

export interface TrafficCounts {
  readonly type: 'counts';
  readonly udp: number;
  readonly tcpFrames: number;
  readonly tcpConnections: number;
  readonly tcpRefused: number;
  readonly done: boolean;
}

const CONNECTION_MAX_MS = 3000;

let udpSent = 0;
let tcpFrames = 0;
let tcpConnections = 0;
let tcpRefused = 0;
let stopping = false;
const sockets = new Set<net.Socket>();

const report = (done: boolean): void => {
  const m: TrafficCounts = { type: 'counts', udp: udpSent, tcpFrames, tcpConnections, tcpRefused, done };
  process.send?.(m);
};

function frameOf(msg: Buffer, r: Rand): Buffer {
  const out = Buffer.allocUnsafe(msg.length + 2);
  const x = r();
  // Mostly honest lengths; sometimes a lie in either direction.
  const len = x < 0.9 ? msg.length : x < 0.95 ? Math.min(65535, msg.length + 1 + Math.floor(r() * 600)) : Math.floor(r() * msg.length);
  out.writeUInt16BE(len, 0);
  msg.copy(out, 2);
  return out;
}

function tcpSession(start: TrafficStart, r: Rand, total: () => number): Promise<void> {
  return new Promise((resolve) => {
    const s = net.connect({ port: start.port, host: '127.0.0.1' });
    sockets.add(s);
    tcpConnections++;
    const kill = setTimeout(() => s.destroy(), CONNECTION_MAX_MS);
    s.on('data', () => undefined);
    s.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED' || err.code === 'ECONNRESET') tcpRefused++;
    });
    s.on('close', () => {
      clearTimeout(kill);
      sockets.delete(s);
      resolve();
    });
    s.on('connect', () => {
      const frames = 1 + Math.floor(r() * 40);
      const chunks: Buffer[] = [];
      for (let i = 0; i < frames; i++) {
        const x = r();
        const msg = x < 0.05 ? Buffer.alloc(0) : x < 0.3 ? validQuery(r, start.names) : fuzzMessage(r, start.names);
        chunks.push(frameOf(msg, r));
        tcpFrames++;
      }
      const all = Buffer.concat(chunks);
      // Random chunking: a frame may arrive split anywhere, or many at once.
      let offset = 0;
      while (offset < all.length) {
        const n = 1 + Math.floor(r() * (r() < 0.5 ? 8 : all.length));
        s.write(all.subarray(offset, offset + n));
        offset += n;
      }
      const end = r();
      if (end < 0.4) s.end();
      else if (end < 0.7) s.destroy();
      else if (end < 0.85) setTimeout(() => s.end(), Math.floor(r() * 500));
      else if (end < 0.95) {
        // Cut mid-frame: a length prefix promising more than ever comes.
        s.write(Buffer.from([0x01, 0x00, 0x12]));
        setTimeout(() => s.destroy(), Math.floor(r() * 300));
      }
      // else: go quiet until the server's idle close or CONNECTION_MAX_MS.
      if (total() >= start.packets) s.destroy();
    });
  });
}

async function run(start: TrafficStart): Promise<void> {
  const r = prng(start.seed);
  const total = (): number => udpSent + tcpFrames;
  const udp: dgram.Socket[] = [];
  for (let i = 0; i < start.udpSockets; i++) {
    const s = dgram.createSocket('udp4');
    s.on('error', () => undefined);
    s.on('message', () => undefined);
    await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve));
    udp.push(s);
  }
  const reporter = setInterval(() => report(false), 500);
  const t0 = performance.now();
  const next = start.kinds === 'malformed' ? malformedMessage : fuzzMessage;
  const udpLoop = new Promise<void>((resolve) => {
    const tick = (): void => {
      if (stopping || total() >= start.packets) {
        resolve();
        return;
      }
      // Token bucket: catch up to the rate, at most 500 a tick so TCP and timers get turns.
      const due = Math.min(500, Math.floor(((performance.now() - t0) / 1000) * start.udpRate) - udpSent);
      for (let i = 0; i < due; i++) {
        const s = udp[i % udp.length] as dgram.Socket;
        s.send(next(r, start.names), start.port, '127.0.0.1');
        udpSent++;
      }
      if (due > 0) setImmediate(tick);
      else setTimeout(tick, 1);
    };
    tick();
  });
  const tcpLoops = Array.from({ length: start.tcpConcurrency }, async () => {
    while (!stopping && total() < start.packets) await tcpSession(start, r, total);
  });
  await Promise.all([udpLoop, ...tcpLoops]);
  clearInterval(reporter);
  for (const s of sockets) s.destroy();
  for (const s of udp) s.close();
  report(true);
}

process.on('message', (m: TrafficStart | { type: 'stop' }) => {
  if (m.type === 'start') void run(m).then(() => process.disconnect());
  else if (m.type === 'stop') stopping = true;
});
process.on('disconnect', () => {
  stopping = true;
  for (const s of sockets) s.destroy();
  setTimeout(() => process.exit(0), 100).unref();
});
