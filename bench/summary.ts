/**
 * From raw runs to the numbers in the table. Absolute numbers on a noisy
 * 2-core machine don't compare across runs; ratios against stubby measured
 * in the same round do, so every ratio is taken per round, then the median.
 */
import type { RunSample } from './measure.js';
import type { PeerName } from './peers.js';
import { max, median, min } from './stats.js';

export interface PeerRecord {
  readonly name: PeerName;
  readonly notes: string;
  readonly version: string;
  /** Unthrottled runs, one per round. */
  readonly max: RunSample[];
  /** Runs at the fixed rate, one per round. */
  readonly latency: RunSample[];
  /** At the end of the bench, bytes. */
  readonly rss: number;
  readonly hwm: number;
}

export interface PeerSummary {
  readonly name: PeerName;
  readonly notes: string;
  readonly version: string;
  readonly maxQps: number;
  readonly maxQpsMin: number;
  readonly maxQpsMax: number;
  /** Median over rounds of this peer's max qps / stubby's in the same round. */
  readonly qpsVsStubby: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p50VsStubby: number;
  readonly p99VsStubby: number;
  readonly cpuUsPerQueryAtMax: number;
  readonly cpuUsPerQueryAtRate: number;
  /** Median over rounds of this peer's CPU per query (unthrottled) / the floor's in the same round (NaN without the floor). */
  readonly cpuVsFloor: number;
  /** Median over rounds of this peer's max qps / the floor's, and / dnsdist's, in the same round. */
  readonly qpsVsFloor: number;
  readonly qpsVsDnsdist: number;
  /** Median over the unthrottled runs of the upstream's queries per answer (RunSample.upstreamPerAnswer): 0 = all from cache. */
  readonly upstreamPerAnswer: number;
  /** Shares of one core (100 = one core busy) during the max runs. */
  readonly peerCpuPct: number;
  readonly upstreamCpuPct: number;
  readonly dnsperfCpuPct: number;
  /** Everything else on the machine (other people's tests, the bench itself), % of a core. */
  readonly otherCpuPct: number;
  /** Share of all the machine's cores busy during the max runs, 0..100. */
  readonly machineBusyPct: number;
  readonly rssMiB: number;
  readonly hwmMiB: number;
  /** Summed over every measured run. */
  readonly lost: number;
  readonly errors: number;
  /** Runs left out of the medians (over 1% lost or failed), of all runs. */
  readonly invalidRuns: number;
  readonly runs: number;
}

export interface TargetVerdict {
  readonly qpsVsStubby: number;
  readonly p50VsStubby: number;
  readonly p99VsStubby: number;
  readonly throughputMet: boolean;
  readonly latencyMet: boolean;
}

const MiB = 1024 * 1024;

/** Per-round ratio of `pick` between `samples` and `reference`, matched by round; then the median. */
function ratio(samples: readonly RunSample[], reference: readonly RunSample[] | undefined, pick: (s: RunSample) => number | undefined): number {
  if (!reference) return Number.NaN;
  const ratios: number[] = [];
  for (const s of samples) {
    const r = reference.find((x) => x.round === s.round);
    const a = pick(s);
    const b = r ? pick(r) : undefined;
    if (s.valid && r?.valid && a !== undefined && b !== undefined && b > 0) ratios.push(a / b);
  }
  return median(ratios);
}

const pct = (cpu: (s: RunSample) => number) => (s: RunSample) => (cpu(s) / s.wallSeconds) * 100;

