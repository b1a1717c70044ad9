/**
 * `npm run bench:interference`: what a hostile network costs, in the network
 * lab (test-support/netlab.ts: client ── router ── server namespaces; needs
 * root). Debian's unbound serves the zone over DoT (853) and DoH (443) in the
 * server namespace; the stubs run in the client namespace; iptables in the
 * router does the damage.
 *
 * 1. Time to a decision, per failure kind: dotstub starts while the router
 *    drops / resets / ICMP-rejects port 853, resets or swallows the TLS
 *    ClientHello that names the resolver (an SNI filter), or redirects 853 to
 *    a TLS server with the wrong certificate; the bench reads how long the failed attempt
 *    took from /api/status (`network.afterMs`, the proxy's own clock) and
 *    what the first query got (dig). Plus Happy Eyeballs: IPv6 dropped, how
 *    long until IPv4 wins (`race.afterMs`).
 * 2. An outage: each stub (dotstub, stubby, unbound as a DoT forwarder)
 *    carries a paced UDP load (bench/udp-load.mjs, a fresh name per query,
 *    every cache off) while port 853 is dropped for OUTAGE seconds, then
 *    lifted; answers, SERVFAILs and silences are counted per phase (before,
 *    during, the AFTER seconds after). stubby and unbound don't fall back to
 *    DoH: that is the point.
 *
 * Writes bench/results/interference.{md,json,svg,png}. Every process, rule
 * and namespace goes with the lab when it closes (also on Ctrl-C or a crash).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { netlabMissing, startNetlab, unboundIn, waitForListening, type Netlab, type NetlabProcess } from '../test-support/netlab.js';
import { startUnbound, type UnboundServer } from '../test-support/unbound.js';
import { benchMeta, ROOT } from './lab.js';
import { dig, LAB_PORT as PORT, runDotstub, startPeerInLab, type LabPeer } from './lab-peers.js';
import { COLORS, esc, renderPng } from './plot.js';
import { median } from './stats.js';
import { wholeNumberFlags } from './args.js';

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const USAGE = 'usage: npm run bench:interference -- [--quick] [--rounds N] [--outage S] [--after S] [--rate QPS] [--out DIR] | --replot [--out DIR]';
const NAMES = 5000;
const QUERY_TIMEOUT_MS = 2000;

const int = wholeNumberFlags(USAGE);

interface Kind {
  readonly name: string;
  /** iptables rules in the router (family 4 and 6 alike unless `v4only`). */
  readonly rules: readonly (readonly string[])[];
  readonly nat?: boolean;
  /** Race both addresses (IPv6 first); else IPv4 only. */
  readonly dualStack?: boolean;
  /** Read race.afterMs (Happy Eyeballs) instead of network.afterMs. */
  readonly race?: boolean;
}

interface Decision {
  readonly kind: string;
  readonly round: number;
  readonly classification: string | null;
  /** The proxy's own measure: how long the failed attempt (or the race) took, ms. */
  readonly decidedMs: number | null;
  readonly firstRcode: string;
  readonly firstMs: number;
  readonly transport: string | null;
  readonly sentence: string | null;
}

type Phase = 'before' | 'during' | 'after';

interface PhaseCount {
  sent: number;
  answered: number;
  servfail: number;
  silent: number;
  other: number;
  latencies: number[];
}

