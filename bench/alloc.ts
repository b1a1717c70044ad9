/**
 * Bytes allocated per query on the hot path (issue 23): the engine, the
 * answer cache and the pool, driven in this process with no sockets. The
 * connection is a stand-in that keeps the real in-flight map
 * (connection/in-flight.ts) and answers each query with a copy of a
 * resolver's answer (what reading it from a socket allocates), so what is
 * counted is dotstub's own code between a client's datagram and its answer.
 *
 *   npm run bench:alloc                 # hit, miss and no-cache paths; 5 rounds of 4,000 queries each
 *   npm run bench:alloc -- --rounds 9 --queries 6000
 *   npm run bench:alloc -- --sites      # also: where the bytes are allocated (V8's sampling heap profiler)
 *   npm run bench:alloc -- --cpu        # instead: CPU per cache hit, engine + cache in one process, run with
 *                                       # the flags dotstub runs with (collections included), median of rounds

 * The last row adds the UDP listener (proxy/listen/udp.ts) and Node's
 * datagram socket: a client in a child process sends the queries over
 * loopback, WINDOW at a time, and each is answered from the cache.
 *
 * Method: the young generation is made large enough (--min/--max-semi-space-size,
 * the script re-runs itself with them) that a round of queries runs without a
 * collection; the V8 heap's growth over the round (and the ArrayBuffers'
 * outside it), divided by the queries, is what a query allocates. A round
 * during which V8 collected anyway is thrown away and run again. Median over rounds.
 */
import { spawn, spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { PerformanceObserver } from 'node:perf_hooks';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import dnsPacket from 'dns-packet';
import { AnswerCache } from '../proxy/cache/answer-cache.js';
import { CachingUpstream } from '../proxy/cache/caching-upstream.js';
import type { ResolverSpec } from '../proxy/config/resolvers.js';
import type { UpstreamQuestion } from '../proxy/dns/upstream-query.js';
import { Engine } from '../proxy/engine/engine.js';
import { ClientShares } from '../proxy/listen/client-shares.js';
import { UdpListener } from '../proxy/listen/udp.js';
import type { AnswerHandler, CloseReason, ConnectionSpec, HandshakeInfo, PoolConnection, PoolConnectionEvents, SendInfo } from '../proxy/upstream/connection/contract.js';
import { InFlightMap } from '../proxy/upstream/connection/in-flight.js';
import { Pool } from '../proxy/upstream/pool/pool.js';
import { DEFAULT_POOL_OPTIONS } from '../proxy/upstream/pool/options.js';
import type { Upstream } from '../proxy/upstream/upstream.js';
import { PROXY_NODE_FLAGS } from '../proxy/runtime/node-flags.js';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, queries: { type: 'string' }, sites: { type: 'boolean' }, cpu: { type: 'boolean' } } });

