/**
 * 140 distinct names at once (T-DNS §5.2's burst of a web page's names):
 * each stub gets the burst over UDP on its loopback address after a warm-up
 * query and a 1 s pause (a warm connection that has been idle, as between
 * clicks), at 35 ms and 1 ms RTT, against unbound as shipped and with Nagle
 * off. linkemu's frame log gives the segments that carried the answers
 * (answers per packet) and the steps in which they arrived.
 */
import { PROFILES, SERVER_ADDR } from '../link-lab.js';
import type { Sample, Target } from '../probe.js';
import { median } from '../stats.js';
import { barsSvg } from './chart.js';
import { sorted, type Ctx, type PeerSpec, type RunningPeer } from './context.js';
import { dataFrom, readLinkLog, steps } from './linklog.js';
import { fmtMs, rtt, type ExperimentReport, type Goal } from './report.js';

const SPECS: readonly PeerSpec[] = [
  { name: 'dotstub', label: 'dotstub' },
  { name: 'dotstub', label: 'dotstub --no-padding', dotstubFlags: ['--no-padding'] },
  { name: 'stubby', label: 'stubby' },
  { name: 'dnsdist', label: 'dnsdist' },
  { name: 'unbound-fwd', label: 'unbound-fwd' },
];
const UDP = 'UDP (plain, to unbound)';

interface Row {
  readonly label: string;
  readonly medianMs: number;
  readonly maxMs: number;
  /** The first burst a stub sees after it started, and the later ones (a stub may prepare for bursts once it has seen one). */
  readonly first: { readonly medianMs: number; readonly maxMs: number };
  readonly later: { readonly medianMs: number; readonly maxMs: number };
  readonly lost: number;
  readonly perPacket: number;
  readonly steps: number;
}

type BurstRun = { label: string; round: number; startedAt: number; samples: Sample[] };

