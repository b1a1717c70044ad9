/**
 * `npm run bench:roaming`: what a laptop on the move costs, in the network lab
 * (test-support/netlab.ts: client ── router ── server namespaces; needs root).
 * Debian's unbound serves the zone over DoT (853) and DoH (443) in the server
 * namespace; each stub (dotstub, stubby, unbound as a DoT forwarder) runs in
 * the client namespace with its cache off and carries a paced UDP load
 * (bench/udp-load.mjs, a fresh name per query) while the network changes
 * under it, once per scenario:
 *
 *   - address change: the laptop is renumbered (its address removed, another
 *     on the same link; DHCP on a new lease, a VPN's address moving);
 *   - Wi-Fi switch: the link drops for a second and comes back with another
 *     address (joining another access point);
 *   - silently dropped: a NAT or firewall on the way forgets the connection
 *     and drops its packets from then on, with no RST (a new one passes).
 *
 * Per stub and scenario: how long from the change (for the Wi-Fi switch: from
 * the link coming back) to the first correct answer to a query sent after
 * it, and how many of the queries sent after the change failed (SERVFAIL,
 * another error, or no answer within the load's timeout).
 *
 * Writes bench/results/roaming.{md,json,svg,png}. Every process, rule and
 * namespace goes with the lab when it closes (also on Ctrl-C or a crash).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { netlabMissing, startNetlab, unboundIn, type Netlab } from '../test-support/netlab.js';
import { startUnbound, type UnboundServer } from '../test-support/unbound.js';
import { benchMeta, ROOT } from './lab.js';
import { LAB_PORT, startPeerInLab, type LabPeer } from './lab-peers.js';
import { COLORS, esc, renderPng } from './plot.js';
import { median } from './stats.js';
import { wholeNumberFlags } from './args.js';

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const USAGE = 'usage: npm run bench:roaming -- [--quick] [--rounds N] [--warm S] [--after S] [--rate QPS] [--scenario address|wifi|drop]… [--peer dotstub|stubby|unbound-fwd]… [--out DIR] | --replot [--out DIR]';
/** --scenario's words for the scenarios. */
const SCENARIO_WORDS: Readonly<Record<string, string>> = { address: 'address change', wifi: 'Wi-Fi switch', drop: 'silently dropped' };
const NAMES = 5000;
const QUERY_TIMEOUT_MS = 2000;
const PEERS: readonly LabPeer[] = ['dotstub', 'stubby', 'unbound-fwd'];
/** The client's address after a renumbering (private to the lab, as the lab's own). */
const NEW4 = '10.53.1.9';
const NEW6 = 'fd53:1::9';

const int = wholeNumberFlags(USAGE);

interface Scenario {
  readonly name: string;
  readonly sentence: string;
  /** Changes the network; resolves with the moment the change was complete (the link back, the rule in place). */
  act(lab: Netlab): Promise<{ readonly changedAt: number; readonly note?: string }>;
}

async function sh(lab: Netlab, where: 'client' | 'router', script: string): Promise<void> {
  const r = await lab[where].exec(['sh', '-c', script]);
  if (r.code !== 0) throw new Error(`${where}: ${script}: ${r.stderr}`);
}

const SCENARIOS: readonly Scenario[] = [
  {
    name: 'address change',
    sentence: "the laptop's address is removed and another one on the same link takes its place",
    act: async (lab) => {
      const a = lab.addresses;
      await sh(lab, 'client', `ip addr del ${a.client4}/24 dev eth0 && ip addr add ${NEW4}/24 dev eth0 && ip route replace default via ${a.routerClientSide4}`);
      return { changedAt: Date.now() };
    },
  },
  {
    name: 'Wi-Fi switch',
    sentence: 'the link goes down for 1 s and comes back with another address',
    act: async (lab) => {
      const a = lab.addresses;
      await sh(lab, 'client', 'ip link set eth0 down');
      await new Promise((r) => setTimeout(r, 1000));
      await sh(
        lab,
        'client',
        `ip addr flush dev eth0 scope global && ip addr add ${NEW4}/24 dev eth0 && ip addr add ${NEW6}/64 dev eth0 nodad && ip link set eth0 up && ip route replace default via ${a.routerClientSide4} && ip -6 route replace default via ${a.routerClientSide6}`,
      );
      return { changedAt: Date.now() };
    },
  },
  {
    name: 'silently dropped',
    sentence: "a NAT on the way forgets the stub's connections: their packets are dropped from then on, no RST; new connections pass",
    act: async (lab) => {
      const a = lab.addresses;
      const ss = await lab.client.exec(['ss', '-tnH', 'state', 'established', '( dport = :853 )']);
      const ports = [...ss.stdout.matchAll(/:(\d+)\s+\S+:853\b/g)].map((m) => m[1] as string);
      for (const port of ports) {
        await lab.iptables(['-I', 'FORWARD', '-p', 'tcp', '-s', a.client4, '--sport', port, '--dport', '853', '-j', 'DROP'], 4);
        await lab.iptables(['-I', 'FORWARD', '-p', 'tcp', '-d', a.client4, '--dport', port, '--sport', '853', '-j', 'DROP'], 4);
      }
      return { changedAt: Date.now(), note: `${ports.length} connection(s) dropped` };
    },
  },
];

