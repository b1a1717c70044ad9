/**
 * dotstub's own fuzzer for its UDP and TCP listeners. Three processes besides
 * unbound (the real DoT upstream, test-support/unbound.ts):
 *
 *   traffic (fuzz-traffic.ts) ──UDP/TCP──► target (fuzz-target.ts: dotstub) ──TLS──► unbound
 *                                               ▲
 *   this process: a legitimate client ──────────┘  (UDP every 50 ms, TCP every 200 ms)
 *
 * It reports crashes (target exits; the target is restarted and the run
 * goes on), the target's RSS and open descriptors before and after, the
 * kernel's drop count on the target's UDP socket, and the legitimate
 * client's success rate: a correct answer within LEGIT_TIMEOUT_MS, asking
 * once more over UDP after a timeout, as stub resolvers do (glibc's
 * `timeout:1 attempts:2`): a datagram the kernel dropped from a socket
 * buffer the flood filled is lost for any UDP server, and what a user
 * notices is a lookup that failed, not one that was re-asked. The answers
 * that needed the second try are counted and reported.
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expectedA, firstA, TcpClient, UdpClient } from '../test-support/dns-client.js';
import { startUnbound } from '../test-support/unbound.js';
import type { TrafficCounts, TrafficStart } from './fuzz-traffic.js';
import type { TargetReady, TargetStats } from './fuzz-target.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const NAMES = 500;
/** A stub would retry after 1 s (Windows, macOS) or 5 s (glibc); an answer later than this counts as lost. */
const LEGIT_TIMEOUT_MS = 1000;

export interface FuzzOptions {
  /** Packets (UDP datagrams + TCP frames) to send. */
  readonly packets: number;
  /** Stop after this long even if fewer were sent. */
  readonly maxSeconds: number;
  readonly udpRate: number;
  readonly udpSockets: number;
  readonly tcpConcurrency: number;
  readonly seed: number;
  /** 'malformed': a UDP flood of garbage only (set tcpConcurrency 0 for UDP alone). */
  readonly kinds?: 'mixed' | 'malformed';
  /** Progress lines. */
  readonly log?: (line: string) => void;
}

export const SHORT: Omit<FuzzOptions, 'seed'> = { packets: 40_000, maxSeconds: 8, udpRate: 8_000, udpSockets: 8, tcpConcurrency: 16 };
export const LONG: Omit<FuzzOptions, 'seed'> = { packets: 1_200_000, maxSeconds: 240, udpRate: 12_000, udpSockets: 16, tcpConcurrency: 48 };

export interface ProcessFigures {
  readonly rssKiB: number;
  readonly fds: number;
  /** User + system CPU time so far, seconds. */
  readonly cpuSeconds: number;
}

export interface FuzzReport {
  readonly seed: number;
  readonly seconds: number;
  readonly packets: number;
  readonly udpDatagrams: number;
  readonly tcpFrames: number;
  readonly tcpConnections: number;
  readonly crashes: number;
  readonly crashOutput: string[];
  readonly before: ProcessFigures;
  readonly after: ProcessFigures;
  /** Seconds after the traffic stopped until the target's fds were back to the baseline (-1: never, within the wait). */
  readonly fdsBackAfterSeconds: number;
  readonly legit: {
    readonly sent: number;
    readonly answered: number;
    /** Answered only on the second try (UDP). */
    readonly retried: number;
    readonly rate: number;
    readonly failures: Readonly<Record<string, number>>;
  };
  /** The kernel's receive buffer on the target's UDP socket (what it granted of 4 MiB; Linux reports double) and its drops. */
  readonly udpSocket: { readonly receiveBuffer: number; readonly drops: number } | undefined;
  readonly targetCounters: Readonly<Record<string, number>>;
  /** The target's V8 heap in use after a full collection, before and after the run (KiB). */
  readonly heapKiB: { readonly before: number; readonly after: number };
  /** The target's event-loop delay during the run (ms): a stalled loop is what fills the UDP receive buffer. */
  readonly loopDelayMs: { readonly p99: number; readonly max: number };
}

