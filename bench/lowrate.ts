/**
 * `npm run bench:lowrate`: a desktop's rate on loopback — one query at a
 * time, 20 a second, each stub in turn — with every stub freshly started
 * ("cold") and again after it has answered `--warm` queries ("warm").
 * Per stub: p50/p90/p99 of the answered queries and the CPU its threads ran
 * per query (/proc/PID/task/*\/schedstat, ns: every thread, the kernel's
 * work for its syscalls included). Caches off (every query goes upstream,
 * as in the rate experiment of `npm run bench -- desktop`), one upstream
 * unbound over DoT, names cycling through 1,000.
 *
 * Why (issue 23): at 20 q/s dotstub's p50 was 1.3–1.8× the C stubs'. This
 * separates what a fresh process costs (V8 runs the query path in its
 * baseline tier until each function has run ~1,000–3,000 times) from what
 * stays once it is warm.
 *
 * `--burst N` (issue 32): then, `--burst-rounds` times per stub, one query,
 * a quiet second and N names at once (a page after reading): the CPU each
 * stub's threads ran for the burst, and its median and last answer. On a
 * 2-core machine a burst's answers wait for the stub's CPU: this is what the
 * paper bench's burst median is made of, without the link emulator.
 */
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import dnsPacket from 'dns-packet';
import { benchMeta, closeOnSignal, openLab, ROOT } from './lab.js';
import { FLOOR_DOT, PEER_NAMES, startPeer, waitReady, type Peer, type PeerName } from './peers.js';
import { wholeNumberFlags } from './args.js';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

const USAGE = 'usage: npm run bench:lowrate -- [--queries N] [--warm N] [--rate QPS] [--burst N [--burst-rounds N]] [--peers dotstub,stubby,unbound-fwd] [--node-flags="--flag …"] [--out DIR]';

const int = wholeNumberFlags(USAGE);

/** CPU time of all of `pid`'s threads so far, ms (schedstat: ns run on a CPU). */
function cpuMs(pid: number): number {
  let ns = 0;
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return ns / 1e6;
}

interface Row {
  readonly stub: string;
  readonly state: 'cold' | 'warm';
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly cpuMsPerQuery: number;
  readonly lost: number;
  readonly queries: number;
}

class Asker {
  readonly #sock = dgram.createSocket('udp4');
  readonly #pending = new Map<number, (at: number) => void>();
  #id = 1;

  async open(): Promise<void> {
    this.#sock.on('message', (m) => this.#pending.get(m.readUInt16BE(0))?.(performance.now()));
    await new Promise<void>((r) => this.#sock.bind(0, '127.0.0.1', () => r()));
  }

  /** Milliseconds to the answer of one A query for `name`; NaN if none within 2 s. */
  ask(peer: Peer, name: string): Promise<number> {
    const id = this.#id++ & 0xffff;
    const q = dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] });
    const t0 = performance.now();
    return new Promise<number>((resolve) => {
      const timer = setTimeout(() => finish(Number.NaN), 2000);
      const finish = (at: number): void => {
        clearTimeout(timer);
        this.#pending.delete(id);
        resolve(at - t0);
      };
      this.#pending.set(id, finish);
      this.#sock.send(q, peer.port, peer.host);
    });
  }

  close(): void {
    this.#sock.close();
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function pct(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number);
}

/** `queries` rounds; in each, every stub gets one query, spaced so each sees `rate` a second. */
async function measure(asker: Asker, peers: readonly Peer[], queries: number, rate: number, state: 'cold' | 'warm', offset: number): Promise<Row[]> {
  const ms = new Map<string, number[]>(peers.map((p) => [p.name, []]));
  const cpu0 = peers.map((p) => cpuMs(p.pid));
  for (let i = 0; i < queries; i++) {
    for (const p of peers) {
      ms.get(p.name)?.push(await asker.ask(p, `n${(offset + i * 7) % 1000}.test`));
      await sleep(1000 / rate / peers.length);
    }
  }
  return peers.map((p, i) => {
    const all = ms.get(p.name) ?? [];
    const got = all.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
    return { stub: p.name, state, p50: pct(got, 50), p90: pct(got, 90), p99: pct(got, 99), cpuMsPerQuery: (cpuMs(p.pid) - (cpu0[i] ?? 0)) / queries, lost: all.length - got.length, queries };
  });
}

