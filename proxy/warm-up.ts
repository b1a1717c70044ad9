/**
 * The query path warmed at start (issue 32, item 5), so the first lookups a
 * person makes are not the slowest.
 *
 * A Node process runs new code in its interpreter and baseline tiers, and
 * optimizes a function only after it has run hundreds of times. At a
 * desktop's rate (one lookup every 50 ms) that takes the first minute:
 * measured with `npm run bench:lowrate` on Node 24, a just-started dotstub
 * answered at p50 1.1–1.2 ms where the same process warm took 0.84–1.0.
 *
 * So once DNS listens, dotstub sends a couple of thousand made-up questions
 * through its own engine, cache and DoT pool, to a DoT server of its own on
 * 127.0.0.1 that answers every question with a documentation address. It
 * is the same code a real lookup runs (V8 keeps what it learns per function,
 * not per object), in objects of its own: a separate engine, cache, pool and
 * counters, none of them wired to the proxy's records, query log, events,
 * privacy state or network memory. Nothing of it leaves loopback, the
 * user's resolver is never asked, and no user's name is in it.
 *
 * The server's key is public by design (it is in this file): it proves
 * nothing to anyone but this process's own warm-up pool, which pins it and
 * trusts nothing else, and it serves only made-up names for the warm-up's
 * fraction of a second.
 */
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import type DnsPacket from 'dns-packet';
import { AnswerCache } from './cache/answer-cache.js';
import { CachingUpstream } from './cache/caching-upstream.js';
import { dnsPacket } from './dns/dns-packet.js';
import { Engine } from './engine/engine.js';
import type { ProxyConfig } from './run/proxy-config.js';
import { poolFor } from './upstream/for-resolver.js';
import type { Upstream } from './upstream/upstream.js';

const SERVER_NAME = 'warm-up.dotstub.invalid';
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgSBkRKiV/iNhBjRYS
UJRvkt39UNVVzs84KgoG5U4rRg2hRANCAAQX3ITzrgHXgogd7utG1YfaVd5gHwdw
3TilyntItLQohzkyEUY/BdrwnTTIgJQ8APFKTh88xThodSFuiRYB9yT3
-----END PRIVATE KEY-----
`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIBwDCCAWWgAwIBAgIUZnI4lQqywhTRn1lTVFRW7cyGbC0wCgYIKoZIzj0EAwIw
IjEgMB4GA1UEAwwXd2FybS11cC5kb3RzdHViLmludmFsaWQwIBcNMjYxMjAyMDQy
OTAzWhgPMjEyNjExMDgwNDI5MDNaMCIxIDAeBgNVBAMMF3dhcm0tdXAuZG90c3R1
Yi5pbnZhbGlkMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEF9yE864B14KIHe7r
RtWH2lXeYB8HcN04pcp7SLS0KIc5MhFGPwXa8J00yICUPADxSk4fPMU4aHUhbokW
Afck96N3MHUwHQYDVR0OBBYEFBTksK8QLZ05jNO6UPnde6LpeMzSMB8GA1UdIwQY
MBaAFBTksK8QLZ05jNO6UPnde6LpeMzSMA8GA1UdEwEB/wQFMAMBAf8wIgYDVR0R
BBswGYIXd2FybS11cC5kb3RzdHViLmludmFsaWQwCgYIKoZIzj0EAwIDSQAwRgIh
AIKYsPGUndR7+TUCR+noKxtwpnMG3C0VmKi44hhgMAWjAiEA8jJbjfqPMu9w6C1f
oSpFM1ed6TSdzKpsHtrhNeAwwO0=
-----END CERTIFICATE-----
`;
/** base64 SHA-256 of CERT's SubjectPublicKeyInfo: the pool trusts this key and no other. */
const PIN = 'ibJOqk2V+MWjpO1QONeI4KYmR80lxWM21kzUm7F3wjg=';

/** EDNS as a stub's client sends it (1232 octets, RFC 9715's safe size), and as the server answers. */
const OPT = { type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] } as const satisfies DnsPacket.Answer;

export interface WarmUpOptions {
  /** Questions in all (default 2,000: past V8's thresholds for the functions a lookup runs). */
  readonly queries?: number;
  /** Outstanding at once (default 20: a page's worth, so the pipelined path is warmed too). */
  readonly concurrency?: number;
  /** Give up after this long, whatever is left (default 5 s). */
  readonly timeoutMs?: number;
  /** Stops it at once (the app stopping meanwhile). */
  readonly signal?: AbortSignal;
}