function figures(pid: number): ProcessFigures {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  // /proc/<pid>/stat: utime and stime are fields 14 and 15, in clock ticks (100 a second on Linux), after the ")" of the name.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / 100;
  return { rssKiB: rss, fds: fs.readdirSync(`/proc/${pid}/fd`).length, cpuSeconds };
}

/** The receive buffer and drop count of the UDP socket bound to `port` (ss and /proc/net/udp). */
function udpSocketFigures(port: number): { receiveBuffer: number; drops: number } | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const line = fs
    .readFileSync('/proc/net/udp', 'utf8')
    .split('\n')
    .find((l) => l.trim().split(/\s+/)[1]?.endsWith(`:${hexPort}`));
  if (!line) return undefined;
  const drops = Number(line.trim().split(/\s+/).at(-1));
  const ss = spawnSync('ss', ['-u', '-a', '-m', '-n', `sport = :${port}`], { encoding: 'utf8' });
  const rb = Number(/rb(\d+)/.exec(ss.stdout ?? '')?.[1] ?? NaN);
  return { receiveBuffer: rb, drops };
}

/** FUZZ_TARGET_PROFILE=<dir>: the target writes a V8 CPU profile there when it stops. */
const PROFILE_DIR = process.env.FUZZ_TARGET_PROFILE;

function forkTs(script: string, args: string[]): ChildProcess {
  const target = script === 'fuzz-target.ts';
  const profile = PROFILE_DIR && target ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  if (target) profile.push('--expose-gc');
  return fork(path.join(HERE, script), args, {
    cwd: ROOT,
    execArgv: ['--import', 'tsx', ...profile],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
}

interface Target {
  readonly child: ChildProcess;
  readonly port: number;
  readonly output: string[];
  readonly exited: Promise<number | null>;
}

async function startTarget(resolverArg: string, caFile: string, port?: number): Promise<Target> {
  for (let attempt = 0; ; attempt++) {
    const child = forkTs('fuzz-target.ts', [resolverArg, caFile, ...(port ? [String(port)] : [])]);
    const output: string[] = [];
    child.stderr?.on('data', (d: Buffer) => output.push(d.toString()));
    child.stdout?.on('data', () => undefined);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const ready = await Promise.race([
      new Promise<TargetReady>((resolve) => child.on('message', (m: TargetReady) => m.type === 'ready' && resolve(m))),
      exited.then(() => undefined),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 20_000).unref()),
    ]);
    if (ready) return { child, port: ready.port, output, exited };
    child.kill('SIGKILL');
    if (attempt >= 2) throw new Error(`fuzz target did not start: ${output.join('')}`);
  }
}

function targetStats(t: Target): Promise<TargetStats> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ type: 'stats', counters: {}, heapUsedKiB: NaN, loopDelayMs: { p99: NaN, max: NaN } }), 5000);
    const onMessage = (m: TargetStats): void => {
      if (m.type !== 'stats') return;
      clearTimeout(timer);
      t.child.off('message', onMessage);
      resolve(m);
    };
    t.child.on('message', onMessage);
    t.child.send({ type: 'stats' });
  });
}

