/**
 * A small DNS client for tests: UDP and TCP (pipelined) on loopback, answers
 * matched by ID, every query bounded by a timeout.
 */
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import type { DecodedPacket, Packet, RecordType } from 'dns-packet';
import { FrameReader, frame } from '../proxy/dns/framing.js';

export interface Answer {
  readonly packet: DecodedPacket;
  readonly raw: Buffer;
  readonly rcode: string;
  readonly ms: number;
}

export interface QueryOptions {
  readonly id?: number;
  readonly type?: RecordType;
  /** Add an OPT record with this UDP size; null for none (classic 512-byte limit). */
  readonly edns?: number | null;
  readonly timeoutMs?: number;
}

function encodeQuery(name: string, opts: QueryOptions): Buffer {
  const packet: Packet = {
    type: 'query',
    id: opts.id ?? Math.floor(Math.random() * 65536),
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: opts.type ?? 'A', name, class: 'IN' }],
  };
  if (opts.edns !== null) {
    packet.additionals = [
      { type: 'OPT', name: '.', udpPayloadSize: opts.edns ?? 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] },
    ];
  }
  return dnsPacket.encode(packet);
}

/** Sequential message IDs, skipping those still pending. */
class IdAllocator {
  #next = 1;
  next(pending: ReadonlyMap<number, unknown>): number {
    let id: number;
    do {
      id = this.#next;
      this.#next = (this.#next + 1) & 0xffff;
    } while (pending.has(id));
    return id;
  }
}

function toAnswer(raw: Buffer, started: number): Answer {
  const packet = dnsPacket.decode(raw);
  return { packet, raw, rcode: (packet as DecodedPacket & { rcode: string }).rcode, ms: performance.now() - started };
}

/** One UDP socket; many concurrent queries, matched by ID. */
export class UdpClient {
  readonly #socket: dgram.Socket;
  readonly #port: number;
  readonly #host: string;
  readonly #pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void; started: number; timer: NodeJS.Timeout }>();
  readonly #ids = new IdAllocator();

  private constructor(socket: dgram.Socket, host: string, port: number) {
    this.#socket = socket;
    this.#host = host;
    this.#port = port;
    socket.on('message', (msg) => {
      if (msg.length < 2) return;
      const p = this.#pending.get(msg.readUInt16BE(0));
      if (!p) return;
      this.#pending.delete(msg.readUInt16BE(0));
      clearTimeout(p.timer);
      try {
        p.resolve(toAnswer(msg, p.started));
      } catch (err) {
        p.reject(err as Error);
      }
    });
  }

  static async open(port: number, host = '127.0.0.1'): Promise<UdpClient> {
    const socket = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
    await new Promise<void>((resolve) => socket.bind(0, host.includes(':') ? '::1' : '127.0.0.1', resolve));
    try {
      // Bursts of hundreds of answers overflow the default ~200 KiB buffer.
      socket.setRecvBufferSize(4 * 1024 * 1024);
    } catch {
      // capped by net.core.rmem_max
    }
    return new UdpClient(socket, host, port);
  }

  query(name: string, opts: QueryOptions = {}): Promise<Answer> {
    const id = opts.id ?? this.#ids.next(this.#pending);
    const buf = encodeQuery(name, { ...opts, id });
    return this.sendRaw(buf, opts.timeoutMs ?? 5000);
  }

