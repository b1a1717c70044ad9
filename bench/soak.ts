/**
 * The soak (issue 13): dotstub as users run it (the CLI, cache on, control
 * API on) against a real unbound over DoT, asked at a steady rate for a long
 * time. Samples answers, RSS and open file descriptors every 10 s and fails
 * when any of them isn't flat: a lost or wrong answer, RSS still growing in
 * the second half, or fds that don't come back.
 *
 *   npm run soak                      # 5 minutes at 500 qps (the CI form)
 *   npm run soak -- --minutes 60      # the long form: an hour
 *   npm run soak -- --minutes 1.5 --quiet 60 --node-flags="--max-semi-space-size=1 --heap-growing-percent=10 --v8-pool-size=1 --expose-gc" --trace-gc /tmp/gc.txt
 *                                     # a memory probe: started with these node flags (default: none, as
 *                                     # `node bin/dotstub.js`), watched for 60 s of quiet after the load,
 *                                     # V8's heap after each collection written to /tmp/gc.txt
 *
 * Traffic: 500 qps over UDP from one client, a mix a desktop makes — popular
 * names again and again (cache hits), and a fresh never-seen name in every
 * fifth query (a round trip to the resolver each). Bounded in count and time;
 * stops by itself; cleans up on every path out.
 */
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import dnsPacket from 'dns-packet';
import { buildProxy, closeOnSignal, openLab, ROOT } from './lab.js';

const { values } = parseArgs({
  options: { minutes: { type: 'string' }, rate: { type: 'string' }, out: { type: 'string' }, quiet: { type: 'string' }, 'node-flags': { type: 'string' }, 'trace-gc': { type: 'string' } },
});
const minutes = Number(values.minutes ?? 5);
const rate = Number(values.rate ?? 500);
const quietSec = Number(values.quiet ?? 0);
const nodeFlags = (values['node-flags'] ?? '').split(' ').filter(Boolean);
if (!(minutes > 0 && minutes <= 24 * 60) || !(rate > 0 && rate <= 5000) || !(quietSec >= 0 && quietSec <= 3600)) {
  console.error('usage: npm run soak -- [--minutes 1..1440] [--rate 1..5000] [--quiet 0..3600] [--node-flags="FLAGS"] [--trace-gc FILE] [--out FILE.json]');
  process.exit(2);
}
const SAMPLE_MS = 10_000;
const TIMEOUT_MS = 3_000;

interface Sample {
  readonly atSec: number;
  readonly sent: number;
  readonly answered: number;
  readonly wrong: number;
  readonly lost: number;
  readonly rssMiB: number;
  readonly fds: number;
  /** V8's heap after its last collection, from --trace-gc (objects, and the memory V8 holds for them); absent without it. */
  readonly heapMiB?: number;
  readonly heapCommittedMiB?: number;
}

function procStatus(pid: number): { rssMiB: number; fds: number; heapMiB?: number; heapCommittedMiB?: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { rssMiB: Math.round((rssKiB / 1024) * 10) / 10, fds: fs.readdirSync(`/proc/${pid}/fd`).length, ...(heapMiB !== undefined && heapCommittedMiB !== undefined ? { heapMiB, heapCommittedMiB } : {}) };
}