/** Queries every `everyMs` over `client` until `stop()`; tallies correct answers and failures by kind. */
async function legitimate(
  open: () => Promise<UdpClient | TcpClient>,
  everyMs: number,
  stop: () => boolean,
  tally: { sent: number; answered: number; retried: number; failures: Record<string, number> },
): Promise<void> {
  let client = await open();
  for (let i = 0; !stop(); i++) {
    const n = i % NAMES;
    const started = performance.now();
    tally.sent++;
    try {
      const ask = (): Promise<Awaited<ReturnType<typeof client.query>>> => client.query(`n${n}.test`, { timeoutMs: LEGIT_TIMEOUT_MS });
      const a = await ask().catch(async (err: unknown) => {
        if (!(client instanceof UdpClient) || !/timed out/.test((err as Error).message)) throw err;
        tally.retried++;
        return ask();
      });
      if (a.rcode === 'NOERROR' && firstA(a) === expectedA(n)) tally.answered++;
      else tally.failures[a.rcode] = (tally.failures[a.rcode] ?? 0) + 1;
    } catch (err) {
      const kind = /timed out/.test((err as Error).message) ? 'timeout' : 'error';
      tally.failures[kind] = (tally.failures[kind] ?? 0) + 1;
      // A TCP connection that broke (e.g. the target crashed) is reopened.
      if (client instanceof TcpClient) {
        client.close();
        client = await open().catch(() => client);
      }
    }
    await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (performance.now() - started))));
  }
  client.close();
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const log = options.log ?? ((): void => undefined);
  const unbound = await startUnbound({ names: NAMES });
  let target: Target | undefined;
  let traffic: ChildProcess | undefined;
  try {
    target = await startTarget(unbound.resolverArg, unbound.pki.caFile);
    const port = target.port;
    // Warm up: a few answers so the TLS connection and caches exist before the baseline.
    const warm = await UdpClient.open(port);
    for (let i = 0; i < 20; i++) await warm.query(`n${i}.test`, { timeoutMs: 2000 });
    warm.close();
    await new Promise((r) => setTimeout(r, 300));
    const heapBefore = (await targetStats(target)).heapUsedKiB;
    const before = figures(target.child.pid as number);
    log(`target pid ${target.child.pid} on 127.0.0.1:${port}: RSS ${before.rssKiB} KiB, ${before.fds} fds`);

    let crashes = 0;
    const crashOutput: string[] = [];
    let stopped = false;
    const watchCrash = (t: Target): void => {
      void t.exited.then(async (code) => {
        if (stopped) return;
        crashes++;
        crashOutput.push(`exit ${code}: ${t.output.join('').slice(-2000)}`);
        log(`CRASH: target exited with ${code}; restarting`);
        target = await startTarget(unbound.resolverArg, unbound.pki.caFile, port);
        watchCrash(target);
      });
    };
    watchCrash(target);

    traffic = forkTs('fuzz-traffic.ts', []);
    traffic.stderr?.on('data', (d: Buffer) => log(`traffic: ${d.toString().trim()}`));
    let counts: TrafficCounts = { type: 'counts', udp: 0, tcpFrames: 0, tcpConnections: 0, tcpRefused: 0, done: false };
    const trafficDone = new Promise<void>((resolve) => {
      traffic?.on('message', (m: TrafficCounts) => {
        counts = m;
        if (m.done) resolve();
      });
      traffic?.once('exit', () => resolve());
    });
    const start: TrafficStart = {
      type: 'start',
      port,
      seed: options.seed,
      udpRate: options.udpRate,
      udpSockets: options.udpSockets,
      tcpConcurrency: options.tcpConcurrency,
      packets: options.packets,
      names: NAMES,
      kinds: options.kinds ?? 'mixed',
    };
    const t0 = performance.now();
    traffic.send(start);
    const deadline = setTimeout(() => traffic?.send({ type: 'stop' }), options.maxSeconds * 1000);
    const progress = setInterval(
      () => log(`${((performance.now() - t0) / 1000).toFixed(0)} s: ${counts.udp} datagrams, ${counts.tcpFrames} frames on ${counts.tcpConnections} connections`),
      5000,
    );
    let trafficRunning = true;
    void trafficDone.then(() => (trafficRunning = false));
    const tally = { sent: 0, answered: 0, retried: 0, failures: {} as Record<string, number> };
    // Both start right away and stop with the traffic.
    const legitUdp = legitimate(() => UdpClient.open(port), 50, () => !trafficRunning, tally);
    const legitTcp = legitimate(() => TcpClient.open(port), 200, () => !trafficRunning, tally);
    await trafficDone;
    clearTimeout(deadline);
    clearInterval(progress);
    const seconds = (performance.now() - t0) / 1000;
    await Promise.all([legitUdp, legitTcp]);
    const udpSocket = udpSocketFigures(port);
    const { loopDelayMs } = await targetStats(target);

    // Descriptors back to the baseline: every client connection closed (idle ones within the 10 s idle timeout).
    const quiet = performance.now();
    let fdsBackAfterSeconds = -1;
    while (performance.now() - quiet < 15_000) {
      if (figures(target.child.pid as number).fds <= before.fds) {
        fdsBackAfterSeconds = (performance.now() - quiet) / 1000;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const stats = await targetStats(target);
    const after = figures(target.child.pid as number);
    stopped = true;
    return {
      seed: options.seed,
      seconds,
      packets: counts.udp + counts.tcpFrames,
      udpDatagrams: counts.udp,
      tcpFrames: counts.tcpFrames,
      tcpConnections: counts.tcpConnections,
      crashes,
      crashOutput,
      before,
      after,
      fdsBackAfterSeconds,
      legit: { sent: tally.sent, answered: tally.answered, retried: tally.retried, rate: tally.sent ? tally.answered / tally.sent : 0, failures: tally.failures },
      udpSocket,
      targetCounters: stats.counters,
      heapKiB: { before: heapBefore, after: stats.heapUsedKiB },
      loopDelayMs,
    };
  } finally {
    traffic?.kill('SIGKILL');
    if (target) {
      target.child.kill('SIGTERM');
      const t = target;
      await Promise.race([t.exited, new Promise((r) => setTimeout(r, 3000))]);
      t.child.kill('SIGKILL');
    }
    await unbound.stop();
  }
}

export function formatReport(r: FuzzReport): string {
  const c = r.targetCounters;
  return [
    `seed ${r.seed}, ${r.seconds.toFixed(1)} s`,
    `packets: ${r.packets} (${r.udpDatagrams} UDP datagrams, ${r.tcpFrames} TCP frames on ${r.tcpConnections} connections)`,
    `crashes: ${r.crashes}`,
    `target RSS: ${r.before.rssKiB} KiB before, ${r.after.rssKiB} KiB after; V8 heap after a full GC: ${r.heapKiB.before} KiB before, ${r.heapKiB.after} KiB after; CPU ${(r.after.cpuSeconds - r.before.cpuSeconds).toFixed(1)} s`,
    `target fds: ${r.before.fds} before, ${r.after.fds} after` + (r.fdsBackAfterSeconds >= 0 ? ` (back to baseline ${r.fdsBackAfterSeconds.toFixed(1)} s after the traffic stopped)` : ' (NOT back to baseline within 15 s)'),
    `legitimate client: ${r.legit.answered}/${r.legit.sent} answered correctly within 1 s, or 2 s with one more try over UDP (${(r.legit.rate * 100).toFixed(2)} %; ${r.legit.retried} needed the second try)` +
      (Object.keys(r.legit.failures).length ? `; failures ${JSON.stringify(r.legit.failures)}` : ''),
    `target event-loop delay during the run: p99 ${r.loopDelayMs.p99.toFixed(1)} ms, max ${r.loopDelayMs.max.toFixed(1)} ms`,
    r.udpSocket ? `target UDP socket: receive buffer ${r.udpSocket.receiveBuffer} bytes (kernel-reported), ${r.udpSocket.drops} datagrams dropped by the kernel` : 'target UDP socket: not found',
    `target counters: queries ${c.queries}, answers ${c.answers}, malformed ${c.malformed}, servfails ${c.servfails}, in-flight cap hits ${c.inFlightCapHits}`,
    ...r.crashOutput.map((o) => `crash: ${o}`),
  ].join('\n');
}