interface OutageRun {
  readonly peer: string;
  readonly phases: Record<Phase, Omit<PhaseCount, 'latencies'> & { p50Ms: number | null }>;
  /** ms from the lift to the first correct answer to a query sent after it; null if none. */
  readonly recoveryMs: number | null;
  /**
   * The last query sent before the lift was answered correctly (dotstub over
   * DoH): nothing to recover from, and recoveryMs is not a recovery. Absent
   * in results written before it was recorded.
   */
  readonly answeringAtLift?: boolean;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean' },
      rounds: { type: 'string' },
      outage: { type: 'string' },
      after: { type: 'string' },
      rate: { type: 'string' },
      out: { type: 'string' },
      replot: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (values.replot) {
    // Only the table and the plot again, from the JSON a run wrote (no lab, no root).
    const dir = path.resolve(values.out ?? path.join(ROOT, 'bench', 'results'));
    const r = JSON.parse(fs.readFileSync(path.join(dir, 'interference.json'), 'utf8')) as { settings: Settings; decisions: Decision[]; outages: OutageRun[] };
    writeReport(dir, r.settings, r.decisions, r.outages);
    return;
  }
  const quick = values.quick ?? false;
  const rounds = int(values.rounds, 'rounds', quick ? 1 : 3, 1, 20);
  const outageS = int(values.outage, 'outage', quick ? 10 : 30, 1, 300);
  const afterS = int(values.after, 'after', quick ? 5 : 10, 1, 120);
  const rate = int(values.rate, 'rate', 20, 1, 500);
  const out = path.resolve(values.out ?? path.join(ROOT, 'bench', 'results'));
  const missing = netlabMissing();
  if (missing) throw new Error(`the interference bench runs in the network lab: ${missing}`);
  for (const bin of ['/usr/sbin/unbound', '/usr/bin/stubby', '/usr/bin/dig', '/usr/bin/openssl', '/usr/bin/curl']) {
    if (!fs.existsSync(bin)) throw new Error(`${bin} is not installed`);
  }

  const lab = await startNetlab();
  const onSignal = (): void => {
    void lab.close().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const a = lab.addresses;
    log(`lab up; unbound (DoT 853, DoH 443) at ${a.server4} and ${a.server6}`);
    const unbound = await startUnbound({ names: NAMES, port: 853, dohPort: 443, launch: unboundIn(lab.server, [a.server4, a.server6]) });
    const impostor = await startImpostor(lab, unbound);

    const reject = (w: string): string[] => ['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', '-j', 'REJECT', '--reject-with', w];
    const kinds: Kind[] = [
      { name: '853 dropped', rules: [['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', '-j', 'DROP']] },
      { name: '853 dropped, v4+v6 raced', rules: [['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', '-j', 'DROP']], dualStack: true },
      { name: '853 reset (RST)', rules: [reject('tcp-reset')] },
      { name: 'ICMP port unreachable', rules: [reject('icmp-port-unreachable')] },
      { name: 'ICMP host unreachable', rules: [reject('icmp-host-unreachable')] },
      { name: 'SNI filter: RST to the hello', rules: [['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', '-m', 'string', '--string', 'dns.test', '--algo', 'bm', '-j', 'REJECT', '--reject-with', 'tcp-reset']] },
      { name: 'SNI filter: hello dropped', rules: [['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', '-m', 'string', '--string', 'dns.test', '--algo', 'bm', '-j', 'DROP']] },
      { name: 'wrong certificate (DNAT)', rules: [['-A', 'PREROUTING', '-p', 'tcp', '--dport', '853', '-j', 'DNAT', '--to-destination', `${a.serverAlt4}:853`]], nat: true },
      { name: 'Happy Eyeballs: v6 dropped', rules: [], dualStack: true, race: true },
    ];
    const decisions: Decision[] = [];
    for (let round = 1; round <= rounds; round++) {
      for (const k of kinds) {
        const d = await decide(lab, unbound, k, round);
        log(`round ${round}: ${k.name}: ${d.classification ?? '-'} in ${String(d.decidedMs)} ms; first query ${d.firstRcode} in ${d.firstMs} ms`);
        decisions.push(d);
      }
    }

    const outages: OutageRun[] = [];
    for (const peer of ['dotstub', 'stubby', 'unbound-fwd'] as const) {
      const r = await outage(lab, unbound, peer, { outageS, afterS, rate, warmS: 5 });
      log(`${peer}: during ${JSON.stringify(r.phases.during)}; after ${JSON.stringify(r.phases.after)}; recovery ${String(r.recoveryMs)} ms`);
      outages.push(r);
    }
    await impostor.stop();
    await unbound.stop();

    const settings = { quick, rounds, outageS, afterS, rate, queryTimeoutMs: QUERY_TIMEOUT_MS };
    const meta = benchMeta(`unbound ${a.server4}/${a.server6} (DoT 853, DoH 443) in the lab's server namespace`);
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'interference.json'), `${JSON.stringify({ meta, settings, decisions, outages }, null, 2)}\n`);
    writeReport(out, settings, decisions, outages);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await lab.close();
  }
}