const SEMI_SPACE_MB = 128;
if (!process.execArgv.some((a) => a.startsWith('--max-semi-space-size'))) {
  // Bytes: a young generation large enough that a round runs without a collection. CPU: as dotstub runs (proxy/runtime/node-flags.ts).
  const flags = values.cpu ? PROXY_NODE_FLAGS : [`--max-semi-space-size=${SEMI_SPACE_MB}`, `--min-semi-space-size=${SEMI_SPACE_MB}`, '--expose-gc'];
  const r = spawnSync(process.execPath, [...process.execArgv, ...flags, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
const ROUNDS = Number(values.rounds ?? 5);
const QUERIES = Number(values.queries ?? 4000);
const NAMES = 10_000;
/** Queries sent before their answers come back, as a busy connection carries them. */
const WINDOW = 50;

interface Held {
  readonly question: UpstreamQuestion;
  readonly handler: AnswerHandler<unknown>;
  readonly ctx: unknown;
  readonly name: string;
}

/** A connection that is open at once and answers when told, from prepared answers. */
class StandInConnection extends EventEmitter<PoolConnectionEvents> implements PoolConnection {
  readonly createdAt = Date.now();
  readonly state = 'open' as const;
  queriesCarried = 0;
  readonly handshake: HandshakeInfo;
  readonly keepaliveMs = undefined;
  readonly idleTimeoutMs = 60_000;
  lastAnswerAt = 0;
  readonly #queries = new InFlightMap<Held>();

  constructor(
    readonly spec: ConnectionSpec,
    readonly answers: ReadonlyMap<string, Buffer>,
  ) {
    super();
    this.handshake = { connectionId: spec.id, address: spec.address, resumed: false, verified: true, authError: null, tlsVersion: 'TLSv1.3', cipher: 'x', keyGroup: 'X25519', classicalOnly: null, handshakeMs: 1 };
    setImmediate(() => this.emit('ready', this.handshake));
  }
  get id(): number {
    return this.spec.id;
  }
  get address(): string {
    return this.spec.address;
  }
  get inFlight(): number {
    return this.#queries.size;
  }
  get available(): boolean {
    return this.#queries.size < 1000;
  }
  send<T>(framed: Buffer, question: UpstreamQuestion, handler: AnswerHandler<T>, ctx: T): SendInfo | null {
    const id = this.#queries.add({ question, handler: handler as AnswerHandler<unknown>, ctx, name: question.key.name });
    framed.writeUInt16BE(id, 2);
    this.queriesCarried++;
    return { connection: this, upstreamId: id, reused: true, depth: this.#queries.size };
  }
  cancel(id: number): void {
    this.#queries.cancel(id);
  }
  writtenAt(): number {
    return performance.now();
  }
  readonly ackEvidence = 'tcp';
  /** Its peer is always there: answers come when told. */
  peerSilence(): Promise<'acking'> {
    return Promise.resolve('acking');
  }
  drain(): void {
    this.close('local');
  }
  close(reason: CloseReason = 'local'): void {
    this.emit('close', { connectionId: this.id, reason, error: undefined, failed: 0, queriesCarried: this.queriesCarried, wasOpen: true });
  }
  /** Answers every query in flight, each with a fresh copy of its answer (as a socket read gives). */
  answerAll(): void {
    for (const [id, held] of [...this.#queries.entries()]) {
      const raw = Buffer.from(this.answers.get(held.name) as Buffer);
      raw.writeUInt16BE(id, 0);
      const m = this.#queries.match(raw);
      if (m.kind !== 'answer') throw new Error(`stand-in: ${m.kind}`);
      this.lastAnswerAt = performance.now();
      m.entry.handler(m.entry.ctx, this, id, null, m.answer, performance.now());
    }
  }
}

const resolver: ResolverSpec = { id: 'lab', label: 'lab', addresses: ['127.0.0.1'], port: 853, authName: 'dns.test' } as unknown as ResolverSpec;
const names = Array.from({ length: NAMES }, (_, i) => `n${i}.example.test`);
/** Client queries as a stub sends them (RD, EDNS with DO clear), and the resolver's padded answers. */
const queries = names.map((name, i) =>
  dnsPacket.encode({ type: 'query', id: i & 0xffff, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }], additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232 } as dnsPacket.Answer] }),
);
const answers = new Map(
  names.map((name, i) => [
    name,
    dnsPacket.encode({
      type: 'response',
      id: 0,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
      questions: [{ type: 'A', name }],
      answers: [{ type: 'A', name, ttl: 3600, data: `192.0.2.${(i % 254) + 1}` }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, options: [{ code: 12, length: 468 - 70 }] } as dnsPacket.Answer],
    }),
  ]),
);

interface SetUp {
  readonly engine: Engine;
  readonly conns: StandInConnection[];
  readonly cache: AnswerCache | null;
}

function setUp(withCache: boolean): SetUp {
  const conns: StandInConnection[] = [];
  const pool = new Pool({
    transport: 'dot',
    resolver,
    options: { ...DEFAULT_POOL_OPTIONS, size: 1, burstConnections: 0 },
    factory: (spec) => {
      const c = new StandInConnection(spec, answers);
      conns.push(c);
      return c;
    },
  });
  const cache = withCache ? new AnswerCache({ maxBytes: 64 * 1024 * 1024 }) : null;
  const upstream: Upstream = cache ? new CachingUpstream(cache, pool) : pool;
  const engine = new Engine(upstream, { padding: true, recordNames: true, keepBrowsersOnStub: true });
  // As the control API does: a listener, so every query's record is built.
  engine.on('query', () => undefined);
  return { engine, conns, cache };
}

/** When each collection V8 ran began (performance.now()); the observer hears of them a little later. */
const gcStarts: number[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcStarts.push(e.startTime);
}).observe({ entryTypes: ['gc'] });
const gc = (globalThis as { gc?: () => void }).gc as () => void;
const reply = (_answer: Buffer): void => undefined;

