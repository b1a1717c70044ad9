/**
 * The T-DNS stub-to-resolver cases (Zhu et al., "Connection-oriented DNS to
 * improve privacy and security", IEEE S&P 2015, §5 and Table 4): the probe
 * talks straight to Debian's unbound in the server ns over UDP, TCP and TLS,
 * fresh, resumed and reused connections, stop-and-wait and pipelined, and a
 * slow name ahead of fast ones, at 1 ms and 35 ms RTT, against unbound as
 * shipped and with Nagle off.
 */
import { PROFILES, type LinkProfile } from '../link-lab.js';
import type { TdnsCase } from '../probe.js';
import { median } from '../stats.js';
import { barsSvg } from './chart.js';
import type { Ctx } from './context.js';
import { rtt, type ExperimentReport } from './report.js';

/** Each case, what it is, and the T-DNS figure (in RTTs) for it. */
const CASES: readonly (readonly [string, string, string])[] = [
  ['udp-saw', 'UDP, one at a time', '1'],
  ['udp-pipe', 'UDP, 10 at once (each)', '1'],
  ['tcp-fresh', 'TCP, new connection per query', '2 (handshake + query)'],
  ['tcp-saw', 'TCP, reused, stop-and-wait', '1'],
  ['tcp-pipe', 'TCP, reused, 10 pipelined (each)', '1 (pipelining)'],
  ['tls-fresh', 'TLS 1.3, new connection', '3 (RFC 7858 :853, TLS 1.3)'],
  ['tls-resumed', 'TLS 1.3, resumed session', '3 (saves CPU, not RTTs)'],
  ['tls12-fresh', 'TLS 1.2, new connection', '4 (5 with STARTTLS)'],
  ['tls12-resumed', 'TLS 1.2, resumed session', '3'],
  ['tls-saw', 'TLS, reused, stop-and-wait', '1'],
  ['tls-pipe', 'TLS, reused, 10 pipelined (each)', '1'],
  ['tls-ooo-fast', 'TLS, 9 fast names behind a slow one: out-of-order', '1'],
  ['tls-inorder-fast', 'same, answers in order (head-of-line)', 'slow name\'s time'],
  ['tls-slow', 'the slow name (server holds it 200 ms)', '200 ms + 1 RTT'],
];

export async function tdnsExperiment(ctx: Ctx): Promise<ExperimentReport> {
  const t0 = Date.now();
  const runs = ctx.o.quick ? 1 : 3;
  const n = ctx.o.quick ? 5 : 10;
  const profiles: LinkProfile[] = [PROFILES.rtt1, PROFILES.rtt35];
  const shipped = await ctx.upstream(false, true);
  const nodelay = await ctx.upstream(true, true);
  const columns: { label: string; rttMs: number; cases: Map<string, number[]>; notes: Map<string, string> }[] = [];
  let base = 0;
  for (const p of profiles) {
    await ctx.lab.setProfile(p);
    for (const u of [shipped, nodelay]) {
      const col = { label: `${p.rttMs} ms, ${u.name}`, rttMs: p.rttMs, cases: new Map<string, number[]>(), notes: new Map<string, string>() };
      for (let r = 0; r < runs; r++) {
        const res = await ctx.probe<{ cases: TdnsCase[] }>({ mode: 'tdns', host: u.host, udpPort: u.plainPort ?? 53, tlsPort: u.port, caFile: u.pki.caFile, authName: u.pki.authName, n, base });
        base += 12 * n;
        for (const c of res.cases) {
          col.cases.set(c.name, [...(col.cases.get(c.name) ?? []), ...c.ms]);
          if (c.note) col.notes.set(c.name, c.note);
        }
      }
      ctx.log(`  tdns ${col.label}: tls-fresh ${rtt(median(col.cases.get('tls-fresh') ?? []), p.rttMs)} RTT, tls-pipe ${rtt(median(col.cases.get('tls-pipe') ?? []), p.rttMs)} RTT`);
      columns.push(col);
    }
  }
  await ctx.lab.stopPid(shipped.pid);
  await ctx.lab.stopPid(nodelay.pid);
  const rows = CASES.map(([id, what, paper]) => [
    what,
    ...columns.map((c) => {
      const v = c.cases.get(id) ?? [];
      const m = rtt(median(v), c.rttMs);
      return id.endsWith('pipe') || id.endsWith('fast') ? `${m} (max ${rtt(Math.max(...v), c.rttMs)})` : m;
    }),
    paper,
  ]);
  const chartCases = ['udp-saw', 'tcp-fresh', 'tls-fresh', 'tls12-fresh', 'tls-resumed', 'tls-saw', 'tls-pipe', 'tls-ooo-fast'];
  const c35 = columns.filter((c) => c.rttMs === 35);
  const chart = ctx.chart(
    'tdns',
    barsSvg({
      title: 'T-DNS stub-to-resolver cases at 35 ms RTT (median per query)',
      subtitle: 'probe → linkemu → Debian unbound (local data); in RTTs',
      yLabel: 'RTTs',
      categories: chartCases,
      series: Object.fromEntries(c35.map((c) => [c.label, chartCases.map((id) => median(c.cases.get(id) ?? []) / c.rttMs)])),
    }),
  );
  const resumed = columns.map((c) => `${c.label}: TLS 1.3 ${c.notes.get('tls-resumed') ?? '?'}, TLS 1.2 ${c.notes.get('tls12-resumed') ?? '?'}`);
  return {
    id: 'tdns',
    title: 'T-DNS stub-to-resolver cases (UDP, TCP, TLS; fresh, resumed, reused; pipelined; out-of-order)',
    paper: 'T-DNS (Zhu et al. 2015): UDP 1 RTT; TCP fresh 2 RTT; TLS 1.2 fresh 4 RTT (5 with STARTTLS); reused connections 1 RTT like UDP; pipelining sends all at once; without out-of-order answers one slow name stalls all behind it.',
    tables: [{ title: `Median latency per query, in RTTs (${runs} run(s) of ${n} queries per case; at 1 ms RTT the path's own processing shows)`, header: ['case', ...columns.map((c) => c.label), 'T-DNS / model'], rows }],
    goals: [],
    notes: [
      `Sessions resumed: ${resumed.join('; ')}.`,
      'The in-order row is computed from the same run: each fast answer held until every earlier one (the slow name first) had arrived, which is what an in-order server or client gives.',
      'unbound as shipped keeps Nagle on: a second small write waits for the ACK of the first (delayed ACK), which shows in the pipelined and fresh-TLS rows.',
    ],
    charts: [chart],
    seconds: (Date.now() - t0) / 1000,
    data: columns.map((c) => ({ label: c.label, cases: Object.fromEntries(c.cases) })),
  };
}
