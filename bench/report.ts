/**
 * The bench's outputs: a markdown report (also printed) and the JSON of
 * every run, so later tooling can recompute anything.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PeerRecord, PeerSummary, TargetVerdict } from './summary.js';

export interface BenchMeta {
  readonly date: string;
  readonly commit: string;
  /** Uncommitted changes under proxy/ when the bench ran (the build is of the working tree). */
  readonly proxyDirty: boolean;
  readonly node: string;
  readonly cores: number;
  readonly cpuModel: string;
  readonly upstream: string;
}

export interface BenchSettings {
  readonly rounds: number;
  readonly maxSeconds: number;
  readonly rateSeconds: number;
  readonly rateQps: number;
  readonly warmupSeconds: number;
  readonly outstanding: number;
  readonly clients: number;
  readonly timeoutSeconds: number;
  readonly names: number;
  /** Each peer's own cache on, as users start them (absent in results written before it existed: off). */
  readonly caches?: boolean;
  /** The checkout whose bin/dotstub.js ran (this one unless --dotstub-root). */
  readonly dotstubRoot?: string;
  readonly peers: readonly string[];
}

/** `latest` for the forwarding bench (caches off), `latest-caches` with each peer's cache on. */
export function resultsName(s: BenchSettings): string {
  return s.caches ? 'latest-caches' : 'latest';
}

export interface BenchResults {
  readonly meta: BenchMeta;
  readonly settings: BenchSettings;
  readonly summary: readonly PeerSummary[];
  readonly target: TargetVerdict | undefined;
  readonly limits: readonly string[];
  readonly records: readonly PeerRecord[];
}

function f(v: number, digits = 0): string {
  return Number.isFinite(v) ? v.toFixed(digits) : '–';
}

/** The share of a peer's answers the upstream never saw (its cache, or local answers), from the upstream's own query count. */
function fromCache(upstreamPerAnswer: number): string {
  return Number.isFinite(upstreamPerAnswer) ? `${(Math.max(0, 1 - upstreamPerAnswer) * 100).toFixed(1)} %` : '—';
}

function x(v: number): string {
  return Number.isFinite(v) ? `${v.toFixed(2)}×` : '–';
}

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`];
  for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
  return lines.join('\n');
}

export function markdown(r: BenchResults): string {
  const s = r.settings;
  const main = table(
    ['peer', 'max qps (median)', 'min–max', 'qps × stubby', `p50 ms @${s.rateQps}`, `p99 ms @${s.rateQps}`, 'p50 × stubby', 'p99 × stubby', 'CPU µs/query (max)', `CPU µs/query (@${s.rateQps})`, 'RSS MiB', 'peak RSS MiB', 'lost', 'errors', 'bad runs', 'notes'],
    r.summary.map((p) => [
      p.name,
      f(p.maxQps),
      `${f(p.maxQpsMin)}–${f(p.maxQpsMax)}`,
      x(p.qpsVsStubby),
      f(p.p50Ms, 3),
      f(p.p99Ms, 3),
      x(p.p50VsStubby),
      x(p.p99VsStubby),
      f(p.cpuUsPerQueryAtMax, 1),
      f(p.cpuUsPerQueryAtRate, 1),
      f(p.rssMiB, 1),
      f(p.hwmMiB, 1),
      String(p.lost),
      String(p.errors),
      `${p.invalidRuns}/${p.runs}`,
      p.notes,
    ]),
  );
  const cpu = table(
    ['peer', 'peer CPU (% of a core)', 'upstream unbound (%)', 'dnsperf (%)', 'other programs (%)', `machine busy (% of ${r.meta.cores} cores)`],
    r.summary.map((p) => [p.name, f(p.peerCpuPct), f(p.upstreamCpuPct), f(p.dnsperfCpuPct), f(p.otherCpuPct), f(p.machineBusyPct)]),
  );
  const floor = r.summary.some((p) => p.name === 'floor')
    ? table(
        ['peer', 'answered without the upstream', 'CPU µs/query (max)', 'CPU per query × the floor', 'max qps × the floor', 'max qps × dnsdist'],
        r.summary.filter((p) => p.name !== 'floor').map((p) => [p.name, fromCache(p.upstreamPerAnswer), f(p.cpuUsPerQueryAtMax, 1), x(p.cpuVsFloor), x(p.qpsVsFloor), x(p.qpsVsDnsdist)]),
      )
    : '';
  const t = r.target;
  const target = t
    ? [
        `- throughput: dotstub ${x(t.qpsVsStubby)} stubby (target ≥ 2×): **${t.throughputMet ? 'met' : 'not met'}**`,
        `- latency at ${s.rateQps} qps: p50 ${x(t.p50VsStubby)}, p99 ${x(t.p99VsStubby)} stubby's (target ≤ 1×): **${t.latencyMet ? 'met' : 'not met'}**`,
      ].join('\n')
    : '- (needs both dotstub and stubby in the run)';
  return [
    `# dotstub vs peers: UDP on loopback, DoT to one upstream unbound`,
    '',
    `${r.meta.date}, commit ${r.meta.commit}${r.meta.proxyDirty ? ' (proxy/ had uncommitted changes)' : ''}, node ${r.meta.node}, ${r.meta.cores} × ${r.meta.cpuModel}. Upstream: ${r.meta.upstream}.`,
    `${s.rounds} rounds; per round and peer: ${s.maxSeconds} s unthrottled (dnsperf -q ${s.outstanding} -c ${s.clients}), then ${s.rateSeconds} s at ${s.rateQps} qps; ${s.names} names × A/AAAA; ${s.caches ? 'each peer with its own cache on, as users start it' : 'caches off: every query is forwarded'}. Medians over rounds; ratios are per round against stubby in the same round, then the median.`,
    '',
    main,
    '',
    '## Target for this cut',
    '',
    target,
    '',
    ...(floor
      ? [
          '## Against the floor',
          '',
          'The floor is a Node UDP server on the same runtime and flags that sends each query back with its header flipped and does no DNS work (bench/floor-server.mjs): what one Node thread reaches here. Ratios per round, then the median. “answered without the upstream” counts the queries the upstream unbound received during each unthrottled run (unbound-control): a peer’s CPU per query is its cache hit’s cost only where that is near 100 %; below it, the rest were forwarded over DoT.',
          '',
          floor,
          '',
        ]
      : []),
    '## Where the CPU went during the unthrottled runs (medians)',
    '',
    cpu,
    '',
    '## What limits throughput',
    '',
    ...r.limits.map((l) => `- ${l}`),
    '',
  ].join('\n');
}

/** Writes latest.json and latest.md into `dir`; returns their paths. */
export function writeResults(dir: string, r: BenchResults): { json: string; md: string } {
  fs.mkdirSync(dir, { recursive: true });
  const json = path.join(dir, `${resultsName(r.settings)}.json`);
  const md = path.join(dir, `${resultsName(r.settings)}.md`);
  fs.writeFileSync(json, `${JSON.stringify(r, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`);
  fs.writeFileSync(md, markdown(r));
  return { json, md };
}