  /** Sends raw bytes; resolves with the answer carrying the same ID. */
  sendRaw(buf: Buffer, timeoutMs = 5000): Promise<Answer> {
    const id = buf.readUInt16BE(0);
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`UDP query ${id} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, started: performance.now(), timer });
      this.#socket.send(buf, this.#port, this.#host);
    });
  }

  /** Sends and expects no answer within `ms` (malformed input that must be dropped). */
  async expectSilence(buf: Buffer, ms = 300): Promise<boolean> {
    let got = false;
    const onMsg = (): void => {
      got = true;
    };
    this.#socket.on('message', onMsg);
    this.#socket.send(buf, this.#port, this.#host);
    await new Promise((r) => setTimeout(r, ms));
    this.#socket.off('message', onMsg);
    return !got;
  }

  close(): void {
    for (const p of this.#pending.values()) clearTimeout(p.timer);
    this.#pending.clear();
    this.#socket.close();
  }
}

/** One TCP connection with pipelined queries (RFC 7766), answers matched by ID. */
export class TcpClient {
  readonly #socket: net.Socket;
  readonly #reader = new FrameReader();
  readonly #pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void; started: number; timer: NodeJS.Timeout }>();
  readonly #ids = new IdAllocator();
  /** Order in which answers arrived, by ID. */
  readonly arrivals: number[] = [];

  private constructor(socket: net.Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      for (const msg of this.#reader.push(chunk)) {
        const id = msg.readUInt16BE(0);
        this.arrivals.push(id);
        const p = this.#pending.get(id);
        if (!p) continue;
        this.#pending.delete(id);
        clearTimeout(p.timer);
        p.resolve(toAnswer(msg, p.started));
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      for (const [id, p] of this.#pending) {
        clearTimeout(p.timer);
        p.reject(new Error(`TCP connection closed with query ${id} pending`));
      }
      this.#pending.clear();
    });
  }

  static open(port: number, host = '127.0.0.1'): Promise<TcpClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host, noDelay: true }, () => resolve(new TcpClient(s)));
      s.once('error', reject);
    });
  }

  query(name: string, opts: QueryOptions = {}): Promise<Answer> {
    const id = opts.id ?? this.#ids.next(this.#pending);
    const buf = encodeQuery(name, { ...opts, id });
    const timeoutMs = opts.timeoutMs ?? 5000;
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`TCP query ${id} for ${name} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, started: performance.now(), timer });
      this.#socket.write(frame(buf));
    });
  }

  close(): void {
    this.#socket.destroy();
  }
}

/** The A record's address in an answer, or undefined. */
export function firstA(a: Answer): string | undefined {
  const rr = (a.packet.answers ?? []).find((r) => r.type === 'A');
  return rr && 'data' in rr && typeof rr.data === 'string' ? rr.data : undefined;
}

/** The address the synthetic zone gives n<i>.test (see test-support/unbound.ts). */
export function expectedA(i: number): string {
  return `192.0.2.${(i % 254) + 1}`;
}

/** A query as wire bytes (with an OPT record unless `edns` is null), for tests that send raw messages. */
export function queryBytes(name: string, opts: QueryOptions & { readonly id: number }): Buffer {
  return encodeQuery(name, opts);
}

/**
 * A TCP connection for raw bytes: whatever the test writes goes out as is,
 * every framed message the server sends back is kept, and its FIN and the
 * close are observable.
 */
export class RawTcpConnection {
  readonly socket: net.Socket;
  readonly #reader = new FrameReader();
  /** Messages received, in arrival order. */
  readonly messages: Buffer[] = [];
  /** Resolves when the server has sent FIN (or the connection is gone). */
  readonly ended: Promise<void>;
  /** Resolves when the connection is fully closed. */
  readonly closed: Promise<void>;
  #waiters: (() => void)[] = [];

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      for (const m of this.#reader.push(chunk)) this.messages.push(m);
      const w = this.#waiters;
      this.#waiters = [];
      for (const f of w) f();
    });
    socket.on('error', () => undefined);
    this.ended = new Promise((resolve) => {
      socket.once('end', () => resolve());
      socket.once('close', () => resolve());
    });
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  /** Connects. The server's FIN closes our side too; end() half-closes ours and keeps reading. */
  static open(port: number, host = '127.0.0.1'): Promise<RawTcpConnection> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host, noDelay: true }, () => resolve(new RawTcpConnection(s)));
      s.once('error', reject);
    });
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Writes `message` with its two-octet length. */
  send(message: Buffer): void {
    this.socket.write(frame(message));
  }

  /** Resolves once `count` messages have arrived; rejects after `ms`. */
  async waitForMessages(count: number, ms = 5000): Promise<Buffer[]> {
    const deadline = Date.now() + ms;
    while (this.messages.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`got ${this.messages.length} of ${count} messages in ${ms} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.messages;
  }

  /** Half-closes: sends FIN, keeps reading. */
  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Resolves with true if `p` settles within `ms`, false otherwise. */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Open file descriptors of this process (Linux). */
export function openFds(): number {
  return fs.readdirSync('/proc/self/fd').length;
}