export interface WarmUpResult {
  readonly queries: number;
  readonly answered: number;
  readonly ms: number;
  /** It failed (app.ts runs it as a side check: runtime/side-check.ts): why; the proxy answers all the same. */
  readonly notDone?: string;
}

/** Runs the warm-up; resolves when it is done (never rejects: a warm-up that fails costs only its own time). */
export async function warmQueryPath(config: Pick<ProxyConfig, 'pool' | 'padding' | 'cache' | 'recordNames' | 'keepBrowsersOnStub'>, o: WarmUpOptions = {}): Promise<WarmUpResult> {
  const started = performance.now();
  const total = o.queries ?? 2000;
  const concurrency = o.concurrency ?? 20;
  const deadline = started + (o.timeoutMs ?? 5000);
  let answered = 0;
  let sent = 0;
  // No loopback to listen on (a namespace without lo up): nothing to warm, and nothing to tell.
  const server = await listenWarmServer().catch(() => null);
  if (!server) return { queries: 0, answered: 0, ms: performance.now() - started };
  let upstream: Upstream | undefined;
  let warmConnections = 0;
  const abort = (): void => upstream?.destroy();
  o.signal?.addEventListener('abort', abort, { once: true });
  try {
    const { port } = server.address() as AddressInfo;
    const pool = poolFor(
      { id: 'warm-up', label: 'warm-up', addresses: ['127.0.0.1'], port, authName: SERVER_NAME, pins: [PIN] },
      'dot',
      // Strict: the pin authenticates; no extra trust anchors, nothing of the user's.
      // Its connections are numbered apart, so the user's first connection is still #1.
      { auth: { mode: 'strict', ca: [] }, options: { ...config.pool, burstConnections: 0 }, connectionIds: () => ++warmConnections },
      false,
    );
    upstream = config.cache ? new CachingUpstream(new AnswerCache({ ...config.cache, maxBytes: 256 * 1024 }), pool) : pool;
    const engine = new Engine(upstream, { padding: config.padding, recordNames: config.recordNames, keepBrowsersOnStub: config.keepBrowsersOnStub });
    // Each lane asks its next question when the last is answered; a name repeats every fourth round, so the cache's hit path is warmed as well.
    const lane = async (): Promise<void> => {
      while (sent < total && performance.now() < deadline && !o.signal?.aborted) {
        const n = sent++;
        const name = `n${n % 4 === 3 ? n - 3 : n}.${SERVER_NAME}`;
        const raw = dnsPacket.encode({ type: 'query', id: n & 0xffff, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: n % 2 ? 'AAAA' : 'A', name, class: 'IN' }], additionals: [OPT] });
        const ok = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), Math.max(1, deadline - performance.now()));
          const answered = (ok: boolean): void => {
            clearTimeout(timer);
            resolve(ok);
          };
          if (!engine.handle(raw, 'udp', () => answered(true))) answered(false);
        });
        if (!ok) return;
        answered++;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
  } catch {
    // Nothing to tell: the warm-up only ever saves time.
  } finally {
    o.signal?.removeEventListener('abort', abort);
    upstream?.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return { queries: sent, answered, ms: performance.now() - started };
}

/** The warm-up's own DoT server on 127.0.0.1 (a free port): each question answered with one documentation address. */
async function listenWarmServer(): Promise<tls.Server> {
  const server = tls.createServer({ key: KEY, cert: CERT, minVersion: 'TLSv1.3' }, (socket) => {
    let pending: Buffer = Buffer.alloc(0);
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const msg = pending.subarray(2, 2 + pending.readUInt16BE(0));
        pending = pending.subarray(2 + msg.length);
        const answer = answerFor(msg);
        if (!answer) return void socket.destroy();
        const framed = Buffer.allocUnsafe(answer.length + 2);
        framed.writeUInt16BE(answer.length, 0);
        answer.copy(framed, 2);
        socket.write(framed);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // Kept out of the event loop's reckoning: it never holds the process up.
  server.unref();
  return server;
}

function answerFor(msg: Buffer): Buffer | null {
  try {
    const q = dnsPacket.decode(msg);
    const question = q.questions?.[0];
    if (!question) return null;
    const data = question.type === 'AAAA' ? '2001:db8::1' : '192.0.2.1';
    return dnsPacket.encode({
      type: 'response',
      id: q.id ?? 0,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
      questions: [question],
      answers: [{ type: question.type === 'AAAA' ? 'AAAA' : 'A', name: question.name, class: 'IN', ttl: 300, data }],
      additionals: [OPT],
    });
  } catch {
    return null;
  }
}
