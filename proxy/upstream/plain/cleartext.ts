/**
 * Plain DNS to the network's own resolver: the one cleartext path dotstub
 * has, used only while signing in to a captive portal (for the names the
 * sign-in needs) and in degraded mode (opportunistic, when the user allowed
 * it). It implements the same `Upstream` contract as DoT and DoH, so the
 * engine can't tell it apart except by `trace.cleartext`, which keeps these
 * answers out of the cache and marks them in the query log.
 *
 * Each query gets its own UDP socket (a fresh random source port) and a
 * random ID — the only defences cleartext DNS has against spoofing — and a
 * truncated answer is asked again over TCP. The query is rebuilt without
 * the encrypted path's padding and keepalive options: they mean nothing
 * here and would only make the query stand out.
 */
import dgram from 'node:dgram';
import { randomInt } from 'node:crypto';
import net from 'node:net';
import { readUpstreamAnswer, withoutAuthenticData, type UpstreamAnswer } from '../../dns/upstream-answer.js';
import { cleartextQuery } from '../../dns/upstream-query.js';
import { FLAG_TC, HEADER_LENGTH } from '../../dns/header.js';
import { frame, FrameReader } from '../../dns/framing.js';
import { CleartextFailedError, PoolClosedError, type DotstubError } from '../../errors.js';
import type { Upstream, UpstreamCallback, UpstreamRequest } from '../upstream.js';

export interface CleartextOptions {
  /** The network's resolvers, tried in order: `192.168.1.1` or `[fe80::1]:53`-style host/port pairs. */
  readonly servers: readonly { readonly host: string; readonly port: number }[];
  /** Per attempt; each server gets one attempt. */
  readonly timeoutMs?: number;
}

export class CleartextUpstream implements Upstream {
  readonly name: string;
  readonly #servers: CleartextOptions['servers'];
  readonly #timeoutMs: number;
  readonly #pending = new Set<() => void>();
  #closed = false;
  #idleWaiters: (() => void)[] = [];

  constructor(options: CleartextOptions) {
    if (options.servers.length === 0) throw new CleartextFailedError('no network resolver is known');
    this.#servers = options.servers;
    this.#timeoutMs = options.timeoutMs ?? 1500;
    this.name = `Cleartext(${options.servers.map((s) => (s.port === 53 ? s.host : `${s.host}:${s.port}`)).join(', ')})`;
  }

  get servers(): CleartextOptions['servers'] {
    return this.#servers;
  }

  resolve<R extends UpstreamRequest>(req: R, done: UpstreamCallback<R>): void {
    if (this.#closed) {
      done(req, new PoolClosedError('the cleartext path was closed'), null);
      return;
    }
    req.trace.cleartext = true;
    req.trace.reused = false;
    req.trace.sentAt = performance.now();
    let settled = false;
    const finish = (err: DotstubError | null, answer: UpstreamAnswer | null): void => {
      if (settled) return;
      settled = true;
      this.#pending.delete(abort);
      done(req, err, answer);
      if (this.#pending.size === 0) for (const w of this.#idleWaiters.splice(0)) w();
    };
    let cancel: () => void = () => undefined;
    const abort = (): void => {
      cancel();
      finish(new PoolClosedError('the cleartext path was closed'), null);
    };
    this.#pending.add(abort);
    const attempt = (i: number, lastError: unknown): void => {
      const server = this.#servers[i];
      if (server === undefined) {
        const why = lastError instanceof Error ? lastError.message : 'no answer';
        finish(new CleartextFailedError(`the network's resolver didn't answer: ${why}`, { cause: lastError }), null);
        return;
      }
      req.trace.attempts++;
      req.trace.writtenAt = performance.now();
      cancel = this.#ask(req, server, (err, answer) => {
        // The network's resolver, unauthenticated: its AD bit says nothing anyone can check (upstream-answer.ts).
        if (answer) finish(null, withoutAuthenticData(answer));
        else attempt(i + 1, err);
      });
    };
    attempt(0, undefined);
  }

  /** One attempt at one server: UDP, then TCP if the answer was truncated. Returns a canceller. */
  #ask(req: UpstreamRequest, server: CleartextOptions['servers'][number], cb: (err: unknown, answer: UpstreamAnswer | null) => void): () => void {
    const id = randomInt(0, 65536);
    const query = cleartextQuery(req.wire, req.question, id);
    const family = net.isIPv6(server.host) ? 'udp6' : 'udp4';
    const sock = dgram.createSocket(family);
    let tcp: net.Socket | undefined;
    let over = false;
    const end = (err: unknown, answer: UpstreamAnswer | null): void => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      sock.close();
      tcp?.destroy();
      cb(err, answer);
    };
    const timer = setTimeout(() => end(new Error(`no answer from ${server.host} in ${this.#timeoutMs} ms`), null), this.#timeoutMs);
    const check = (raw: Buffer): UpstreamAnswer | null => {
      // A spoofed or stray datagram (wrong ID or question) is ignored, not taken.
      if (raw.length < HEADER_LENGTH || raw.readUInt16BE(0) !== id) return null;
      try {
        return readUpstreamAnswer(raw, req.question);
      } catch {
        return null;
      }
    };
    sock.on('message', (raw, rinfo) => {
      if (rinfo.address !== server.host || rinfo.port !== server.port) return;
      const answer = check(raw);
      if (!answer) return;
      if ((raw.readUInt16BE(2) & FLAG_TC) === 0) {
        end(null, answer);
        return;
      }
      // Truncated: the same question over TCP (RFC 7766).
      sock.removeAllListeners('message');
      const reader = new FrameReader();
      tcp = net.connect({ host: server.host, port: server.port });
      tcp.on('connect', () => tcp?.write(frame(query)));
      tcp.on('data', (chunk) => {
        for (const msg of reader.push(chunk)) {
          const full = check(msg);
          if (full) end(null, full);
        }
      });
      tcp.on('error', (err) => end(err, null));
      tcp.on('close', () => end(new Error(`${server.host} closed the TCP connection without an answer`), null));
    });
    sock.on('error', (err) => end(err, null));
    sock.send(query, server.port, server.host);
    return () => end(new Error('cancelled'), null);
  }

  close(): Promise<void> {
    this.#closed = true;
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  destroy(): void {
    this.#closed = true;
    for (const abort of [...this.#pending]) abort();
  }
}
