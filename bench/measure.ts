/**
 * One measured dnsperf run against one peer, with the CPU each process
 * spent during it: the peer, the upstream unbound, dnsperf itself, and the
 * whole machine (to tell a slow peer from saturated cores).
 */
import { runDnsperf, type DnsperfOptions, type DnsperfResult } from './dnsperf.js';
import type { Peer } from './peers.js';
import { childrenCpu, machineCpu, processCpu } from './procstat.js';
import { percentile } from './stats.js';

export interface RunSample {
  readonly round: number;
  readonly sent: number;
  readonly completed: number;
  readonly lost: number;
  /** Answers other than NOERROR (SERVFAIL, REFUSED, …): a peer that fails fast must not look fast. */
  readonly errors: number;
  /** NOERROR answers per second ("goodput"): SERVFAILs answered fast don't count. */
  readonly qps: number;
  /** dnsperf's own figure: every answer, whatever its code. */
  readonly answeredQps: number;
  /** False when more than 1% of the queries were lost or failed: such a run is left out of the medians. */
  readonly valid: boolean;
  readonly rcodes: Readonly<Record<string, number>>;
  /** Wall-clock seconds of the whole dnsperf process (sending plus draining). */
  readonly wallSeconds: number;
  readonly peerCpuSeconds: number;
  readonly upstreamCpuSeconds: number;
  readonly dnsperfCpuSeconds: number;
  /** Busy share of all cores over the run, 0..1. */
  readonly machineBusy: number;
  /** CPU seconds the rest of the machine used meanwhile (other programs: noise). */
  readonly otherCpuSeconds: number;
  /** Peer CPU per NOERROR answer, µs. */
  readonly cpuUsPerQuery: number;
  /**
   * Queries the upstream unbound received during the run, per NOERROR
   * answer the peer gave: 0 when every answer came from the peer's cache,
   * 1 when every query was forwarded. NaN when not counted (the floor has
   * no upstream; a lab without unbound-control).
   */
  readonly upstreamPerAnswer: number;
  /** Latency percentiles in ms, from per-query lines (latency runs only). */
  readonly p50Ms?: number;
  readonly p90Ms?: number;
  readonly p99Ms?: number;
  readonly p999Ms?: number;
  readonly maxMs?: number;
  readonly avgMs: number;
}

export interface MeasureOptions extends Omit<DnsperfOptions, 'port'> {
  readonly round: number;
  readonly upstreamPid: number;
  /** The upstream's count of queries received so far, read before and after the run; absent: not counted. */
  readonly upstreamQueries?: () => number;
}

export async function measure(peer: Peer, o: MeasureOptions): Promise<RunSample> {
  const peer0 = processCpu(peer.pid);
  const up0 = processCpu(o.upstreamPid);
  const kids0 = childrenCpu();
  const q0 = o.upstreamQueries?.();
  const m0 = machineCpu();
  const t0 = performance.now();
  const r: DnsperfResult = await runDnsperf({ ...o, port: peer.port });
  const wallSeconds = (performance.now() - t0) / 1000;
  const m1 = machineCpu();
  const peerCpuSeconds = processCpu(peer.pid) - peer0;
  const upstreamCpuSeconds = processCpu(o.upstreamPid) - up0;
  const dnsperfCpuSeconds = childrenCpu() - kids0;
  const q1 = o.upstreamQueries?.();
  const ok = r.rcodes.NOERROR ?? 0;
  const sample: RunSample = {
    round: o.round,
    sent: r.sent,
    completed: r.completed,
    lost: r.lost,
    errors: r.completed - ok,
    qps: r.runSeconds > 0 ? ok / r.runSeconds : 0,
    answeredQps: r.qps,
    valid: r.sent > 0 && r.sent - ok <= r.sent * 0.01,
    rcodes: r.rcodes,
    wallSeconds,
    peerCpuSeconds,
    upstreamCpuSeconds,
    dnsperfCpuSeconds,
    machineBusy: m1.total > m0.total ? (m1.busy - m0.busy) / (m1.total - m0.total) : Number.NaN,
    otherCpuSeconds: Math.max(0, m1.busy - m0.busy - peerCpuSeconds - upstreamCpuSeconds - dnsperfCpuSeconds),
    cpuUsPerQuery: ok > 0 ? (peerCpuSeconds / ok) * 1e6 : Number.NaN,
    upstreamPerAnswer: q0 !== undefined && q1 !== undefined && ok > 0 ? (q1 - q0) / ok : Number.NaN,
    avgMs: r.avgLatencyMs,
  };
  if (r.latenciesMs.length === 0) return sample;
  const sorted = r.latenciesMs.sort();
  return {
    ...sample,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    p999Ms: percentile(sorted, 99.9),
    maxMs: sorted[sorted.length - 1] ?? Number.NaN,
  };
}