interface Run {
  readonly scenario: string;
  readonly peer: LabPeer;
  readonly round: number;
  readonly note: string | null;
  /** Queries sent after the change began, and how many got a correct answer. */
  readonly sent: number;
  readonly answered: number;
  readonly failed: number;
  /** ms from the change being complete to the first correct answer arriving after it (to a query sent after the change began); null: none. */
  readonly firstAnswerMs: number | null;
  /** The longest stretch (ms) after the change began with no correct answer arriving. */
  readonly longestGapMs: number;
}

let nameOffset = 1000;

async function runOne(lab: Netlab, unbound: UnboundServer, scenario: Scenario, peer: LabPeer, round: number, o: { warmS: number; afterS: number; rate: number }): Promise<Run> {
  const proc = await startPeerInLab(lab, unbound, peer);
  try {
    const seconds = o.warmS + o.afterS;
    const start = nameOffset;
    nameOffset += Math.ceil(seconds * o.rate) + 10;
    const load = lab.client.exec([process.execPath, path.join(ROOT, 'bench', 'udp-load.mjs'), String(LAB_PORT), String(o.rate), String(seconds), String(start), String(NAMES), String(QUERY_TIMEOUT_MS)], {
      timeoutMs: (seconds + 30) * 1000,
    });
    await new Promise((r) => setTimeout(r, o.warmS * 1000));
    const beganAt = Date.now();
    const { changedAt, note } = await scenario.act(lab);
    const r = await load;
    if (r.code !== 0) throw new Error(`the load failed: ${r.stderr}`);
    let sent = 0;
    let answered = 0;
    let firstAnswerMs: number | null = null;
    const answerTimes: number[] = [];
    for (const line of r.stdout.trim().split('\n')) {
      const [sentText, rcode, msText] = line.split(' ');
      const sentAt = Number(sentText);
      const ms = Number(msText);
      if (!Number.isFinite(sentAt)) continue;
      if (rcode === 'NOERROR') answerTimes.push(sentAt + ms);
      if (sentAt < beganAt) continue;
      sent++;
      if (rcode !== 'NOERROR') continue;
      answered++;
      // An answer that arrived before the change was complete (the rule not yet in place) says nothing about recovering from it.
      const after = Math.round(sentAt + ms - changedAt);
      if (after >= 0 && (firstAnswerMs === null || after < firstAnswerMs)) firstAnswerMs = after;
    }
    const end = beganAt + o.afterS * 1000;
    const marks = [beganAt, ...answerTimes.filter((t) => t > beganAt && t < end).sort((x, y) => x - y), end];
    let longestGapMs = 0;
    for (let i = 1; i < marks.length; i++) longestGapMs = Math.max(longestGapMs, Math.round((marks[i] as number) - (marks[i - 1] as number)));
    return { scenario: scenario.name, peer, round, note: note ?? null, sent, answered, failed: sent - answered, firstAnswerMs, longestGapMs };
  } finally {
    await proc.stop();
  }
}