/** One round: `count` queries starting at name `from`; bytes per query (heap, array buffers), or null when V8 collected meanwhile. */
async function round(setup: SetUp, from: number, count: number, misses: boolean): Promise<{ heap: number; buffers: number } | null> {
  // Misses: the cache emptied first, so each query looks up, goes upstream and stores its answer.
  if (misses) setup.cache?.clear();
  gc();
  await new Promise((r) => setImmediate(r));
  const t0 = performance.now();
  const m0 = process.memoryUsage();
  for (let i = 0; i < count; i++) {
    setup.engine.handle(queries[(from + i) % NAMES] as Buffer, 'udp', reply);
    if (i % WINDOW === WINDOW - 1) for (const c of setup.conns) c.answerAll();
  }
  for (const c of setup.conns) c.answerAll();
  const m1 = process.memoryUsage();
  const t1 = performance.now();
  await new Promise((r) => setTimeout(r, 5));
  if (gcStarts.some((t) => t >= t0 && t <= t1)) return null;
  return { heap: (m1.heapUsed - m0.heapUsed) / count, buffers: (m1.arrayBuffers - m0.arrayBuffers) / count };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function measure(label: string, cache: boolean, hits: boolean): Promise<void> {
  const setup = setUp(cache);
  await new Promise((r) => setTimeout(r, 10)); // the connection opens
  // Warm-up: the JIT compiles the path, and (for hits) every name is cached.
  await round(setup, 0, NAMES, !hits);
  await round(setup, 0, NAMES, !hits);
  const heap: number[] = [];
  const buffers: number[] = [];
  for (let tries = 0; heap.length < ROUNDS && tries < ROUNDS * 4; tries++) {
    const r = await round(setup, tries * QUERIES, QUERIES, !hits);
    if (r) {
      heap.push(r.heap);
      buffers.push(r.buffers);
    }
  }
  console.log(`| ${label} | ${Math.round(median(heap))} | ${Math.round(median(buffers))} | ${heap.length} |`);
  if (values.sites) await sites(async () => void (await round(setup, 0, QUERIES, !hits)));
}

interface SamplingNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly SamplingNode[];
}

/** The functions that allocate the most over one round, from V8's sampling heap profiler (garbage included). */
async function sites(run: () => Promise<void>): Promise<void> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', { samplingInterval: 32, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  for (let i = 0; i < 3; i++) await run();
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: SamplingNode } };
  session.disconnect();
  const bySite = new Map<string, number>();
  const walk = (n: SamplingNode): void => {
    const f = n.callFrame;
    const site = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(proxy|node_modules|bench)\//, '$1/')}:${f.lineNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize);
    for (const c of n.children) walk(c);
  };
  walk(profile.head);
  const top = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 15);
  for (const [site, bytes] of top) console.log(`|   ${site} | ${Math.round(bytes / (3 * QUERIES))} | | |`);
}

/**
 * The client for the UDP row, in its own process so its allocations aren't counted: sends
 * `count` queries (names from `from`) WINDOW at a time to `port` once told to (a line on its
 * stdin), then prints "done".
 */
const CLIENT = `
const dgram = require('node:dgram');
const [port, from, count, window, names] = process.argv.slice(1).map(Number);
const s = dgram.createSocket('udp4');
const make = (i) => { const name = 'n' + ((from + i) % names) + '.example.test'; const labels = name.split('.');
  const q = Buffer.alloc(12 + name.length + 2 + 4 + 11); q.writeUInt16BE(i & 0xffff, 0); q.writeUInt16BE(0x0100, 2); q.writeUInt16BE(1, 4); q.writeUInt16BE(1, 10);
  let o = 12; for (const l of labels) { q[o++] = l.length; q.write(l, o, 'latin1'); o += l.length; } q[o++] = 0; q.writeUInt16BE(1, o); q.writeUInt16BE(1, o + 2); o += 4;
  q[o] = 0; q.writeUInt16BE(41, o + 1); q.writeUInt16BE(1232, o + 3); return q; };
let sent = 0, got = 0;
const more = () => { const until = Math.min(count, sent + window); while (sent < until) s.send(make(sent++), port, '127.0.0.1'); };
s.on('message', () => { if (++got === count) { process.stdout.write('done'); s.close(); } else if (got === sent) more(); });
s.bind(0, '127.0.0.1', () => process.stdin.once('data', more));
`;