export function summarise(records: readonly PeerRecord[]): PeerSummary[] {
  const stubby = records.find((r) => r.name === 'stubby');
  const floor = records.find((r) => r.name === 'floor');
  const dnsdist = records.find((r) => r.name === 'dnsdist');
  return records.map((raw) => {
    const all = [...raw.max, ...raw.latency];
    // Medians only over runs where the peer answered (almost) everything.
    const r = { ...raw, max: raw.max.filter((s) => s.valid), latency: raw.latency.filter((s) => s.valid) };
    return {
      name: r.name,
      notes: r.notes,
      version: r.version,
      maxQps: median(r.max.map((s) => s.qps)),
      maxQpsMin: min(r.max.map((s) => s.qps)),
      maxQpsMax: max(r.max.map((s) => s.qps)),
      qpsVsStubby: ratio(r.max, stubby?.max, (s) => s.qps),
      p50Ms: median(r.latency.map((s) => s.p50Ms ?? Number.NaN)),
      p99Ms: median(r.latency.map((s) => s.p99Ms ?? Number.NaN)),
      p50VsStubby: ratio(r.latency, stubby?.latency, (s) => s.p50Ms),
      p99VsStubby: ratio(r.latency, stubby?.latency, (s) => s.p99Ms),
      cpuUsPerQueryAtMax: median(r.max.map((s) => s.cpuUsPerQuery)),
      cpuUsPerQueryAtRate: median(r.latency.map((s) => s.cpuUsPerQuery)),
      cpuVsFloor: ratio(r.max, floor?.max, (s) => s.cpuUsPerQuery),
      qpsVsFloor: ratio(r.max, floor?.max, (s) => s.qps),
      qpsVsDnsdist: ratio(r.max, dnsdist?.max, (s) => s.qps),
      upstreamPerAnswer: median(r.max.map((s) => s.upstreamPerAnswer)),
      peerCpuPct: median(r.max.map(pct((s) => s.peerCpuSeconds))),
      upstreamCpuPct: median(r.max.map(pct((s) => s.upstreamCpuSeconds))),
      dnsperfCpuPct: median(r.max.map(pct((s) => s.dnsperfCpuSeconds))),
      otherCpuPct: median(r.max.map(pct((s) => s.otherCpuSeconds))),
      machineBusyPct: median(r.max.map((s) => s.machineBusy * 100)),
      rssMiB: r.rss / MiB,
      hwmMiB: r.hwm / MiB,
      lost: all.reduce((a, s) => a + s.lost, 0),
      errors: all.reduce((a, s) => a + s.errors, 0),
      invalidRuns: all.filter((s) => !s.valid).length,
      runs: all.length,
    };
  });
}

/** The target for this cut: ≥ 2× stubby's throughput, p50 and p99 no worse than stubby's. */
export function verdict(summary: readonly PeerSummary[]): TargetVerdict | undefined {
  const d = summary.find((s) => s.name === 'dotstub');
  if (!d || !summary.some((s) => s.name === 'stubby')) return undefined;
  return {
    qpsVsStubby: d.qpsVsStubby,
    p50VsStubby: d.p50VsStubby,
    p99VsStubby: d.p99VsStubby,
    throughputMet: d.qpsVsStubby >= 2,
    latencyMet: d.p50VsStubby <= 1 && d.p99VsStubby <= 1,
  };
}

/**
 * What the CPU numbers say limits dotstub's throughput. A Node process does
 * its JavaScript on one thread, so a peer near 100% of one core is CPU-bound
 * in itself; near 100% machine-wide means the cores are shared out (dnsperf,
 * the upstream and the peer compete for 2 cores) and no peer can go faster.
 */
export function limits(summary: readonly PeerSummary[], cores: number): string[] {
  const out: string[] = [];
  for (const s of summary) {
    if (s.invalidRuns > 0) {
      out.push(`${s.name}: ${s.invalidRuns} of ${s.runs} runs lost or failed over 1% of their queries (${s.lost} lost, ${s.errors} non-NOERROR answers) and are left out of the medians.`);
    }
    if (!Number.isFinite(s.maxQps)) continue;
    const share = `${s.name}: ${s.peerCpuPct.toFixed(0)}% of a core itself, upstream unbound ${s.upstreamCpuPct.toFixed(0)}%, dnsperf ${s.dnsperfCpuPct.toFixed(0)}%, other programs ${s.otherCpuPct.toFixed(0)}%, machine ${s.machineBusyPct.toFixed(0)}% busy (${cores} cores)`;
    let why: string;
    if (s.name !== 'dnsdist' && s.peerCpuPct >= 85) why = 'bound by its own CPU (one core)';
    else if (s.machineBusyPct >= 90) why = s.otherCpuPct >= 25 ? 'bound by the machine: all cores busy, partly with other programs (noise)' : 'bound by the machine: all cores busy';
    else if (s.upstreamCpuPct >= 85) why = 'bound by the upstream unbound (one thread)';
    else why = 'no process saturated: bound by round trips/queueing (outstanding queries, one connection)';
    out.push(`${share} → ${why}.`);
  }
  return out;
}