interface BurstRow {
  readonly stub: string;
  /** Medians over the rounds: CPU ms the stub's threads ran for one burst, its median answer and its last, ms. */
  readonly cpuMs: number;
  readonly medianMs: number;
  readonly lastMs: number;
  readonly lost: number;
}

/** `rounds` times, each stub in turn: one query, a quiet second, `count` names at once. */
async function bursts(asker: Asker, peers: readonly Peer[], count: number, rounds: number): Promise<BurstRow[]> {
  const seen = new Map(peers.map((p) => [p.name, { cpu: [] as number[], median: [] as number[], last: [] as number[], lost: 0 }]));
  let next = 0;
  for (let r = 0; r < rounds; r++) {
    for (const p of peers) {
      const m = seen.get(p.name);
      if (!m) continue;
      await asker.ask(p, `n${next++ % 1000}.test`);
      await sleep(1000);
      const cpu0 = cpuMs(p.pid);
      const all = await Promise.all(Array.from({ length: count }, () => asker.ask(p, `n${next++ % 1000}.test`)));
      // Its last answers sent: the CPU of the burst, not of the next one.
      await sleep(50);
      m.cpu.push(cpuMs(p.pid) - cpu0);
      const got = all.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
      m.median.push(pct(got, 50));
      m.last.push(got.at(-1) ?? Number.NaN);
      m.lost += all.length - got.length;
    }
  }
  const med = (v: readonly number[]): number => pct([...v].sort((a, b) => a - b), 50);
  return peers.map((p) => {
    const m = seen.get(p.name);
    return { stub: p.name, cpuMs: med(m?.cpu ?? []), medianMs: med(m?.median ?? []), lastMs: med(m?.last ?? []), lost: m?.lost ?? 0 };
  });
}