export async function burstExperiment(ctx: Ctx): Promise<ExperimentReport> {
  const t0 = Date.now();
  const rounds = ctx.o.quick ? 3 : 5;
  const count = 140;
  const results = new Map<string, Row[]>();
  let base = 0;
  for (const nodelay of [false, true]) {
    // The quick form leaves out the --no-padding row (two more stubs to start).
    const running = await ctx.peers(ctx.o.quick ? SPECS.filter((x) => !x.dotstubFlags) : SPECS, nodelay);
    const udp = await ctx.upstream(nodelay, true);
    try {
      const targets: Target[] = [...running.map((r) => ({ label: r.spec.label, host: r.peer.host, port: r.peer.port })), { label: UDP, host: udp.host, port: udp.plainPort ?? 53 }];
      const portOf = (label: string): number => (label === UDP ? (udp.plainPort ?? 53) : (running.find((r: RunningPeer) => r.spec.label === label)?.upstream.port ?? 0));
      for (const p of [PROFILES.rtt35, PROFILES.rtt1]) {
        await ctx.lab.setProfile(p);
        const res = await ctx.probe<{ runs: BurstRun[] }>({ mode: 'burst', targets, count, rounds, base, idleMs: 1000, timeoutMs: 5000 });
        base += rounds * targets.length * (count + 1);
        const frames = readLinkLog(await ctx.lab.settledLinkLog());
        if (process.env.BURST_TRACE) {
          const lines: string[] = [];
          for (const r of res.runs.filter((x) => x.label === 'dotstub')) {
            const port = portOf('dotstub');
            for (const f of frames.filter((x) => (x.srcPort === port || x.dstPort === port) && x.at >= r.startedAt - 5 && x.at <= r.startedAt + 6 * p.rttMs)) {
              lines.push(`${r.round} ${(f.at - r.startedAt).toFixed(1)} ${f.srcPort === port ? 'S>C' : 'C>S'} ${f.srcPort === port ? f.dstPort : f.srcPort} ${f.flags} ${f.payload}`);
            }
            lines.push(`${r.round} samples ${r.samples.map((x) => (x.ms === null ? 'lost' : x.ms.toFixed(0))).join(',')}`);
          }
          (await import('node:fs')).writeFileSync(`${process.env.BURST_TRACE}-${p.rttMs}-${nodelay ? 'n' : 'a'}.txt`, lines.join('\n'));
        }
        const rows = targets.map((t): Row => {
          const runs = res.runs.filter((r) => r.label === t.label);
          const all = runs.flatMap((r) => r.samples.map((s) => s.ms));
          const perRun = runs.map((r) => {
            const got = sorted(r.samples.map((s) => s.ms));
            const end = r.startedAt + (got[got.length - 1] ?? 0) + 5;
            const segs = dataFrom(frames, portOf(t.label), r.startedAt, end);
            return { answers: got.length, segs: segs.length, steps: steps(segs, Math.max(p.rttMs / 2, 2)) };
          });
          const part = (rs: BurstRun[]): { medianMs: number; maxMs: number } => {
            const ms = sorted(rs.flatMap((r) => r.samples.map((s) => s.ms)));
            return { medianMs: median(ms), maxMs: ms.length > 0 ? Math.max(...ms) : Number.NaN };
          };
          return {
            label: t.label,
            medianMs: median(sorted(all)),
            maxMs: Math.max(...sorted(all)),
            first: part(runs.filter((r) => r.round === 0)),
            later: part(runs.filter((r) => r.round > 0)),
            lost: all.filter((v) => v === null).length,
            perPacket: median(perRun.filter((r) => r.segs > 0).map((r) => r.answers / r.segs)),
            steps: median(perRun.map((r) => r.steps)),
          };
        });
        const key = `${p.rttMs} ms, ${nodelay ? 'Nagle off' : 'as shipped'}`;
        results.set(key, rows);
        ctx.log(`  burst ${key}: ${rows.map((r) => `${r.label} ${rtt(r.medianMs, p.rttMs)}/${rtt(r.maxMs, p.rttMs)}`).join(', ')}`);
      }
    } finally {
      await ctx.stop(running);
      await ctx.lab.stopPid(udp.pid);
    }
  }
  const tables = [...results.entries()].map(([key, rows]) => {
    const r = key.startsWith('35') ? 35 : 1;
    return {
      title: `140 names at once, ${key} (${rounds} rounds): latency in RTTs${r === 1 ? ' and ms' : ''}, answers per packet and steps from linkemu's log`,
      header: ['stub', 'median', 'max', ...(r === 1 ? ['median ms'] : []), 'first burst: median / max', 'later bursts: median / max', 'answers/packet', 'steps', 'lost'],
      rows: rows.map((x) => [
        x.label,
        rtt(x.medianMs, r),
        rtt(x.maxMs, r),
        ...(r === 1 ? [fmtMs(x.medianMs)] : []),
        `${rtt(x.first.medianMs, r)} / ${rtt(x.first.maxMs, r)}`,
        `${rtt(x.later.medianMs, r)} / ${rtt(x.later.maxMs, r)}`,
        Number.isFinite(x.perPacket) ? x.perPacket.toFixed(1) : '—',
        Number.isFinite(x.steps) ? String(x.steps) : '—',
        String(x.lost),
      ]),
    };
  });
  const goals: Goal[] = [];
  for (const key of ['35 ms, as shipped', '35 ms, Nagle off']) {
    const d = results.get(key)?.find((x) => x.label === 'dotstub');
    if (d) {
      goals.push({ goal: `140 at once, ${key}, every round: dotstub median ≤ 1.2 RTT and max ≤ 1.5 RTT`, value: `${rtt(d.medianMs, 35)} / ${rtt(d.maxMs, 35)} RTT`, met: d.medianMs <= 1.2 * 35 && d.maxMs <= 1.5 * 35 });
      goals.push({
        goal: `140 at once, ${key}, bursts after the first (the extra connections open): dotstub median ≤ 1.2 RTT and max ≤ 1.5 RTT`,
        value: `${rtt(d.later.medianMs, 35)} / ${rtt(d.later.maxMs, 35)} RTT (first burst after start: ${rtt(d.first.medianMs, 35)} / ${rtt(d.first.maxMs, 35)})`,
        met: d.later.medianMs <= 1.2 * 35 && d.later.maxMs <= 1.5 * 35,
      });
    }
  }
  for (const key of ['1 ms, as shipped', '1 ms, Nagle off']) {
    const rows = results.get(key) ?? [];
    const d = rows.find((x) => x.label === 'dotstub');
    const dd = rows.find((x) => x.label === 'dnsdist');
    if (d && dd) goals.push({ goal: `140 at once, ${key}: dotstub median no worse than dnsdist's`, value: `${fmtMs(d.medianMs)} ms vs ${fmtMs(dd.medianMs)} ms (${(d.medianMs / dd.medianMs).toFixed(2)}×)`, met: d.medianMs <= dd.medianMs });
  }
  const k35 = ['35 ms, as shipped', '35 ms, Nagle off'];
  const labels = results.get(k35[0] ?? '')?.map((r) => r.label) ?? [];
  const chart = ctx.chart(
    'burst140',
    barsSvg({
      title: '140 names at once at 35 ms RTT: median and max',
      subtitle: 'UDP to each stub in the client ns → DoT over linkemu → unbound',
      yLabel: 'RTTs',
      categories: labels.map((l) => l.replace(' (plain, to unbound)', '')),
      series: Object.fromEntries(k35.flatMap((k) => [
        [`median, ${k.slice(7)}`, (results.get(k) ?? []).map((r) => r.medianMs / 35)],
        [`max, ${k.slice(7)}`, (results.get(k) ?? []).map((r) => r.maxMs / 35)],
      ])),
      reference: { value: 2.5, label: 'T-DNS median ≈ 2.5 RTT' },
    }),
  );
  return {
    id: 'burst140',
    title: '140 names at once (a page\'s worth), warm connection',
    paper: 'T-DNS §5.2: 140 queries pipelined on one TLS connection, median ≈ 2.5 RTT, arriving in stair-steps of ~12 answers per packet (TCP\'s window).',
    tables,
    goals,
    notes: ['Each burst follows a warm-up query and 1 s of idle (longer than TCP\'s RTO: the window restarts small, as between clicks).', 'answers/packet: answers received ÷ data segments from the stub\'s own upstream port during the burst; steps: groups of those segments more than half an RTT apart.', 'First burst / later bursts: dotstub opens extra connections when a burst needs more than one connection\'s initial window (about 26 padded answers with Nagle on, 10 with it off, measured from arrivals) and keeps them while they are used; the first burst after start finds only the one, later bursts find them open. Each stub\'s rounds are ~7 s apart (the other stubs run in between).'],
    charts: [chart],
    seconds: (Date.now() - t0) / 1000,
    data: Object.fromEntries(results),
  };
}

