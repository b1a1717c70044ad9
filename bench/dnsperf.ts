/**
 * Runs dnsperf (DNS-OARC, Debian package) over UDP against one loopback port
 * and parses what it prints: the closing statistics and, with `verbose`, the
 * one line per query (`> NOERROR n1.test A 0.001951`) that gives latencies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const DNSPERF_BIN = process.env.DNSPERF_BIN ?? '/usr/bin/dnsperf';

export interface DnsperfOptions {
  readonly port: number;
  readonly queryFile: string;
  /** Seconds of sending (-l). */
  readonly seconds: number;
  /** Rate cap, queries per second (-Q); none = as fast as answers come back. */
  readonly maxQps?: number;
  /** Queries outstanding at once (-q). */
  readonly outstanding: number;
  /** Client sockets (-c). */
  readonly clients: number;
  /** Seconds before a query counts as lost (-t). */
  readonly timeoutSeconds: number;
  /** Record every query's latency (-v). */
  readonly verbose?: boolean;
}

export interface DnsperfResult {
  readonly sent: number;
  readonly completed: number;
  readonly lost: number;
  /** Response code → count, e.g. { NOERROR: 19998, SERVFAIL: 2 }. */
  readonly rcodes: Readonly<Record<string, number>>;
  readonly runSeconds: number;
  readonly qps: number;
  readonly avgLatencyMs: number;
  /** Per-query latencies in ms of the NOERROR answers only; empty unless verbose. */
  readonly latenciesMs: Float64Array;
}

const running = new Set<ChildProcess>();

/** Kills any dnsperf still running (on Ctrl-C or error). */
export function killRunning(): void {
  for (const c of running) c.kill('SIGKILL');
}

export class DnsperfError extends Error {
  readonly code = 'BENCH_DNSPERF';
}

/** One query file line per name and type: n0.test A, n0.test AAAA, n1.test A, … */
export function writeQueryFile(dir: string, names: number): string {
  const lines: string[] = [];
  for (let i = 0; i < names; i++) lines.push(`n${i}.test A`, `n${i}.test AAAA`);
  const file = path.join(dir, 'queries.txt');
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function statNumber(text: string, label: string): number {
  const m = new RegExp(`${label}:\\s+([\\d.]+)`).exec(text);
  if (!m) throw new DnsperfError(`dnsperf printed no "${label}" line`);
  return Number(m[1]);
}

/** Parses dnsperf's output; exported for tests of the parser. */
export function parseDnsperf(text: string): DnsperfResult {
  const latencies: number[] = [];
  for (const line of text.split('\n')) {
    // `> NOERROR n0.test A 0.009068`; lost queries print `> T …` and carry no latency.
    if (line.charCodeAt(0) !== 62 /* '>' */) continue;
    const parts = line.split(' ');
    const seconds = Number(parts[parts.length - 1]);
    if (parts.length >= 5 && parts[1] === 'NOERROR' && Number.isFinite(seconds)) latencies.push(seconds * 1000);
  }
  const rcodes: Record<string, number> = {};
  const codes = /Response codes:\s+(.*)/.exec(text)?.[1] ?? '';
  for (const m of codes.matchAll(/([A-Z]+) (\d+) \(/g)) rcodes[m[1] ?? '?'] = Number(m[2]);
  return {
    sent: statNumber(text, 'Queries sent'),
    completed: statNumber(text, 'Queries completed'),
    lost: statNumber(text, 'Queries lost'),
    rcodes,
    runSeconds: statNumber(text, 'Run time \\(s\\)'),
    qps: statNumber(text, 'Queries per second'),
    avgLatencyMs: statNumber(text, 'Average Latency \\(s\\)') * 1000,
    latenciesMs: Float64Array.from(latencies),
  };
}

/** Runs dnsperf once; it is killed if it outlives its time limit plus a margin. */
export async function runDnsperf(o: DnsperfOptions): Promise<DnsperfResult> {
  const args = [
    '-s', '127.0.0.1',
    '-p', String(o.port),
    '-m', 'udp',
    '-d', o.queryFile,
    '-l', String(o.seconds),
    '-q', String(o.outstanding),
    '-c', String(o.clients),
    '-T', '1',
    '-t', String(o.timeoutSeconds),
  ];
  if (o.maxQps !== undefined) args.push('-Q', String(o.maxQps));
  if (o.verbose) args.push('-v');
  const child = spawn(DNSPERF_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const out: Buffer[] = [];
  let err = '';
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), (o.seconds + o.timeoutSeconds + 15) * 1000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c) => resolve(c));
  }).finally(() => clearTimeout(killer));
  const text = Buffer.concat(out).toString();
  if (code !== 0) throw new DnsperfError(`dnsperf exited with ${code}: ${err.trim() || text.slice(-500)}`);
  return parseDnsperf(text);
}