/** `count` queries to each stub, 50 outstanding at a time: what a minute or two of browsing does to a fresh process. */
async function warmUp(asker: Asker, peers: readonly Peer[], count: number): Promise<void> {
  for (let i = 0; i < count; i += 50) await Promise.all(peers.flatMap((p) => Array.from({ length: 50 }, (_, j) => asker.ask(p, `n${(i + j) % 1000}.test`))));
  await sleep(2000);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { queries: { type: 'string' }, warm: { type: 'string' }, rate: { type: 'string' }, burst: { type: 'string' }, 'burst-rounds': { type: 'string' }, peers: { type: 'string' }, 'node-flags': { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    log(USAGE);
    return;
  }
  const queries = int(values.queries, 'queries', 200, 10, 10_000);
  const warm = int(values.warm, 'warm', 5000, 0, 100_000);
  const rate = int(values.rate, 'rate', 20, 1, 1000);
  const burst = int(values.burst, 'burst', 0, 0, 1000);
  const burstRounds = int(values['burst-rounds'], 'burst-rounds', 9, 1, 100);
  const names = (values.peers ?? `dotstub,stubby,unbound-fwd,${FLOOR_DOT}`).split(',').map((s) => s.trim()) as PeerName[];
  const known: readonly string[] = [...PEER_NAMES, FLOOR_DOT];
  for (const n of names) if (!known.includes(n)) throw new Error(`--peers: unknown peer "${n}"; choose from ${known.join(', ')}\n${USAGE}`);
  const out = path.resolve(values.out ?? path.join(ROOT, 'bench', 'results'));
  const nodeFlags = (values['node-flags'] ?? '').split(' ').filter(Boolean);
  const lab = await openLab(1000);
  const unhook = closeOnSignal(lab);
  const asker = new Asker();
  const rows: Row[] = [];
  let burstRows: BurstRow[] = [];
  try {
    await asker.open();
    const peers: Peer[] = [];
    for (const name of names) {
      // --node-flags: extra V8/node flags for dotstub only (what a flag does to the cold path).
      const p = await startPeer(name, { upstream: lab.upstream, dir: lab.dir, root: ROOT, nodeFlags });
      await waitReady(p);
      peers.push(p);
    }
    // Let start-up work (compiling, the first connection, the network watch) settle.
    await sleep(3000);
    log(`cold: ${queries} queries each at ${rate}/s`);
    rows.push(...(await measure(asker, peers, queries, rate, 'cold', 13)));
    if (warm > 0) {
      log(`warming each stub with ${warm} queries`);
      await warmUp(asker, peers, warm);
      log(`warm: ${queries} queries each at ${rate}/s`);
      rows.push(...(await measure(asker, peers, queries, rate, 'warm', 511)));
    }
    if (burst > 0) {
      log(`bursts: ${burst} names at once, ${burstRounds} per stub`);
      burstRows = await bursts(asker, peers, burst, burstRounds);
    }
  } finally {
    asker.close();
    await lab.close();
    unhook();
  }
  const meta = benchMeta(`unbound, DoT, 127.0.0.1`);
  const f = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : '—');
  // The best peer: the C stubs. The Node floor is printed against, never counted as a peer.
  const best = (state: string, key: 'p50' | 'p99'): number => Math.min(...rows.filter((r) => r.state === state && r.stub !== 'dotstub' && r.stub !== FLOOR_DOT).map((r) => r[key]));
  const floor = (state: string): Row | undefined => rows.find((r) => r.state === state && r.stub === FLOOR_DOT);
  const overFloor = (r: Row, key: 'p50' | 'cpuMsPerQuery'): string => {
    const fl = floor(r.state);
    return fl && r.stub !== FLOOR_DOT ? f(r[key] / fl[key]) : '—';
  };
  const lines = [
    '# A desktop\'s rate: one query at a time, cold and warm',
    '',
    `${meta.date}, commit ${meta.commit}${meta.proxyDirty ? '+dirty' : ''}, node ${process.version}. Loopback; each stub forwards over DoT to one unbound; caches off; ${queries} queries per stub and state at ${rate}/s, the stubs in turn. Cold: just started (3 s settle); warm: after ${warm} queries each. CPU: all threads (schedstat), the kernel's work for the stub's syscalls included. Reproduce: \`npm run bench:lowrate -- --queries ${queries} --warm ${warm} --rate ${rate}${burst > 0 ? ` --burst ${burst} --burst-rounds ${burstRounds}` : ''} --peers ${names.join(',')}${nodeFlags.length ? ` --node-flags "${nodeFlags.join(' ')}"` : ''}\`.`,
    '',
    '| stub | state | p50 ms | p90 ms | p99 ms | p50 ÷ best peer | p99 ÷ best peer | CPU ms per query | p50 ÷ Node floor | CPU ÷ Node floor | lost |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.stub} | ${r.state} | ${f(r.p50)} | ${f(r.p90)} | ${f(r.p99)} | ${f(r.p50 / best(r.state, 'p50'))} | ${f(r.p99 / best(r.state, 'p99'))} | ${r.cpuMsPerQuery.toFixed(3)} | ${overFloor(r, 'p50')} | ${overFloor(r, 'cpuMsPerQuery')} | ${r.lost} |`),
    '',
    `The best peer is the best C stub (stubby, unbound as a forwarder). ${FLOOR_DOT} (bench/floor-dot.mjs) is not a peer but Node's own floor on this path: UDP in, one verified DoT connection, IDs swapped, nothing else, on dotstub's node and flags.`,
    '',
    'Goal (issue 32): dotstub\'s p50 at 20 q/s ≤ 1.1× the best peer\'s, cold and warm; p99 ≤ 1.3×.',
    '',
  ];
  if (burstRows.length > 0) {
    const floorBurst = burstRows.find((r) => r.stub === FLOOR_DOT);
    lines.push(
      `## ${burst} names at once, after one query and a quiet second (${burstRounds} rounds per stub, medians)`,
      '',
      '| stub | CPU ms per burst | ÷ Node floor | median answer ms | last answer ms | lost |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...burstRows.map((r) => `| ${r.stub} | ${f(r.cpuMs)} | ${floorBurst && r.stub !== FLOOR_DOT ? f(r.cpuMs / floorBurst.cpuMs) : '—'} | ${f(r.medianMs)} | ${f(r.lastMs)} | ${r.lost} |`),
      '',
      'CPU: all of the stub\'s threads while it took the burst in and answered it (schedstat), the kernel\'s work for its syscalls included.',
      '',
    );
  }
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'lowrate.md'), lines.join('\n'));
  fs.writeFileSync(path.join(out, 'lowrate.json'), `${JSON.stringify({ meta, queries, warm, rate, rows, ...(burst > 0 ? { burst, burstRounds, burstRows } : {}) }, null, 2)}\n`);
  process.stdout.write(`${lines.join('\n')}\n`);
  log(`wrote ${path.relative(ROOT, path.join(out, 'lowrate.md'))} and lowrate.json`);
}

main().catch((err: unknown) => {
  log(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
