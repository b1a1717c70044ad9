/**
 * The client side of the paper bench, run inside the link lab's client
 * namespace: `node --import tsx bench/probe.ts` with one JSON request on
 * stdin, one JSON result on stdout. Times are milliseconds; `sentAt` values
 * are wall-clock (Date.now()) so they can be matched with linkemu's frame log.
 *
 * Modes:
 * - tdns: the T-DNS stub-to-resolver cases against one server (UDP, TCP, TLS;
 *   fresh, reused, resumed; stop-and-wait, pipelined; a slow name first);
 * - burst: N distinct names at once over UDP to each target, after a warm-up
 *   query and an idle pause;
 * - replay: a timed trace of names sent to every target at once;
 * - rate: a fixed query rate to each target in turn;
 * - flood: malformed datagrams at a bounded rate;
 * - getent: glibc `getent ahosts` one name at a time or many at once.
 */
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import dnsPacket from 'dns-packet';

export interface Target {
  readonly label: string;
  readonly host: string;
  readonly port: number;
}

export interface TdnsRequest {
  readonly mode: 'tdns';
  readonly host: string;
  readonly udpPort: number;
  readonly tlsPort: number;
  readonly caFile: string;
  readonly authName: string;
  /** Queries per case. */
  readonly n: number;
  /** First name index to use (names n<i>.test). */
  readonly base: number;
}

export interface BurstRequest {
  readonly mode: 'burst';
  readonly targets: readonly Target[];
  readonly count: number;
  readonly rounds: number;
  readonly base: number;
  readonly idleMs: number;
  readonly timeoutMs: number;
}

export interface ReplayRequest {
  readonly mode: 'replay';
  readonly targets: readonly Target[];
  /** Sorted by `at`: when (ms after start) to ask for `name`. */
  readonly trace: readonly { readonly at: number; readonly name: string }[];
  readonly timeoutMs: number;
}

export interface RateRequest {
  readonly mode: 'rate';
  readonly targets: readonly Target[];
  /** Lookups per second. */
  readonly qps: number;
  /** Each lookup asks A and AAAA at once, as glibc does; its sample is the later answer. */
  readonly pairs?: boolean;
  readonly seconds: number;
  readonly names: number;
  readonly timeoutMs: number;
}

export interface FloodRequest {
  readonly mode: 'flood';
  readonly target: Target;
  readonly pps: number;
  readonly seconds: number;
}

export interface GetentRequest {
  readonly mode: 'getent';
  readonly names: readonly string[];
  /** All at once, or one after another. */
  readonly parallel: boolean;
  readonly timeoutMs: number;
}

export type ProbeRequest = TdnsRequest | BurstRequest | ReplayRequest | RateRequest | FloodRequest | GetentRequest;

/** One query: when it left (epoch ms) and its latency, or null when it got no answer in time. */
export interface Sample {
  readonly sentAt: number;
  readonly ms: number | null;
}

export interface TdnsCase {
  readonly name: string;
  /** Per-query latency, ms (each from its own start: connect for fresh connections). */
  readonly ms: readonly number[];
  /** From the first send to the last answer, ms. */
  readonly totalMs: number;
  readonly note?: string;
}

const now = (): number => performance.now();

function query(name: string, id: number, type: 'A' | 'AAAA' = 'A'): Buffer {
  return dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }] });
}

function idOf(msg: Buffer): number {
  return msg.length >= 2 ? msg.readUInt16BE(0) : -1;
}

/** A UDP client keyed by message ID; each query resolves with its latency or null after `timeoutMs`. */
class Udp {
  readonly #sock = dgram.createSocket('udp4');
  readonly #pending = new Map<number, (at: number) => void>();
  #id = Math.floor(Math.random() * 0xffff);

  constructor(readonly target: { host: string; port: number }) {
    this.#sock.on('message', (msg) => this.#pending.get(idOf(msg))?.(now()));
    this.#sock.on('error', () => undefined);
  }

  ask(name: string, timeoutMs: number, type: 'A' | 'AAAA' = 'A'): Promise<Sample> {
    const id = (this.#id = (this.#id + 1) & 0xffff);
    const sentAt = Date.now();
    const t0 = now();
    return new Promise((resolve) => {
      const t = setTimeout(() => done(null), timeoutMs);
      const done = (at: number | null): void => {
        clearTimeout(t);
        this.#pending.delete(id);
        resolve({ sentAt, ms: at === null ? null : at - t0 });
      };
      this.#pending.set(id, done);
      this.#sock.send(query(name, id, type), this.target.port, this.target.host);
    });
  }

  close(): void {
    this.#sock.close();
  }
}

/** DNS over a TCP or TLS stream (RFC 7766 framing), answers matched by ID. */
class Stream {
  readonly #pending = new Map<number, (at: number) => void>();
  #buf = Buffer.alloc(0);
  #id = 1;