async function measureUdp(label: string): Promise<void> {
  const setup = setUp(true);
  await new Promise((r) => setTimeout(r, 10));
  const udp = new UdpListener({ host: '127.0.0.1', port: 0 }, (raw, transport, reply) => setup.engine.handle(raw, transport, reply), new ClientShares(() => 1000));
  const { port } = await udp.listen();
  const drive = async (from: number, count: number): Promise<{ heap: number; buffers: number } | null> => {
    const child = spawn(process.execPath, ['-e', CLIENT, String(port), String(from), String(count), String(WINDOW), String(NAMES)], { stdio: ['pipe', 'pipe', 'inherit'] });
    // The answers from the stand-in connection: every turn, as a socket read would bring them.
    const answering = setInterval(() => {
      for (const c of setup.conns) c.answerAll();
    }, 1);
    const done = new Promise((r) => child.stdout?.once('data', r));
    await new Promise((r) => setTimeout(r, 300)); // the child starts (its start is not counted)
    gc();
    const t0 = performance.now();
    const m0 = process.memoryUsage();
    child.stdin?.end('go\n');
    await done;
    const m1 = process.memoryUsage();
    const t1 = performance.now();
    clearInterval(answering);
    await new Promise((r) => setTimeout(r, 5));
    if (gcStarts.some((t) => t >= t0 && t <= t1)) return null;
    return { heap: (m1.heapUsed - m0.heapUsed) / count, buffers: (m1.arrayBuffers - m0.arrayBuffers) / count };
  };
  await drive(0, NAMES);
  await drive(0, NAMES);
  const heap: number[] = [];
  const buffers: number[] = [];
  for (let tries = 0; heap.length < ROUNDS && tries < ROUNDS * 4; tries++) {
    const r = await drive(tries * QUERIES, QUERIES);
    if (r) {
      heap.push(r.heap);
      buffers.push(r.buffers);
    }
  }
  console.log(`| ${label} | ${Math.round(median(heap))} | ${Math.round(median(buffers))} | ${heap.length} |`);
  if (values.sites) await sites(async () => void (await drive(0, QUERIES)));
  await udp.close();
}

/**
 * CPU per cache hit: every name cached first, then rounds of QUERIES hits
 * (the engine's parse, the cache lookup, the answer for the client, the
 * query record for a listener), timed with process.cpuUsage, collections
 * included. Median of ROUNDS, in microseconds.
 */
async function measureCpu(): Promise<void> {
  const setup = setUp(true);
  await new Promise((r) => setTimeout(r, 10));
  await round(setup, 0, NAMES, false);
  await round(setup, 0, NAMES, false);
  const perHit: number[] = [];
  const hitsBefore = setup.conns.reduce((a, c) => a + c.queriesCarried, 0);
  for (let r = 0; r < ROUNDS; r++) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < QUERIES; i++) setup.engine.handle(queries[(r * QUERIES + i) % NAMES] as Buffer, 'udp', reply);
    const c = process.cpuUsage(c0);
    perHit.push((c.user + c.system) / QUERIES);
  }
  const upstream = setup.conns.reduce((a, c) => a + c.queriesCarried, 0) - hitsBefore;
  if (upstream !== 0) throw new Error(`${upstream} of the timed queries were not cache hits`);
  console.log(`CPU per cache hit, engine + cache in one process (node ${process.version}, ${PROXY_NODE_FLAGS.join(' ')}): median ${median(perHit).toFixed(2)} µs over ${ROUNDS} rounds of ${QUERIES} (min ${Math.min(...perHit).toFixed(2)}, max ${Math.max(...perHit).toFixed(2)})`);
}

if (values.cpu) {
  await measureCpu();
  process.exit(0);
}

console.log(`Bytes allocated per query, engine + cache + pool in one process (node ${process.version}; ${QUERIES} queries a round, median of ${ROUNDS} rounds)\n`);
console.log('| path | V8 heap B/query | ArrayBuffer B/query | rounds |');
console.log('| --- | --- | --- | --- |');
await measure('cache hit', true, true);
await measure('cache miss (stored)', true, false);
await measure('no cache (--cache-size 0)', false, false);
await measureUdp('cache hit, through the UDP listener');