interface Settings {
  readonly quick: boolean;
  readonly rounds: number;
  readonly warmS: number;
  readonly afterS: number;
  readonly rate: number;
  readonly queryTimeoutMs: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean' },
      rounds: { type: 'string' },
      warm: { type: 'string' },
      after: { type: 'string' },
      rate: { type: 'string' },
      scenario: { type: 'string', multiple: true },
      peer: { type: 'string', multiple: true },
      out: { type: 'string' },
      replot: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const out = path.resolve(values.out ?? path.join(ROOT, 'bench', 'results'));
  if (values.replot) {
    const r = JSON.parse(fs.readFileSync(path.join(out, 'roaming.json'), 'utf8')) as { settings: Settings; runs: Run[] };
    writeReport(out, r.settings, r.runs);
    return;
  }
  const quick = values.quick ?? false;
  const rounds = int(values.rounds, 'rounds', quick ? 1 : 3, 1, 20);
  const warmS = int(values.warm, 'warm', 3, 1, 60);
  const afterS = int(values.after, 'after', quick ? 10 : 15, 3, 120);
  const rate = int(values.rate, 'rate', 10, 1, 200);
  const scenarios = (values.scenario ?? Object.keys(SCENARIO_WORDS)).map((w) => {
    const found = SCENARIOS.find((x) => x.name === SCENARIO_WORDS[w]);
    if (!found) throw new Error(`--scenario ${w}: expected one of ${Object.keys(SCENARIO_WORDS).join(', ')}\n${USAGE}`);
    return found;
  });
  const peers = (values.peer ?? PEERS).map((p) => {
    if (!PEERS.includes(p as LabPeer)) throw new Error(`--peer ${p}: expected one of ${PEERS.join(', ')}\n${USAGE}`);
    return p as LabPeer;
  });
  const missing = netlabMissing();
  if (missing) throw new Error(`the roaming bench runs in the network lab: ${missing}`);
  for (const bin of ['/usr/sbin/unbound', '/usr/bin/stubby', '/usr/bin/dig', '/usr/bin/ss']) {
    if (!fs.existsSync(bin)) throw new Error(`${bin} is not installed`);
  }
  const settings: Settings = { quick, rounds, warmS, afterS, rate, queryTimeoutMs: QUERY_TIMEOUT_MS };
  const runs: Run[] = [];
  let meta: ReturnType<typeof benchMeta> | undefined;
  // A fresh lab for every run: each scenario leaves the network changed.
  for (let round = 1; round <= rounds; round++) {
    for (const scenario of scenarios) {
      for (const peer of peers) {
        const lab = await startNetlab();
        const onSignal = (): void => {
          void lab.close().then(() => process.exit(130));
        };
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        try {
          const a = lab.addresses;
          const unbound = await startUnbound({ names: NAMES, port: 853, dohPort: 443, launch: unboundIn(lab.server, [a.server4, a.server6]) });
          meta ??= benchMeta(`unbound ${a.server4} (DoT 853, DoH 443) in the lab's server namespace`);
          const run = await runOne(lab, unbound, scenario, peer, round, { warmS, afterS, rate });
          log(`round ${round}: ${scenario.name}: ${peer}: first answer ${String(run.firstAnswerMs)} ms after; ${run.failed}/${run.sent} failed; longest gap ${run.longestGapMs} ms${run.note ? ` (${run.note})` : ''}`);
          runs.push(run);
          await unbound.stop();
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          await lab.close();
        }
      }
    }
  }
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'roaming.json'), `${JSON.stringify({ meta, command: `npm run bench:roaming -- ${process.argv.slice(2).join(' ')}`.trim(), settings, runs }, null, 2)}\n`);
  writeReport(out, settings, runs);
}

interface Row {
  readonly scenario: string;
  readonly peer: LabPeer;
  readonly firstMs: number | null;
  readonly failed: number;
  readonly sent: number;
  readonly gapMs: number;
}

function rows(runs: readonly Run[]): Row[] {
  const out: Row[] = [];
  for (const s of SCENARIOS) {
    for (const peer of PEERS) {
      const rs = runs.filter((r) => r.scenario === s.name && r.peer === peer);
      if (rs.length === 0) continue;
      const firsts = rs.map((r) => r.firstAnswerMs).filter((v): v is number => v !== null);
      out.push({
        scenario: s.name,
        peer,
        // A run with no answer at all counts as the whole window.
        firstMs: firsts.length === rs.length ? Math.round(median(firsts)) : null,
        failed: rs.reduce((n, r) => n + r.failed, 0),
        sent: rs.reduce((n, r) => n + r.sent, 0),
        gapMs: Math.round(median(rs.map((r) => r.longestGapMs))),
      });
    }
  }
  return out;
}