const log = (line: string): void => console.log(line);
buildProxy(log);
const lab = await openLab(1000);
const stopSignals = closeOnSignal(lab);
const configDir = path.join(lab.dir, 'config');
fs.mkdirSync(configDir);
const readyFile = path.join(lab.dir, 'ready.json');
const child = spawn(
  process.execPath,
  [...nodeFlags, ...(values['trace-gc'] ? ['--trace-gc'] : []), path.join(ROOT, 'bin', 'dotstub.js'), '--listen', '127.0.0.1:0', '--control', '127.0.0.1:0', '--resolver', lab.upstream.resolverArg, '--ca', lab.upstream.pki.caFile, '--config-dir', configDir, '--ready-file', readyFile],
  { stdio: ['ignore', values['trace-gc'] ? 'pipe' : 'ignore', 'pipe'] },
);
// --trace-gc lines: "[pid:0x…]  1234 ms: Scavenge 9.8 (12.3) -> 9.1 (13.3) MB, …": objects after it, in MB.
let heapMiB: number | undefined;
let heapCommittedMiB: number | undefined;
if (values['trace-gc']) {
  const gcLog = fs.createWriteStream(values['trace-gc']);
  child.stdout?.on('data', (d: Buffer) => {
    gcLog.write(d);
    const all = [...d.toString().matchAll(/-> ([\d.]+) \(([\d.]+)\) MB/g)];
    const last = all[all.length - 1];
    if (last) {
      heapMiB = Number(last[1]);
      heapCommittedMiB = Number(last[2]);
    }
  });
}
// Ctrl-C or a kill ends dotstub too (closeOnSignal then takes the lab down).
const killChild = (): void => {
  child.kill('SIGTERM');
};
process.once('SIGINT', killChild);
process.once('SIGTERM', killChild);
let stderr = '';
child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
let failed = false;
const samples: Sample[] = [];
try {
  const ready = await (async () => {
    const deadline = Date.now() + 20_000;
    while (!fs.existsSync(readyFile)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`dotstub did not start:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return JSON.parse(fs.readFileSync(readyFile, 'utf8')) as { dns: { port: number }[] };
  })();
  const port = ready.dns[0]?.port as number;
  const pid = child.pid as number;
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  const pending = new Map<number, { name: string; at: number; expected: string | null }>();
  let sent = 0;
  let answered = 0;
  let wrong = 0;
  let lost = 0;
  let nextId = 1;
  sock.on('message', (msg) => {
    let d;
    try {
      d = dnsPacket.decode(msg);
    } catch {
      wrong++;
      return;
    }
    const p = pending.get(d.id ?? -1);
    if (!p) return;
    pending.delete(d.id as number);
    const a = d.answers?.find((r) => r.type === 'A');
    const got = a && 'data' in a ? String(a.data) : null;
    const rcode = (d as { rcode?: string }).rcode;
    if (p.expected === null ? rcode === 'NXDOMAIN' : got === p.expected) answered++;
    else wrong++;
  });
  const zipf = (): number => Math.min(999, Math.floor(1000 ** Math.random()) - 1);
  const start = Date.now();
  const endAt = start + minutes * 60_000;
  let nextSample = start + SAMPLE_MS;
  const base = procStatus(pid);
  samples.push({ atSec: 0, sent: 0, answered: 0, wrong: 0, lost: 0, ...base });
  log(`soak: ${minutes} min at ${rate} qps against dotstub pid ${pid} (port ${port}); start RSS ${base.rssMiB} MiB, ${base.fds} fds`);
  // A paced loop: each tick sends what the rate owes since the start, so timer slack doesn't lower the rate.
  while (Date.now() < endAt) {
    const owed = Math.floor(((Date.now() - start) / 1000) * rate) - sent;
    for (let i = 0; i < owed; i++) {
      const fresh = sent % 5 === 4;
      const n = zipf();
      const name = fresh ? `soak-${sent}.fresh.test` : `n${n}.test`;
      const id = nextId;
      nextId = (nextId % 65535) + 1;
      pending.set(id, { name, at: Date.now(), expected: fresh ? null : `192.0.2.${(n % 254) + 1}` });
      sock.send(dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] }), port, '127.0.0.1');
      sent++;
    }
    const now = Date.now();
    for (const [id, p] of pending) {
      if (now - p.at < TIMEOUT_MS) break; // Map order is send order
      pending.delete(id);
      lost++;
    }
    if (now >= nextSample) {
      nextSample += SAMPLE_MS;
      const s = { atSec: Math.round((now - start) / 1000), sent, answered, wrong, lost, ...procStatus(pid) };
      samples.push(s);
      log(`  ${String(s.atSec).padStart(5)} s  sent ${sent}  answered ${answered}  wrong ${wrong}  lost ${lost}  RSS ${s.rssMiB} MiB${s.heapMiB !== undefined ? `  heap ${s.heapMiB} of ${s.heapCommittedMiB} MB` : ''}  fds ${s.fds}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, TIMEOUT_MS + 200));
  lost += pending.size;
  sock.close();
  const end = { atSec: Math.round((Date.now() - start) / 1000), sent, answered, wrong, lost, ...procStatus(pid) };
  samples.push(end);
  // Quiet after the load: does memory come back (issue 23: within 60 s)?
  const quiet: { afterSec: number; rssMiB: number; heapMiB?: number; heapCommittedMiB?: number }[] = [];
  for (let t = 10; t <= quietSec; t += 10) {
    await new Promise((r) => setTimeout(r, 10_000));
    const q = procStatus(pid);
    quiet.push({ afterSec: t, rssMiB: q.rssMiB, ...(q.heapMiB !== undefined ? { heapMiB: q.heapMiB, heapCommittedMiB: q.heapCommittedMiB } : {}) });
    log(`  quiet +${t} s  RSS ${q.rssMiB} MiB${q.heapMiB !== undefined ? `  heap ${q.heapMiB} of ${q.heapCommittedMiB} MB` : ''}`);
  }
  // Flat: the second half's RSS may not climb beyond noise above the first half's peak; fds back to where they began.
  const half = samples.filter((s) => s.atSec >= end.atSec / 2);
  const firstHalfPeak = Math.max(...samples.filter((s) => s.atSec < end.atSec / 2 && s.atSec > 0).map((s) => s.rssMiB), base.rssMiB);
  const secondHalfPeak = Math.max(...half.map((s) => s.rssMiB));
  const problems: string[] = [];
  if (wrong > 0) problems.push(`${wrong} wrong answers`);
  if (lost > sent * 0.001) problems.push(`${lost} of ${sent} queries unanswered (over 0.1 %)`);
  if (secondHalfPeak > firstHalfPeak + 15) problems.push(`RSS still growing: ${firstHalfPeak} MiB peak in the first half, ${secondHalfPeak} MiB in the second`);
  if (end.fds > base.fds + 4) problems.push(`file descriptors grew from ${base.fds} to ${end.fds}`);
  const result = { minutes, rate, sent, answered, wrong, lost, rss: { startMiB: base.rssMiB, firstHalfPeakMiB: firstHalfPeak, secondHalfPeakMiB: secondHalfPeak, endMiB: end.rssMiB }, nodeFlags, quiet, fds: { start: base.fds, end: end.fds }, samples, problems };
  if (values.out) fs.writeFileSync(values.out, JSON.stringify(result, null, 2));
  log(`soak: ${answered}/${sent} answered correctly, ${lost} lost, ${wrong} wrong; RSS ${base.rssMiB} → peak ${Math.max(firstHalfPeak, secondHalfPeak)} → ${end.rssMiB} MiB; fds ${base.fds} → ${end.fds}`);
  if (problems.length) {
    failed = true;
    log(`soak: NOT FLAT: ${problems.join('; ')}`);
  } else log('soak: flat');
} catch (err) {
  failed = true;
  console.error(`soak: ${err instanceof Error ? err.message : String(err)}`);
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
  stopSignals();
  await lab.close();
}
process.exit(failed ? 1 : 0);