function writeReport(out: string, settings: Settings, decisions: readonly Decision[], outages: readonly OutageRun[]): void {
  const kinds = [...new Set(decisions.map((d) => d.kind))];
  const md = markdown(settings, decisions, outages, kinds);
  fs.writeFileSync(path.join(out, 'interference.md'), md);
  const svgFile = path.join(out, 'interference.svg');
  fs.writeFileSync(svgFile, svg(settings, decisions, outages, kinds));
  const png = renderPng(svgFile);
  process.stdout.write(md);
  log(`wrote ${path.join(out, 'interference.md')}, .json, .svg${png.png ? ', .png' : ` (no PNG: ${png.error ?? ''})`}`);
}

/** A TLS server with a certificate for the right name from a CA nobody trusts (openssl s_server), at the server's second address. */
async function startImpostor(lab: Netlab, unbound: UnboundServer): Promise<NetlabProcess> {
  const key = path.join(lab.dir, 'impostor.key');
  const cert = path.join(lab.dir, 'impostor.pem');
  fs.writeFileSync(key, unbound.pki.impostorKey);
  fs.writeFileSync(cert, unbound.pki.impostorCert);
  const p = lab.server.spawn(['openssl', 's_server', '-quiet', '-accept', `${lab.addresses.serverAlt4}:853`, '-cert', cert, '-key', key]);
  await waitForListening(lab.server, [853]);
  return p;
}

interface NetworkField {
  readonly classification: string;
  readonly afterMs: number;
  readonly sentence: string;
}