function markdown(s: Settings, runs: readonly Run[]): string {
  return [
    '# Roaming: the network changes under a running stub',
    '',
    `Network lab (client ── router ── server namespaces), unbound serving DoT on 853 and DoH on 443. Each stub runs in the client namespace, every cache off, and carries ${s.rate} queries/s over UDP (a fresh name each, ${s.queryTimeoutMs} ms to answer) for ${s.warmS} s before the change and ${s.afterS} s from it. ${s.rounds} round(s)${s.quick ? ' (--quick)' : ''}, a fresh lab for each run.`,
    '',
    ...SCENARIOS.map((x) => `- **${x.name}**: ${x.sentence}.`),
    '',
    'First answer: from the change being complete (the Wi-Fi switch: the link back up; silently dropped: the rules in place) to the first correct answer arriving after it, to a query sent after the change began (median over rounds). Failed: queries sent after the change began that got no correct answer (all rounds). Longest gap: the longest stretch after the change began with no correct answer arriving (median).',
    '',
    '| scenario | stub | first answer | failed | longest gap |',
    '| --- | --- | ---: | ---: | ---: |',
    ...rows(runs).map((r) => `| ${r.scenario} | ${r.peer} | ${r.firstMs === null ? 'none in the window' : `${r.firstMs} ms`} | ${r.failed} of ${r.sent} | ${r.gapMs} ms |`),
    '',
  ].join('\n');
}

const W = 1000;

function svg(s: Settings, runs: readonly Run[]): string {
  const rs = rows(runs);
  const H = 130 + rs.length * 30 + SCENARIOS.length * 14;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`,
    '<style>.t{font-size:18px;font-weight:bold}.s{font-size:12px;fill:#4b5563}.p{font-size:14px;font-weight:bold;fill:#111827}.l{font-size:12px;fill:#111827}.v{font-size:11px;fill:#111827}</style>',
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${W / 2}" y="28" text-anchor="middle" class="t">Roaming: the first answer after the network changes</text>`,
    `<text x="${W / 2}" y="48" text-anchor="middle" class="s">${esc(`network lab, unbound DoT 853; ${s.rate} q/s, a fresh name each, caches off; ${s.rounds} round(s); median first answer (log scale), failed queries beside`)}</text>`,
  ];
  const x0 = 260;
  const x1 = 820;
  const lx = (ms: number): number => x0 + ((Math.log10(Math.max(ms, 10)) - 1) / 3.5) * (x1 - x0);
  const maxMs = (s.afterS + 1) * 1000;
  const rowH = 30;
  let y = 80;
  for (const tick of [10, 100, 1000, 10_000]) {
    parts.push(`<line x1="${lx(tick)}" y1="70" x2="${lx(tick)}" y2="${80 + rs.length * rowH + SCENARIOS.length * 14}" stroke="#e5e7eb"/>`);
    parts.push(`<text x="${lx(tick)}" y="${96 + rs.length * rowH + SCENARIOS.length * 14}" text-anchor="middle" class="v">${tick >= 1000 ? `${tick / 1000} s` : `${tick} ms`}</text>`);
  }
  for (const sc of SCENARIOS) {
    const mine = rs.filter((r) => r.scenario === sc.name);
    if (mine.length === 0) continue;
    parts.push(`<text x="20" y="${y + 12}" class="p">${esc(sc.name)}</text>`);
    y += 14;
    for (const r of mine) {
      parts.push(`<text x="${x0 - 8}" y="${y + 17}" text-anchor="end" class="l">${esc(r.peer)}</text>`);
      const ms = r.firstMs ?? maxMs;
      const color = COLORS[r.peer] ?? '#6b7280';
      parts.push(`<rect x="${x0}" y="${y + 4}" width="${(lx(ms) - x0).toFixed(1)}" height="18" fill="${color}"${r.firstMs === null ? ' fill-opacity="0.35"' : ''}/>`);
      parts.push(`<text x="${(lx(ms) + 6).toFixed(1)}" y="${y + 17}" class="v">${r.firstMs === null ? 'no answer in the window' : `${r.firstMs} ms`} · ${r.failed}/${r.sent} failed</text>`);
      y += rowH;
    }
  }
  parts.push('</svg>', '');
  return parts.join('\n');
}

function writeReport(out: string, settings: Settings, runs: readonly Run[]): void {
  fs.writeFileSync(path.join(out, 'roaming.md'), markdown(settings, runs));
  const svgFile = path.join(out, 'roaming.svg');
  fs.writeFileSync(svgFile, svg(settings, runs));
  const png = renderPng(svgFile);
  log(`wrote ${path.join(out, 'roaming.md')}, ${svgFile}${png.png ? `, ${png.png}` : ` (no PNG: ${png.error ?? 'unknown'})`}`);
}

main().catch((err: unknown) => {
  log(`bench:roaming: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
