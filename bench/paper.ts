/**
 * `npm run bench -- paper [--quick] [--only a,b] [--out DIR] [--no-build]`:
 * the experiments behind dotstub's design (the T-DNS study and the web
 * study), and `npm run bench -- desktop …`: issue 11's (a browsing replay,
 * latency at fixed rates, memory), all over links emulated in the link lab
 * (bench/link-lab.ts). Each writes a table in RTT units with the paper's
 * figure beside it, a chart, and goals met or not, into bench/results/paper/.
 * See bench/README.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchMeta, buildProxy, ROOT } from './lab.js';
import { LinkLab, removeStaleNamespaces } from './link-lab.js';
import { burstExperiment, burstRestartExperiment } from './paper/burst.js';
import { Ctx, type Log } from './paper/context.js';
import { idleCloseExperiment, memoryExperiment, rateExperiment, replayExperiment } from './paper/desktop.js';
import { hitsExperiment } from './paper/hits.js';
import { writeReports, type ExperimentReport } from './paper/report.js';
import { tdnsExperiment } from './paper/tdns.js';
import { getentExperiment, pagesExperiment } from './paper/web.js';

type Experiment = (ctx: Ctx) => Promise<ExperimentReport>;

export const SUITES: Readonly<Record<'paper' | 'desktop', Readonly<Record<string, Experiment>>>> = {
  paper: { tdns: tdnsExperiment, burst: burstExperiment, 'burst-restart': burstRestartExperiment, getent: getentExperiment, pages: pagesExperiment, hits: hitsExperiment },
  desktop: { replay: replayExperiment, 'idle-close': idleCloseExperiment, rate: rateExperiment, memory: memoryExperiment },
};

const log: Log = (line) => void process.stderr.write(`${line}\n`);

function usage(suite: string): string {
  return `usage: npm run bench -- ${suite} [--quick] [--only ${Object.keys(SUITES[suite as 'paper'] ?? {}).join(',')}] [--out DIR] [--no-build]`;
}

export async function runSuite(suite: 'paper' | 'desktop', argv: readonly string[]): Promise<ExperimentReport[]> {
  const { values } = parseArgs({
    args: [...argv],
    options: { quick: { type: 'boolean' }, only: { type: 'string' }, out: { type: 'string' }, 'no-build': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${usage(suite)}\n`);
    return [];
  }
  const experiments = SUITES[suite];
  const only = values.only ? values.only.split(',').map((s) => s.trim()) : Object.keys(experiments);
  for (const id of only) {
    if (!experiments[id]) throw new Error(`--only: unknown experiment "${id}"; choose from ${Object.keys(experiments).join(', ')}\n${usage(suite)}`);
  }
  const quick = values.quick ?? false;
  const out = path.resolve(values.out ?? path.join(ROOT, 'bench', 'results', 'paper'));
  if (!values['no-build']) buildProxy(log);
  const stale = removeStaleNamespaces();
  if (stale.length) log(`removed namespaces left by a bench that was killed: ${stale.join(', ')}`);
  const t0 = Date.now();
  const lab = await LinkLab.open();
  const ctx = new Ctx(lab, { quick, out }, log);
  const release = lab.closeOnSignal(() => ctx.stopEverything());
  const reports: ExperimentReport[] = [];
  try {
    for (const id of only) {
      log(`${suite}: ${id}${quick ? ' (quick)' : ''}`);
      const run = experiments[id];
      if (run) reports.push(await run(ctx));
      await ctx.stopEverything();
    }
  } finally {
    release();
    await ctx.stopEverything();
    await lab.close();
  }
  const meta = benchMeta('Debian unbound in the server ns, local data, DoT');
  const header = [
    `# ${suite === 'paper' ? 'The papers behind dotstub, reproduced' : 'dotstub on a desktop: replay, rates, memory'}${quick ? ' (quick form)' : ''}`,
    '',
    `${meta.date}, commit ${meta.commit}${meta.proxyDirty ? '+dirty' : ''}, node ${meta.node}, ${meta.cores} cores (${meta.cpuModel}); ${((Date.now() - t0) / 1000).toFixed(0)} s in all.`,
    'Links emulated by linkemu between network namespaces (bench/link-lab.ts); latencies in RTTs of the emulated link unless marked ms. The machine is shared and noisy: read ratios, not absolutes.',
  ].join('\n');
  const files = writeReports(out, quick ? `${suite}-quick` : suite, header, reports);
  process.stdout.write(`${fs.readFileSync(files.md, 'utf8')}\n`);
  log(`wrote ${path.relative(ROOT, files.md)} and ${path.relative(ROOT, files.json)}`);
  return reports;
}