  constructor(readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, chunk]);
      while (this.#buf.length >= 2) {
        const len = this.#buf.readUInt16BE(0);
        if (this.#buf.length < 2 + len) break;
        const msg = this.#buf.subarray(2, 2 + len);
        this.#buf = this.#buf.subarray(2 + len);
        this.#pending.get(idOf(msg))?.(now());
      }
    });
    socket.on('error', () => undefined);
  }

  /** Sends every name in one write (pipelined) and resolves with each answer's arrival time. */
  send(names: readonly string[]): Promise<number>[] {
    const frames: Buffer[] = [];
    const answers = names.map((name) => {
      const id = this.#id++ & 0xffff;
      const q = query(name, id);
      const len = Buffer.alloc(2);
      len.writeUInt16BE(q.length);
      frames.push(len, q);
      return new Promise<number>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no answer for ${name} in 10 s`)), 10_000);
        this.#pending.set(id, (at) => {
          clearTimeout(t);
          this.#pending.delete(id);
          resolve(at);
        });
      });
    });
    this.socket.write(Buffer.concat(frames));
    return answers;
  }

  close(): void {
    this.socket.destroy();
  }
}

function connectTcp(host: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port, noDelay: true }, () => resolve(s));
    s.once('error', reject);
  });
}

interface TlsOpts {
  readonly host: string;
  readonly port: number;
  readonly ca: string;
  readonly servername: string;
  readonly session?: Buffer;
  readonly maxVersion?: tls.SecureVersion;
}

/** Connects over TLS; resolves once the handshake is done, with the session ticket when one arrives. */
function connectTls(o: TlsOpts): Promise<{ socket: tls.TLSSocket; ticket: Promise<Buffer | undefined> }> {
  return new Promise((resolve, reject) => {
    let gotTicket: (b: Buffer | undefined) => void = () => undefined;
    const ticket = new Promise<Buffer | undefined>((r) => (gotTicket = r));
    const s = tls.connect(
      { host: o.host, port: o.port, ca: o.ca, servername: o.servername, session: o.session, maxVersion: o.maxVersion ?? 'TLSv1.3', ALPNProtocols: ['dot'] },
      () => resolve({ socket: s, ticket }),
    );
    s.once('session', (b: Buffer) => gotTicket(b));
    s.once('close', () => gotTicket(undefined));
    s.once('error', reject);
  });
}

async function tdns(r: TdnsRequest): Promise<{ cases: TdnsCase[] }> {
  const ca = fs.readFileSync(r.caFile, 'utf8');
  const names = (k: number): string[] => Array.from({ length: r.n }, (_, i) => `n${r.base + k * r.n + i}.test`);
  const cases: TdnsCase[] = [];
  const udp = new Udp({ host: r.host, port: r.udpPort });
  // UDP, stop-and-wait then pipelined.
  {
    const t0 = now();
    const ms: number[] = [];
    for (const name of names(0)) ms.push((await udp.ask(name, 5000)).ms ?? Number.NaN);
    cases.push({ name: 'udp-saw', ms, totalMs: now() - t0 });
    const t1 = now();
    const all = await Promise.all(names(1).map((name) => udp.ask(name, 5000)));
    cases.push({ name: 'udp-pipe', ms: all.map((s) => s.ms ?? Number.NaN), totalMs: now() - t1 });
  }
  udp.close();
  // TCP: a fresh connection per query, then one connection stop-and-wait and pipelined.
  {
    const t0 = now();
    const ms: number[] = [];
    for (const name of names(2)) {
      const s0 = now();
      const c = new Stream(await connectTcp(r.host, r.udpPort));
      const [a] = c.send([name]);
      ms.push((await (a ?? Promise.resolve(Number.NaN))) - s0);
      c.close();
    }
    cases.push({ name: 'tcp-fresh', ms, totalMs: now() - t0 });
    const c = new Stream(await connectTcp(r.host, r.udpPort));
    await Promise.all(c.send(['n0.test']));
    cases.push(await stopAndWait('tcp-saw', c, names(3)));
    cases.push(await pipelined('tcp-pipe', c, names(4)));
    c.close();
  }
  // TLS 1.3 and 1.2: fresh (full handshake), resumed (ticket), reused (stop-and-wait, pipelined).
  for (const [label, maxVersion] of [['tls', 'TLSv1.3'], ['tls12', 'TLSv1.2']] as const) {
    const o = { host: r.host, port: r.tlsPort, ca, servername: r.authName, maxVersion };
    const fresh: number[] = [];
    const resumed: number[] = [];
    let reusedCount = 0;
    const t0 = now();
    let ticket: Buffer | undefined;
    for (const [i, name] of names(label === 'tls' ? 5 : 10).entries()) {
      const s0 = now();
      const { socket, ticket: tk } = await connectTls({ ...o, session: i % 2 === 1 ? ticket : undefined });
      const c = new Stream(socket);
      const [a] = c.send([name]);
      const ms = (await (a ?? Promise.resolve(Number.NaN))) - s0;
      if (i % 2 === 1) {
        resumed.push(ms);
        if (socket.isSessionReused()) reusedCount++;
      } else {
        fresh.push(ms);
        ticket = await Promise.race([tk, new Promise<undefined>((res) => setTimeout(() => res(undefined), 1000))]);
      }
      c.close();
    }
    const total = now() - t0;
    cases.push({ name: `${label}-fresh`, ms: fresh, totalMs: total });
    cases.push({ name: `${label}-resumed`, ms: resumed, totalMs: total, note: `${reusedCount}/${resumed.length} resumed` });
    if (label === 'tls12') continue;
    const { socket } = await connectTls(o);
    const c = new Stream(socket);
    await Promise.all(c.send(['n0.test']));
    cases.push(await stopAndWait('tls-saw', c, names(6)));
    cases.push(await pipelined('tls-pipe', c, names(7)));
    // A slow name first, then fast ones, all at once: out-of-order answers vs what an in-order server would give.
    const slow = `s${Date.now()}.slow.test`;
    const t1 = now();
    const arrivals = await Promise.all(c.send([slow, ...names(8).slice(1)]));
    const ooo = arrivals.map((at) => at - t1);
    let held = 0;
    const inOrder = ooo.map((ms) => (held = Math.max(held, ms)));
    cases.push({ name: 'tls-ooo-fast', ms: ooo.slice(1), totalMs: Math.max(...ooo) });
    cases.push({ name: 'tls-inorder-fast', ms: inOrder.slice(1), totalMs: Math.max(...ooo), note: 'in-order: each answer held until all before it arrived (as a FIFO server or client would), from the same run' });
    cases.push({ name: 'tls-slow', ms: [ooo[0] ?? Number.NaN], totalMs: ooo[0] ?? Number.NaN });
    c.close();
  }
  return { cases };
}

async function stopAndWait(name: string, c: Stream, names: readonly string[]): Promise<TdnsCase> {
  const t0 = now();
  const ms: number[] = [];
  for (const n of names) {
    const s0 = now();
    const [a] = c.send([n]);
    ms.push((await (a ?? Promise.resolve(Number.NaN))) - s0);
  }
  return { name, ms, totalMs: now() - t0 };
}

async function pipelined(name: string, c: Stream, names: readonly string[]): Promise<TdnsCase> {
  const t0 = now();
  const at = await Promise.all(c.send(names));
  return { name, ms: at.map((a) => a - t0), totalMs: Math.max(...at) - t0 };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function burst(r: BurstRequest): Promise<{ runs: { label: string; round: number; startedAt: number; samples: Sample[] }[] }> {
  const runs: { label: string; round: number; startedAt: number; samples: Sample[] }[] = [];
  let next = r.base;
  for (let round = 0; round < r.rounds; round++) {
    const order = [...r.targets.slice(round % r.targets.length), ...r.targets.slice(0, round % r.targets.length)];
    for (const t of order) {
      const u = new Udp(t);
      await u.ask(`n${next++}.test`, r.timeoutMs);
      await sleep(r.idleMs);
      const names = Array.from({ length: r.count }, () => `n${next++}.test`);
      const startedAt = Date.now();
      const samples = await Promise.all(names.map((n) => u.ask(n, r.timeoutMs)));
      runs.push({ label: t.label, round, startedAt, samples });
      u.close();
      await sleep(200);
    }
  }
  return { runs };
}

async function replay(r: ReplayRequest): Promise<{ startedAt: number; results: Record<string, Sample[]> }> {
  const clients = r.targets.map((t) => new Udp(t));
  const startedAt = Date.now();
  const t0 = now();
  const pending: Promise<Sample>[][] = clients.map(() => []);
  for (const q of r.trace) {
    const wait = q.at - (now() - t0);
    if (wait > 0) await sleep(wait);
    clients.forEach((c, i) => pending[i]?.push(c.ask(q.name, r.timeoutMs)));
  }
  const results: Record<string, Sample[]> = {};
  for (const [i, t] of r.targets.entries()) results[t.label] = await Promise.all(pending[i] ?? []);
  for (const c of clients) c.close();
  return { startedAt, results };
}

async function rate(r: RateRequest): Promise<{ results: Record<string, Sample[]> }> {
  const results: Record<string, Sample[]> = {};
  const interval = 1000 / r.qps;
  for (const t of r.targets) {
    const u = new Udp(t);
    const all: Promise<Sample>[] = [];
    const total = Math.round(r.qps * r.seconds);
    const t0 = now();
    for (let i = 0; i < total; i++) {
      const due = t0 + i * interval;
      const wait = due - now();
      // Sleep for gaps of a few ms; at higher rates send in small batches to keep the schedule.
      if (wait > 2) await sleep(wait - 1);
      const name = `n${i % r.names}.test`;
      if (r.pairs) {
        all.push(
          Promise.all([u.ask(name, r.timeoutMs), u.ask(name, r.timeoutMs, 'AAAA')]).then(([a, b]) => ({
            sentAt: a.sentAt,
            ms: a.ms === null || b.ms === null ? null : Math.max(a.ms, b.ms),
          })),
        );
      } else {
        all.push(u.ask(name, r.timeoutMs));
      }
      if (i % 50 === 49) await sleep(0);
    }
    results[t.label] = await Promise.all(all);
    u.close();
    await sleep(300);
  }
  return { results };
}

async function flood(r: FloodRequest): Promise<{ sent: number }> {
  const sock = dgram.createSocket('udp4');
  const total = Math.round(r.pps * r.seconds);
  const t0 = now();
  let sent = 0;
  for (let i = 0; i < total; i++) {
    // Malformed in several ways: random bytes, a header claiming records that aren't there, a truncated name.
    const kind = i % 3;
    let b: Buffer;
    if (kind === 0) b = Buffer.from(Array.from({ length: 1 + (i % 500) }, () => Math.floor(Math.random() * 256)));
    else if (kind === 1) b = Buffer.from([i & 0xff, 1, 1, 0, 0, 5, 0, 3, 0, 2, 0, 1]);
    else b = Buffer.concat([query(`n${i % 1000}.test`, i & 0xffff).subarray(0, 15), Buffer.from([63, 65, 66])]);
    sock.send(b, r.target.port, r.target.host);
    sent++;
    const due = t0 + (sent * 1000) / r.pps;
    if (due - now() > 2) await sleep(due - now());
  }
  await sleep(100);
  sock.close();
  return { sent };
}

function getentOnce(name: string, timeoutMs: number): Promise<{ name: string; ms: number; ok: boolean }> {
  const t0 = now();
  return new Promise((resolve) => {
    const c = spawn('getent', ['ahosts', name], { stdio: 'ignore' });
    const t = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
    c.once('exit', (code) => {
      clearTimeout(t);
      resolve({ name, ms: now() - t0, ok: code === 0 });
    });
  });
}

async function getent(r: GetentRequest): Promise<{ lookups: { name: string; ms: number; ok: boolean }[]; allMs: number }> {
  const t0 = now();
  if (r.parallel) {
    const lookups = await Promise.all(r.names.map((n) => getentOnce(n, r.timeoutMs)));
    return { lookups, allMs: now() - t0 };
  }
  const lookups = [];
  for (const n of r.names) lookups.push(await getentOnce(n, r.timeoutMs));
  return { lookups, allMs: now() - t0 };
}

export type ProbeResult = Awaited<ReturnType<typeof tdns | typeof burst | typeof replay | typeof rate | typeof flood | typeof getent>>;

async function main(): Promise<void> {
  const input = fs.readFileSync(0, 'utf8');
  const req = JSON.parse(input) as ProbeRequest;
  const handlers: { [K in ProbeRequest['mode']]: (r: Extract<ProbeRequest, { mode: K }>) => Promise<unknown> } = { tdns, burst, replay, rate, flood, getent };
  const out = await (handlers[req.mode] as (r: ProbeRequest) => Promise<unknown>)(req);
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

if (process.argv[1] && import.meta.filename === fs.realpathSync(process.argv[1])) {
  main().catch((err: unknown) => {
    process.stderr.write(`probe: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
