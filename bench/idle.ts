/**
 * `npm run bench:idle`: what each stub costs the machine when nobody asks
 * (issue 23: "idle means idle"). dotstub and its peers (stubby, dnsdist,
 * unbound as a forwarder) run side by side against one upstream unbound on
 * loopback, with each one's default cache; each is used for a while (a few
 * hundred lookups at 20 a second, as a desktop does), then left alone. After
 * `--quiet` seconds without a query, each is watched for `--measure` seconds:
 *
 * - wake-ups: context switches of all its threads (voluntary and not) from
 *   /proc/PID/task/TID/status: every time the process left the CPU because it
 *   waited or was preempted, i.e. every time something woke it;
 * - CPU: the time its threads ran, from /proc/PID/task/TID/schedstat (ns;
 *   /proc/PID/stat's utime+stime count whole 10 ms ticks, too coarse for a
 *   process that runs a few milliseconds a minute).
 *
 * Both are reported per minute, with the process's RSS. Every process stops
 * at the end (and on Ctrl-C); traffic stays on 127.0.0.1.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runDnsperf, writeQueryFile } from './dnsperf.js';
import { benchMeta, buildProxy, closeOnSignal, openLab, ROOT } from './lab.js';
import { PEER_NAMES, startPeer, type Peer, type PeerName } from './peers.js';
import { processMemory } from './procstat.js';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

const USAGE = 'usage: npm run bench:idle -- [--quick] [--quiet S] [--measure S] [--peers dotstub,stubby,…] [--out DIR] [--no-build]';

interface IdleSample {
  readonly peer: PeerName;
  readonly notes: string;
  /** Context switches per minute, all threads. */
  readonly wakeupsPerMinute: number;
  /** CPU milliseconds per minute. */
  readonly cpuMsPerMinute: number;
  readonly rssMiB: number;
  readonly threads: number;
}

/** Voluntary + involuntary context switches of every thread of `pid` so far, and the CPU time its threads ran (ms). */
export function contextSwitches(pid: number): { readonly switches: number; readonly threads: number; readonly cpuMs: number } {
  let switches = 0;
  let threads = 0;
  let cpuNs = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let status: string;
    try {
      status = fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    threads++;
    for (const m of status.matchAll(/^(?:voluntary|nonvoluntary)_ctxt_switches:\s+(\d+)$/gm)) switches += Number(m[1]);
    try {
      // schedstat: time on the CPU (ns), time waiting to run (ns), timeslices.
      cpuNs += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return { switches, threads, cpuMs: cpuNs / 1e6 };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean' },
      quiet: { type: 'string' },
      measure: { type: 'string' },
      peers: { type: 'string' },
      out: { type: 'string' },
      'no-build': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const seconds = (v: string | undefined, fallback: number, flag: string): number => {
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1 || n > 3600) throw new Error(`--${flag} ${v}: a whole number of seconds from 1 to 3600\n${USAGE}`);
    return n;
  };
  const quick = values.quick ?? false;
  const quietS = seconds(values.quiet, quick ? 20 : 60, 'quiet');
  const measureS = seconds(values.measure, quick ? 20 : 60, 'measure');
  const peers = (values.peers ?? PEER_NAMES.join(',')).split(',').map((p) => p.trim()) as PeerName[];
  for (const p of peers) if (!(PEER_NAMES as readonly string[]).includes(p)) throw new Error(`--peers: unknown peer "${p}"\n${USAGE}`);
  const out = values.out ?? path.join(ROOT, 'bench', 'results');

  if (!values['no-build']) buildProxy(log);
  const lab = await openLab(1000);
  const unhook = closeOnSignal(lab);
  try {
    const started: Peer[] = [];
    for (const name of peers) started.push(await startPeer(name, { dir: lab.dir, upstream: lab.upstream, root: ROOT, caches: true }));
    // In use: 20 lookups a second for 15 s each, as a desktop in use asks (bounded: dnsperf stops after 15 s).
    const queryFile = writeQueryFile(lab.dir, 1000);
    log(`bench:idle: ${peers.join(', ')} in use for 15 s (20 lookups/s each), then ${quietS} s quiet, then ${measureS} s watched`);
    await Promise.all(started.map((p) => runDnsperf({ port: p.port, queryFile, seconds: 15, maxQps: 20, outstanding: 10, clients: 1, timeoutSeconds: 3 })));
    await new Promise((r) => setTimeout(r, quietS * 1000));
    const before = started.map((p) => contextSwitches(p.pid));
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, measureS * 1000));
    const minutes = (performance.now() - t0) / 60_000;
    const samples: IdleSample[] = started.map((p, i) => {
      const b = before[i] as (typeof before)[number];
      const cs = contextSwitches(p.pid);
      return {
        peer: p.name,
        notes: p.notes,
        wakeupsPerMinute: Math.round(((cs.switches - b.switches) / minutes) * 10) / 10,
        cpuMsPerMinute: Math.round(((cs.cpuMs - b.cpuMs) / minutes) * 100) / 100,
        rssMiB: Math.round((processMemory(p.pid).rss / 2 ** 20) * 10) / 10,
        threads: cs.threads,
      };
    });
    for (const s of samples) log(`${s.peer}: ${s.wakeupsPerMinute} wake-ups/min, ${s.cpuMsPerMinute} ms CPU/min, ${s.rssMiB} MiB, ${s.threads} threads`);
    const meta = benchMeta(`unbound ${lab.upstream.port}`);
    const name = quick ? 'idle-quick' : 'idle';
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, `${name}.json`), `${JSON.stringify({ meta, quietS, measureS, samples }, null, 2)}\n`);
    const md = [
      '# Idle: what each stub costs when nobody asks',
      '',
      `${meta.date}, commit ${meta.commit}, node ${meta.node}, ${meta.cores} × ${meta.cpuModel}. Each stub used for 15 s (20 lookups/s, its own cache on), then ${quietS} s without a query, then watched for ${measureS} s. Wake-ups: context switches of all its threads (/proc/PID/task/*/status); CPU: time its threads ran (/proc/PID/task/*/schedstat, ns). Reproduce: \`npm run bench:idle${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`.`,
      '',
      '| stub | wake-ups per minute | CPU ms per minute | RSS MiB | threads | notes |',
      '| --- | ---: | ---: | ---: | ---: | --- |',
      ...samples.map((s) => `| ${s.peer} | ${s.wakeupsPerMinute} | ${s.cpuMsPerMinute} | ${s.rssMiB} | ${s.threads} | ${s.notes} |`),
      '',
      'Goal (issue 23): dotstub ≤ 10 wake-ups and ≤ 5 ms CPU per minute after a minute without queries.',
      '',
    ].join('\n');
    fs.writeFileSync(path.join(out, `${name}.md`), md);
    log(`wrote ${path.join(out, `${name}.md`)}`);
  } finally {
    unhook();
    await lab.close();
  }
}

main().catch((err: unknown) => {
  log(`bench:idle: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
