/**
 * What the live stream costs the proxy at a steady query rate (default
 * 1,000 queries/s): the proxy's CPU with no stream client and with one
 * connected (reading as fast as curl would), and the stream's bytes/s.
 *
 * Loopback only: a real unbound DoT upstream (test PKI), the dotstub CLI
 * (TypeScript sources through tsx) with --control on a free port, UDP
 * queries from this process. Bounded: `--phase-seconds` (default 8) per
 * phase, phases A B A B after a 2 s warm-up, at most rate × seconds queries
 * per phase; the whole run takes about 40 s.
 *
 *   npx tsx bench/stream-cost.ts [--rate 1000] [--phase-seconds 8] [--json]
 */
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import dnsPacket from 'dns-packet';
import { startUnbound } from '../test-support/unbound.js';
import { processCpu } from './procstat.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const log = (line: string): void => void process.stderr.write(`${line}\n`);

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    'phase-seconds': { type: 'string', default: '8' },
    json: { type: 'boolean', default: false },
  },
});
const RATE = Math.min(20_000, Math.max(1, Number(values.rate)));
const PHASE_S = Math.min(60, Math.max(1, Number(values['phase-seconds'])));

interface Ready {
  dns: { host: string; port: number }[];
  control: string;
  token: string;
}

interface PhaseResult {
  readonly stream: boolean;
  readonly seconds: number;
  readonly sent: number;
  readonly answered: number;
  /** Proxy CPU as a share of one core. */
  readonly cpu: number;
  readonly streamBytesPerSec: number;
  readonly batchesPerSec: number;
}

/** Sends `rate` queries/s for `seconds`, paced every 5 ms; resolves with sent/answered once answers settle. */
async function load(port: number, rate: number, seconds: number): Promise<{ sent: number; answered: number }> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  try {
    sock.setRecvBufferSize(4 * 1024 * 1024);
  } catch {
    // capped by net.core.rmem_max
  }
  let answered = 0;
  sock.on('message', () => answered++);
  const queries = Array.from({ length: 1000 }, (_, i) =>
    dnsPacket.encode({ type: 'query', id: 0, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name: `n${i}.test`, class: 'IN' }] }),
  );
  const total = Math.round(rate * seconds);
  let sent = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
      while (sent < due) {
        const q = queries[sent % 1000] as Buffer;
        q.writeUInt16BE(sent & 0xffff, 0);
        sock.send(q, port, '127.0.0.1');
        sent++;
      }
      if (sent >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
  });
  // Let the last answers arrive (bounded).
  const deadline = performance.now() + 3000;
  while (answered < sent && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  sock.close();
  return { sent, answered };
}

function openStream(ready: Ready): Promise<{ bytes: () => number; batches: () => number; close: () => void }> {
  const u = new URL('/api/stream', ready.control);
  return new Promise((resolve, reject) => {
    const req = http.get({ host: u.hostname, port: u.port, path: u.pathname, headers: { authorization: `Bearer ${ready.token}` }, agent: false }, (res) => {
      let bytes = 0;
      let batches = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        for (let i = c.indexOf('event: batch'); i >= 0; i = c.indexOf('event: batch', i + 1)) batches++;
      });
      res.on('error', () => undefined);
      resolve({ bytes: () => bytes, batches: () => batches, close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}

async function phase(pid: number, ready: Ready, withStream: boolean): Promise<PhaseResult> {
  const stream = withStream ? await openStream(ready) : undefined;
  await new Promise((r) => setTimeout(r, 300));
  const b0 = stream?.bytes() ?? 0;
  const n0 = stream?.batches() ?? 0;
  const cpu0 = processCpu(pid);
  const t0 = performance.now();
  const { sent, answered } = await load(ready.dns[0]?.port ?? 0, RATE, PHASE_S);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = (processCpu(pid) - cpu0) / seconds;
  const bytes = (stream?.bytes() ?? 0) - b0;
  const batches = (stream?.batches() ?? 0) - n0;
  stream?.close();
  return { stream: withStream, seconds, sent, answered, cpu, streamBytesPerSec: bytes / seconds, batchesPerSec: batches / seconds };
}

async function main(): Promise<void> {
  const unbound = await startUnbound({ names: 1000 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-streamcost-'));
  const readyFile = path.join(dir, 'ready.json');
  const child = spawn(
    process.execPath,
    [
      '--import', 'tsx', '-e',
      "import('./proxy/cli.ts').then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })",
      '--', '--resolver', unbound.resolverArg, '--ca', unbound.pki.caFile,
      '--listen', '127.0.0.1:0', '--control', '127.0.0.1:0', '--config-dir', path.join(dir, 'config'), '--ready-file', readyFile,
    ],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    const deadline = Date.now() + 20_000;
    while (!fs.existsSync(readyFile)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`dotstub did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const ready = JSON.parse(fs.readFileSync(readyFile, 'utf8')) as Ready;
    const pid = child.pid as number;
    log(`stream-cost: ${RATE} queries/s, ${PHASE_S} s per phase, proxy pid ${pid}`);
    await load(ready.dns[0]?.port ?? 0, RATE, 2); // warm-up: JIT, connection open
    const results: PhaseResult[] = [];
    for (const withStream of [false, true, false, true]) {
      const r = await phase(pid, ready, withStream);
      results.push(r);
      log(
        `  ${withStream ? 'with stream   ' : 'without stream'}: CPU ${(r.cpu * 100).toFixed(1)}% of a core, ${r.answered}/${r.sent} answered` +
          (withStream ? `, stream ${(r.streamBytesPerSec / 1024).toFixed(1)} KiB/s in ${r.batchesPerSec.toFixed(1)} batches/s` : ''),
      );
    }
    // Where were unanswered queries lost: before the proxy (kernel buffers) or in it (SERVFAIL)?
    const status = await fetch(`${ready.control}/api/status`, { headers: { authorization: `Bearer ${ready.token}` } });
    const counters = ((await status.json()) as { counters: { queries: number; answers: number; servfails: number } }).counters;
    const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
    const off = results.filter((r) => !r.stream);
    const on = results.filter((r) => r.stream);
    const summary = {
      rate: RATE,
      phaseSeconds: PHASE_S,
      cpuWithout: mean(off.map((r) => r.cpu)),
      cpuWith: mean(on.map((r) => r.cpu)),
      streamBytesPerSec: mean(on.map((r) => r.streamBytesPerSec)),
      batchesPerSec: mean(on.map((r) => r.batchesPerSec)),
      lost: results.reduce((s, r) => s + (r.sent - r.answered), 0),
      proxyCounters: { queries: counters.queries, answers: counters.answers, servfails: counters.servfails },
      loadAverage: os.loadavg(),
      phases: results,
      cpus: os.cpus().length,
      node: process.version,
    };
    log(
      `stream-cost: proxy CPU ${(summary.cpuWithout * 100).toFixed(1)}% without a stream client, ${(summary.cpuWith * 100).toFixed(1)}% with one ` +
        `(+${((summary.cpuWith - summary.cpuWithout) * 100).toFixed(1)} points); stream ${(summary.streamBytesPerSec / 1024).toFixed(1)} KiB/s ` +
        `(${(summary.streamBytesPerSec / RATE).toFixed(0)} bytes per query), ${summary.batchesPerSec.toFixed(1)} batches/s; unanswered ${summary.lost}; ` +
        `proxy saw ${counters.queries} queries, answered ${counters.answers}, SERVFAIL ${counters.servfails}; load average ${os.loadavg()[0]?.toFixed(2)}`,
    );
    if (values.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  } finally {
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
    await unbound.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  log(`stream-cost: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