async function decide(lab: Netlab, unbound: UnboundServer, k: Kind, round: number): Promise<Decision> {
  const a = lab.addresses;
  const removals: (() => Promise<void>)[] = [];
  for (const rule of k.rules) {
    if (k.nat) removals.push(await lab.iptables(['-t', 'nat', ...rule], 4));
    else {
      removals.push(await lab.iptables(rule, 4));
      // ip6tables names the ICMP rejections icmp6-*.
      const v6 = rule.map((w) => (w === 'icmp-port-unreachable' ? 'icmp6-port-unreachable' : w === 'icmp-host-unreachable' ? 'icmp6-addr-unreachable' : w));
      removals.push(await lab.iptables(v6, 6));
    }
  }
  if (k.race) removals.push(await lab.iptables(['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', '-j', 'DROP'], 6));
  const d = await runDotstub(lab, unbound, k.dualStack ? `${a.server4},[${a.server6}]:853#dns.test` : `${a.server4}:853#dns.test`);
  try {
    const first = await dig(lab, `n${round * 100 + 1}.test`);
    const deadline = Date.now() + 6000;
    for (;;) {
      const s = await d.api('status');
      const network = s.network as NetworkField | null;
      const race = s.race as { afterMs: number } | null;
      const done = k.race ? race !== null : network !== null;
      if (done || Date.now() > deadline) {
        return {
          kind: k.name,
          round,
          classification: k.race ? (race ? 'race won by IPv4' : null) : (network?.classification ?? null),
          decidedMs: k.race ? (race?.afterMs ?? null) : (network?.afterMs ?? null),
          firstRcode: first.rcode,
          firstMs: first.ms,
          transport: (s.transport as string | null) ?? null,
          sentence: k.race ? null : (network?.sentence ?? null),
        };
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await d.process.stop();
    for (const r of removals) await r();
  }
}

let nameOffset = 1000;

async function outage(
  lab: Netlab,
  unbound: UnboundServer,
  peer: LabPeer,
  o: { outageS: number; afterS: number; rate: number; warmS: number },
): Promise<OutageRun> {
  const proc = await startPeerInLab(lab, unbound, peer);
  try {
    const seconds = o.warmS + o.outageS + o.afterS;
    const start = nameOffset;
    nameOffset += Math.ceil(seconds * o.rate) + 10;
    const load = lab.client.exec([process.execPath, path.join(ROOT, 'bench', 'udp-load.mjs'), String(PORT), String(o.rate), String(seconds), String(start), String(NAMES), String(QUERY_TIMEOUT_MS)], {
      timeoutMs: (seconds + 30) * 1000,
    });
    const began = Date.now();
    await new Promise((r) => setTimeout(r, o.warmS * 1000));
    const blockedAt = Date.now();
    const lift = await lab.iptables(['-A', 'FORWARD', '-p', 'tcp', '--dport', '853', '-j', 'DROP'], 'both');
    await new Promise((r) => setTimeout(r, Math.max(0, began + (o.warmS + o.outageS) * 1000 - Date.now())));
    await lift();
    const liftedAt = Date.now();
    const r = await load;
    if (r.code !== 0) throw new Error(`the load failed: ${r.stderr}`);
    const counts: Record<Phase, PhaseCount> = {
      before: { sent: 0, answered: 0, servfail: 0, silent: 0, other: 0, latencies: [] },
      during: { sent: 0, answered: 0, servfail: 0, silent: 0, other: 0, latencies: [] },
      after: { sent: 0, answered: 0, servfail: 0, silent: 0, other: 0, latencies: [] },
    };
    let recoveryMs: number | null = null;
    let lastBeforeLift = { sentAt: -Infinity, ok: false };
    for (const line of r.stdout.trim().split('\n')) {
      const [sentText, rcode, msText] = line.split(' ');
      const sentAt = Number(sentText);
      const ms = Number(msText);
      if (!Number.isFinite(sentAt)) continue;
      const phase: Phase = sentAt < blockedAt ? 'before' : sentAt < liftedAt ? 'during' : 'after';
      const c = counts[phase];
      c.sent++;
      if (phase === 'during' && sentAt > lastBeforeLift.sentAt) lastBeforeLift = { sentAt, ok: rcode === 'NOERROR' };
      if (rcode === 'NOERROR') {
        c.answered++;
        c.latencies.push(ms);
        if (phase === 'after' && (recoveryMs === null || sentAt + ms - liftedAt < recoveryMs)) recoveryMs = Math.round(sentAt + ms - liftedAt);
      } else if (rcode === 'SERVFAIL') c.servfail++;
      else if (rcode === 'TIMEOUT') c.silent++;
      else c.other++;
    }
    const phases = Object.fromEntries(
      (Object.entries(counts) as [Phase, PhaseCount][]).map(([p, c]) => [p, { sent: c.sent, answered: c.answered, servfail: c.servfail, silent: c.silent, other: c.other, p50Ms: c.latencies.length ? Math.round(median(c.latencies) * 10) / 10 : null }]),
    ) as OutageRun['phases'];
    return { peer, phases, recoveryMs, answeringAtLift: lastBeforeLift.ok };
  } finally {
    await proc.stop();
  }
}

interface Settings {
  readonly quick: boolean;
  readonly rounds: number;
  readonly outageS: number;
  readonly afterS: number;
  readonly rate: number;
  readonly queryTimeoutMs: number;
}

function summarise(decisions: readonly Decision[], kinds: readonly string[]): { kind: string; classification: string; medianMs: number | null; firstQuery: string; transport: string }[] {
  return kinds.map((k) => {
    const ds = decisions.filter((d) => d.kind === k);
    const ms = ds.map((d) => d.decidedMs).filter((v): v is number => v !== null);
    const firsts = ds.map((d) => `${d.firstRcode} ${d.firstMs} ms`);
    return {
      kind: k,
      classification: [...new Set(ds.map((d) => d.classification ?? 'none'))].join(', '),
      medianMs: ms.length ? Math.round(median(ms)) : null,
      firstQuery: firsts.join('; '),
      transport: [...new Set(ds.map((d) => d.transport ?? 'none'))].join(', '),
    };
  });
}

function markdown(s: Settings, decisions: readonly Decision[], outages: readonly OutageRun[], kinds: readonly string[]): string {
  const lines = [
    '# Interference: time to a decision, and an outage',
    '',
    `Network lab (client ── router ── server namespaces), unbound serving DoT on 853 and DoH on 443; dotstub strict with DoH as its fallback. ${s.rounds} round(s)${s.quick ? ' (--quick)' : ''}.`,
    '',
    '## Time to a decision (dotstub)',
    '',
    'How long the failed attempt took by dotstub\'s own clock (`/api/status` → `network.afterMs`; for Happy Eyeballs `race.afterMs`, IPv6 dropped until IPv4 authenticated), median over rounds; the first query a client (dig) sent right after start, and the transport carrying queries after the decision.',
    '',
    '| the network | classification | decided in (median) | first query (each round) | transport after |',
    '| --- | --- | ---: | --- | --- |',
    ...summarise(decisions, kinds).map((r) => `| ${r.kind} | ${r.classification} | ${r.medianMs === null ? '–' : `${r.medianMs} ms`} | ${r.firstQuery} | ${r.transport} |`),
    '',
    `## A ${s.outageS} s outage (port 853 dropped) and the ${s.afterS} s after`,
    '',
    `Each stub carries ${s.rate} queries/s over UDP, a fresh name each (every cache off), waiting ${s.queryTimeoutMs} ms per answer; port 853 is dropped in the router (IPv4 and IPv6) after 5 s and lifted ${s.outageS} s later. "Silent": no answer within ${s.queryTimeoutMs} ms. Recovery: from the lift to the first correct answer, for a stub that was not answering when the outage ended; one that was (dotstub, over DoH) had nothing to recover from.`,
    '',
    '| stub | during: answered | SERVFAIL | silent | after: answered | SERVFAIL | silent | recovery | p50 during |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...outages.map((o) => {
      const d = o.phases.during;
      const a = o.phases.after;
      return `| ${o.peer} | ${d.answered}/${d.sent} | ${d.servfail} | ${d.silent} | ${a.answered}/${a.sent} | ${a.servfail} | ${a.silent} | ${(o.answeringAtLift ?? d.answered > d.sent / 2) ? 'none needed: answering at the lift' : o.recoveryMs === null ? '–' : `${o.recoveryMs} ms`} | ${d.p50Ms === null ? '–' : `${d.p50Ms} ms`} |`;
    }),
    '',
    'stubby and unbound have no DoH fallback: during a 853 block they can only fail; dotstub moves to DoH on 443 (same resolver, authenticated on its own) and back to DoT once 853 opens (no sooner than 10 s after the switch).',
    '',
  ];
  return lines.join('\n');
}