/**
 * The first page after a restart (issue 32, item 2). A dotstub started with
 * a configuration directory of its own gets one page (a lookup, a quiet
 * second, 140 names at once), is stopped, and is started again on the same
 * directory, whose network memory now holds the connections that page
 * needed; it gets the next page the same way. Its first burst before the
 * restart is the burst table's "first burst after start"; after it, the
 * first lookup prepared the connections. The client namespace gets a
 * default route through the server for this (the network memory keys a
 * network by its gateway; the lab's other experiments have none).
 */
export async function burstRestartExperiment(ctx: Ctx): Promise<ExperimentReport> {
  const t0 = Date.now();
  const rounds = ctx.o.quick ? 3 : 5;
  const count = 140;
  const rtt35 = PROFILES.rtt35;
  await ctx.lab.setProfile(rtt35);
  const route = (op: 'replace' | 'del'): Promise<unknown> => ctx.lab.runInClient('ip', ['route', op, 'default', 'via', SERVER_ADDR], { timeoutMs: 5000 });
  await route('replace');
  const fresh: number[][] = [];
  const restarted: number[][] = [];
  let base = 1_000_000;
  try {
    for (let round = 0; round < rounds; round++) {
      let [running] = await ctx.peers([{ name: 'dotstub', label: 'dotstub' }], false);
      if (!running) throw new Error('dotstub did not start');
      try {
        const burst = async (r: RunningPeer): Promise<number[]> => {
          const res = await ctx.probe<{ runs: BurstRun[] }>({ mode: 'burst', targets: [{ label: 'dotstub', host: r.peer.host, port: r.peer.port }], count, rounds: 1, base, idleMs: 1000, timeoutMs: 5000 });
          base += count + 1;
          return sorted(res.runs.flatMap((x) => x.samples.map((s) => s.ms)));
        };
        fresh.push(await burst(running));
        // The burst is announced a quiet second after it began, and written to the network memory then.
        await new Promise((r) => setTimeout(r, 2000));
        running = await ctx.restart(running);
        restarted.push(await burst(running));
      } finally {
        await ctx.stop([running]);
      }
    }
  } finally {
    await route('del').catch(() => undefined);
  }
  const part = (runs: readonly number[][]): { medianMs: number; maxMs: number; maxes: number[] } => {
    const all = sorted(runs.flat());
    return { medianMs: median(all), maxMs: all.length > 0 ? Math.max(...all) : Number.NaN, maxes: runs.map((r) => (r.length ? Math.max(...r) : Number.NaN)) };
  };
  const before = part(fresh);
  const after = part(restarted);
  const r = rtt35.rttMs;
  return {
    id: 'burst-restart',
    title: 'The first page after a restart: 140 names at once, 35 ms, as shipped',
    paper: 'Issue 32: "open the burst connections on the first lookup after a quiet spell once bursts have been seen"; a restart forgot that bursts had been seen.',
    tables: [
      {
        title: `First burst of a run (${rounds} runs): latency in RTTs`,
        header: ['dotstub', 'median', 'max', 'max of each run'],
        rows: [
          ['started with no memory (as the burst table\'s first burst)', rtt(before.medianMs, r), rtt(before.maxMs, r), before.maxes.map((m) => rtt(m, r)).join(', ')],
          ['restarted on the same network, its memory kept', rtt(after.medianMs, r), rtt(after.maxMs, r), after.maxes.map((m) => rtt(m, r)).join(', ')],
        ],
      },
    ],
    goals: [
      {
        goal: 'the first page after a restart: median ≤ 1.2 RTT and max ≤ 2 RTT (as shipped)',
        value: `${rtt(after.medianMs, r)} / ${rtt(after.maxMs, r)} RTT (with no memory: ${rtt(before.medianMs, r)} / ${rtt(before.maxMs, r)})`,
        met: after.medianMs <= 1.2 * r && after.maxMs <= 2 * r,
      },
    ],
    notes: ['Each run: a dotstub with a fresh configuration directory; one page; stopped (SIGTERM) 2 s after; started again on the same directory and address; one page. A page is a lookup, a quiet second, then 140 names at once (the burst table\'s method).'],
    charts: [],
    seconds: (Date.now() - t0) / 1000,
    data: { fresh, restarted },
  };
}
