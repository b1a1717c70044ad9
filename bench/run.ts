/**
 * `npm run bench`: dotstub against stubby, dnsdist and unbound-as-forwarder,
 * each taking UDP on loopback from dnsperf and forwarding over DoT to one
 * shared upstream unbound. See bench/README.md for the flags and columns.
 *
 * `npm run bench -- paper` and `-- desktop`: the link-lab experiments
 * (bench/paper.ts).
 *
 * `npm run bench -- --profile`: instead, one unthrottled run against dotstub
 * under `node --cpu-prof`, summarised as its top self-time functions.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runDnsperf, writeQueryFile } from './dnsperf.js';
import { benchMeta, buildProxy, closeOnSignal, openLab, ROOT, versionOf, type Lab } from './lab.js';
import { measure, type MeasureOptions, type RunSample } from './measure.js';
import { FLOOR, FLOOR_2, PEER_NAMES, startPeer, type Peer, type PeerName } from './peers.js';
import { renderPng, svgChart } from './plot.js';
import { processMemory } from './procstat.js';
import { profileMarkdown, summariseProfile } from './profile.js';
import { markdown, resultsName, writeResults, type BenchResults, type BenchSettings } from './report.js';
import { limits, summarise, verdict, type PeerRecord } from './summary.js';
import { wholeNumberFlags } from './args.js';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

interface Options extends BenchSettings {
  readonly build: boolean;
  readonly out: string;
  readonly profile: boolean;
  readonly dotstubRoot: string;
}

const USAGE = `usage: npm run bench -- paper|desktop [--quick] [--only …]   (the link-lab experiments; see bench/README.md)
       npm run bench -- [--quick] [--rounds N] [--seconds S] [--rate-seconds S] [--rate QPS]
                        [--peers dotstub,stubby,dnsdist,unbound-fwd,floor] [--outstanding N] [--clients N]
                        [--names N] [--caches]   (each peer's own cache on, as users start it: latest-caches.md)
                        [--dotstub-root DIR]     (the dotstub of another checkout, built, e.g. an older commit's worktree)
                        [--out DIR] [--no-build] [--profile]`;

const int = wholeNumberFlags(USAGE);

function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean' },
      rounds: { type: 'string' },
      seconds: { type: 'string' },
      'rate-seconds': { type: 'string' },
      rate: { type: 'string' },
      peers: { type: 'string' },
      outstanding: { type: 'string' },
      clients: { type: 'string' },
      names: { type: 'string' },
      caches: { type: 'boolean' },
      'dotstub-root': { type: 'string' },
      out: { type: 'string' },
      'no-build': { type: 'boolean' },
      profile: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const quick = values.quick ?? false;
  // The floor (a Node server that only flips the header) runs beside the peers unless --peers leaves it out.
  const known: readonly string[] = [...PEER_NAMES, FLOOR, FLOOR_2];
  const peers = (values.peers ?? known.join(',')).split(',').map((p) => p.trim());
  for (const p of peers) {
    if (!known.includes(p)) throw new Error(`--peers: unknown peer "${p}"; choose from ${known.join(', ')}`);
  }
  return {
    rounds: int(values.rounds, 'rounds', quick ? 2 : 5, 1, 20),
    maxSeconds: int(values.seconds, 'seconds', quick ? 4 : 6, 1, 120),
    rateSeconds: int(values['rate-seconds'], 'rate-seconds', quick ? 4 : 6, 1, 120),
    rateQps: int(values.rate, 'rate', 2000, 1, 1_000_000),
    warmupSeconds: quick ? 1 : 2,
    outstanding: int(values.outstanding, 'outstanding', 200, 1, 10_000),
    clients: int(values.clients, 'clients', 4, 1, 256),
    timeoutSeconds: 3,
    names: int(values.names, 'names', 1000, 1, 100_000),
    caches: values.caches ?? false,
    dotstubRoot: path.resolve(values['dotstub-root'] ?? ROOT),
    peers,
    build: !values['no-build'],
    out: path.resolve(values.out ?? path.join(ROOT, 'bench', 'results')),
    profile: values.profile ?? false,
  };
}

function settingsOf(o: Options): BenchSettings {
  const { build: _build, out: _out, profile: _profile, ...settings } = o;
  return settings;
}

/** Rounds rotate the peers' order so that no peer always runs first, or right after the same neighbour. */
function rotated<T>(items: readonly T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

function brief(s: RunSample): string {
  const lat = s.p50Ms !== undefined ? `p50 ${s.p50Ms.toFixed(3)} ms, p99 ${(s.p99Ms ?? Number.NaN).toFixed(3)} ms` : `${s.qps.toFixed(0)} qps`;
  const codes = Object.entries(s.rcodes).filter(([c]) => c !== 'NOERROR').map(([c, n]) => `${c} ${n}`).join(', ');
  const bad = s.lost || s.errors ? `, LOST ${s.lost}${codes ? `, ${codes}` : ''}${s.valid ? '' : ' (run left out)'}` : '';
  return `${lat}, peer CPU ${s.cpuUsPerQuery.toFixed(1)} µs/query${bad}`;
}

async function benchmark(o: Options, lab: Lab): Promise<void> {
  const queryFile = writeQueryFile(lab.dir, o.names);
  const peers: Peer[] = [];
  const skipped: string[] = [];
  for (const name of o.peers as PeerName[]) {
    try {
      peers.push(await startPeer(name, { upstream: lab.upstream, dir: lab.dir, root: name === 'dotstub' ? o.dotstubRoot : ROOT, caches: o.caches }));
      log(`started ${name} on 127.0.0.1:${peers[peers.length - 1]?.port}`);
    } catch (err) {
      // A missing or broken peer costs its row, not the run (but dotstub is the point of the bench).
      if (name === 'dotstub') throw err;
      skipped.push(name);
      log(`warning: ${name} skipped: ${(err as Error).message}`);
    }
  }
  const common = { queryFile, outstanding: o.outstanding, clients: o.clients, timeoutSeconds: o.timeoutSeconds, upstreamPid: lab.upstream.process.pid ?? 0, upstreamQueries: () => lab.upstream.queriesSoFar() };
  for (const p of peers) {
    await runDnsperf({ ...common, port: p.port, seconds: o.warmupSeconds });
  }
  const records = new Map<PeerName, { max: RunSample[]; latency: RunSample[] }>(peers.map((p) => [p.name, { max: [], latency: [] }]));
  for (let round = 1; round <= o.rounds; round++) {
    for (const p of rotated(peers, round - 1)) {
      const rec = records.get(p.name);
      if (!rec) continue;
      const max = await measure(p, { ...common, round, seconds: o.maxSeconds } satisfies MeasureOptions);
      rec.max.push(max);
      const rate = await measure(p, { ...common, round, seconds: o.rateSeconds, maxQps: o.rateQps, verbose: true });
      rec.latency.push(rate);
      log(`round ${round}/${o.rounds} ${p.name.padEnd(11)} max ${max.qps.toFixed(0).padStart(6)} qps (${brief(max)}) | @${o.rateQps}: ${brief(rate)}`);
    }
  }
  const peerRecords: PeerRecord[] = peers.map((p) => {
    const mem = processMemory(p.pid);
    const rec = records.get(p.name) ?? { max: [], latency: [] };
    return { name: p.name, notes: p.notes, version: versionOf(p.name), ...rec, rss: mem.rss, hwm: mem.hwm };
  });
  const summary = summarise(peerRecords);
  const meta = benchMeta(`${versionOf('unbound')}, 1 thread, DoT, local data`);
  const results: BenchResults = {
    meta,
    settings: settingsOf(o),
    summary,
    target: verdict(summary),
    limits: [...limits(summary, meta.cores), ...skipped.map((s) => `${s} was skipped: it did not start.`)],
    records: peerRecords,
  };
  const { json, md } = writeResults(o.out, results);
  const svg = path.join(o.out, `${resultsName(results.settings)}.svg`);
  const title = `dotstub vs stub peers over DoT (${meta.cores} cores, ${o.rounds} rounds)`;
  fs.writeFileSync(svg, svgChart(summary, title, `${meta.date.slice(0, 16).replace('T', ' ')} UTC, commit ${meta.commit}${meta.proxyDirty ? '+dirty' : ''}`, o.rateQps));
  const png = renderPng(svg);
  process.stdout.write(`\n${markdown(results)}\n`);
  log(`wrote ${path.relative(ROOT, json)}, ${path.relative(ROOT, md)}, ${path.relative(ROOT, svg)}${png.png ? `, ${path.relative(ROOT, png.png)}` : ` (no PNG: ${png.error})`}`);
}

async function profile(o: Options, lab: Lab): Promise<void> {
  const queryFile = writeQueryFile(lab.dir, o.names);
  const profDir = path.join(lab.dir, 'cpuprof');
  const peer = await startPeer('dotstub', { upstream: lab.upstream, dir: lab.dir, root: ROOT, caches: o.caches, nodeFlags: ['--cpu-prof', '--cpu-prof-dir', profDir] });
  const common = { queryFile, outstanding: o.outstanding, clients: o.clients, timeoutSeconds: o.timeoutSeconds, port: peer.port };
  await runDnsperf({ ...common, seconds: o.warmupSeconds });
  const r = await runDnsperf({ ...common, seconds: o.maxSeconds });
  log(`profiled run: ${r.qps.toFixed(0)} qps, ${r.lost} lost`);
  // SIGTERM lets the CLI stop cleanly, and node writes the profile as it exits.
  await peer.stop();
  const file = fs.existsSync(profDir) ? fs.readdirSync(profDir).find((f) => f.endsWith('.cpuprofile')) : undefined;
  if (!file) throw new Error(`dotstub wrote no CPU profile (did it exit cleanly on SIGTERM?)\n${peer.output()}`);
  const summary = summariseProfile(path.join(profDir, file), ROOT);
  fs.mkdirSync(o.out, { recursive: true });
  fs.copyFileSync(path.join(profDir, file), path.join(o.out, 'dotstub.cpuprofile'));
  const meta = benchMeta(versionOf('unbound'));
  const context =
    `${meta.date}, commit ${meta.commit}${meta.proxyDirty ? ' (proxy/ had uncommitted changes)' : ''}, node ${meta.node}. ` +
    `Warm-up ${o.warmupSeconds} s, then ${o.maxSeconds} s of unthrottled dnsperf (-q ${o.outstanding} -c ${o.clients}) over UDP: ${r.qps.toFixed(0)} qps, ${r.lost} lost. ` +
    'The profile covers the whole process life (start-up, warm-up, the run, shutdown).';
  const md = profileMarkdown(summary, context);
  fs.writeFileSync(path.join(o.out, 'profile.md'), md);
  fs.writeFileSync(path.join(o.out, 'profile.json'), `${JSON.stringify({ meta, qps: r.qps, lost: r.lost, ...summary }, null, 2)}\n`);
  process.stdout.write(`\n${md}\n`);
  log(`wrote ${path.relative(ROOT, path.join(o.out, 'profile.md'))}, profile.json and dotstub.cpuprofile (open it in Chrome DevTools)`);
}

async function main(): Promise<void> {
  const [first, ...rest] = process.argv.slice(2);
  // `npm run bench -- paper …` and `-- desktop …`: the link-lab suites (bench/paper.ts).
  if (first === 'paper' || first === 'desktop') {
    const { runSuite } = await import('./paper.js');
    await runSuite(first, rest);
    return;
  }
  const o = parseOptions(process.argv.slice(2));
  if (o.build) buildProxy(log);
  const lab = await openLab(o.names);
  const release = closeOnSignal(lab);
  try {
    await (o.profile ? profile(o, lab) : benchmark(o, lab));
  } finally {
    release();
    await lab.close();
  }
}

main().catch((err: unknown) => {
  log(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