const W = 1000;
const H = 480;

function svg(s: Settings, decisions: readonly Decision[], outages: readonly OutageRun[], kinds: readonly string[]): string {
  const rows = summarise(decisions, kinds);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`,
    '<style>.t{font-size:18px;font-weight:bold}.s{font-size:12px;fill:#4b5563}.p{font-size:14px;font-weight:bold;fill:#111827}.l{font-size:11.5px;fill:#111827}.v{font-size:11px;fill:#111827}</style>',
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${W / 2}" y="28" text-anchor="middle" class="t">When the network gets in the way</text>`,
    `<text x="${W / 2}" y="48" text-anchor="middle" class="s">${esc(`network lab, unbound DoT 853 + DoH 443; ${s.rounds} round(s); outage ${s.outageS} s + ${s.afterS} s after at ${s.rate} q/s`)}</text>`,
    `<text x="250" y="82" text-anchor="middle" class="p">dotstub: time to a decision (median, log scale)</text>`,
    `<text x="780" y="82" text-anchor="middle" class="p">Queries during the outage / the ${s.afterS} s after</text>`,
  ];
  // Left: horizontal bars, log scale 10 ms … 10 s.
  const x0 = 200;
  const x1 = 470;
  const lx = (ms: number): number => x0 + ((Math.log10(Math.max(ms, 10)) - 1) / 3) * (x1 - x0);
  const rowH = Math.min(40, Math.floor(310 / Math.max(1, rows.length)));
  for (const tick of [10, 100, 1000, 10_000]) {
    parts.push(`<line x1="${lx(tick)}" y1="95" x2="${lx(tick)}" y2="${100 + rows.length * rowH}" stroke="#e5e7eb"/>`);
    parts.push(`<text x="${lx(tick)}" y="${115 + rows.length * rowH}" text-anchor="middle" class="v">${tick >= 1000 ? `${tick / 1000} s` : `${tick} ms`}</text>`);
  }
  rows.forEach((r, i) => {
    const y = 100 + i * rowH;
    parts.push(`<text x="${x0 - 8}" y="${y + 15}" text-anchor="end" class="l">${esc(r.kind)}</text>`);
    parts.push(`<text x="${x0 - 8}" y="${y + 28}" text-anchor="end" class="v" fill="#6b7280">${esc(r.classification)}</text>`);
    if (r.medianMs !== null) {
      parts.push(`<rect x="${x0}" y="${y + 6}" width="${(lx(r.medianMs) - x0).toFixed(1)}" height="20" fill="${COLORS.dotstub}"/>`);
      parts.push(`<text x="${(lx(r.medianMs) + 4).toFixed(1)}" y="${y + 21}" class="v">${r.medianMs} ms</text>`);
    }
  });
  // Right: per stub, two stacked bars (during, after): answered / SERVFAIL / silent, as shares of queries sent.
  const bx = 600;
  const bw = 360;
  const colors = { answered: '#16a34a', servfail: '#f59e0b', silent: '#dc2626' };
  outages.forEach((o, i) => {
    (['during', 'after'] as const).forEach((phase, j) => {
      const c = o.phases[phase];
      const y = 100 + i * 100 + j * 34;
      parts.push(`<text x="${bx - 8}" y="${y + 16}" text-anchor="end" class="l">${esc(j === 0 ? `${o.peer} ${phase}` : phase)}</text>`);
      let x = bx;
      for (const key of ['answered', 'servfail', 'silent'] as const) {
        const w = c.sent ? (c[key] / c.sent) * bw : 0;
        if (w > 0) {
          parts.push(`<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="24" fill="${colors[key]}"/>`);
          if (w > 34) parts.push(`<text x="${(x + w / 2).toFixed(1)}" y="${y + 16}" text-anchor="middle" class="v" fill="#ffffff">${c[key]}</text>`);
        }
        x += w;
      }
      if (c.sent === 0) parts.push(`<text x="${bx}" y="${y + 16}" class="v">no queries</text>`);
    });
  });
  const ly = 100 + outages.length * 100;
  (['answered', 'servfail', 'silent'] as const).forEach((key, i) => {
    parts.push(`<rect x="${bx + i * 120}" y="${ly}" width="12" height="12" fill="${colors[key]}"/>`);
    parts.push(`<text x="${bx + i * 120 + 18}" y="${ly + 11}" class="v">${key === 'servfail' ? 'SERVFAIL' : key}</text>`);
  });
  parts.push(`<text x="${W / 2}" y="${H - 16}" text-anchor="middle" class="s">${esc('stubby and unbound-fwd have no DoH fallback; dotstub moves to DoH on 443 while 853 is dropped')}</text>`);
  parts.push('</svg>', '');
  return parts.join('\n');
}

main().catch((err: unknown) => {
  log(`bench:interference: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
