/**
 * The web study's profiles (Hounsel et al., "Comparing the effects of DNS,
 * DoT, and DoH on web performance", WWW 2020): 4G, lossy 4G and 3G links;
 * glibc (`getent ahosts`) and Debian's Chromium in the client ns, each with a
 * resolv.conf of its own (a bind mount in a private mount namespace) naming
 * plain DNS (unbound across the link), dotstub or stubby on 127.0.0.N:53.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { LAB_ZONE_NAMES, PROFILES, SERVER_ADDR, WEB_PORT, type LinkProfile } from '../link-lab.js';
import { median, percentile } from '../stats.js';
import { barsSvg } from './chart.js';
import type { Ctx, RunningPeer } from './context.js';
import { fmtMs, type ExperimentReport, type Goal } from './report.js';

interface Resolver {
  readonly label: string;
  readonly nameserver: string;
}

async function resolvers(ctx: Ctx): Promise<{ list: Resolver[]; stop: () => Promise<void> }> {
  const plain = await ctx.upstream(false, 53);
  // dotstub as a user runs it: default settings (cache on; the names are all distinct, so it never hits);
  // and over its DoH upstream, as on a network that blocks 853 (the study's DoH column).
  const running: RunningPeer[] = await ctx.peers(
    [{ name: 'dotstub', label: 'dotstub', caches: true }, { name: 'dotstub', label: 'dotstub (DoH)', caches: true, doh: true }, { name: 'stubby', label: 'stubby' }],
    false,
  );
  return {
    list: [{ label: 'plain DNS', nameserver: plain.host }, ...running.map((r) => ({ label: r.spec.label, nameserver: r.peer.host }))],
    stop: async () => {
      await ctx.stop(running);
      await ctx.lab.stopPid(plain.pid);
    },
  };
}

const q = (v: readonly number[], p: number): number => percentile([...v].sort((a, b) => a - b), p);

export async function getentExperiment(ctx: Ctx): Promise<ExperimentReport> {
  const t0 = Date.now();
  const profiles: LinkProfile[] = ctx.o.quick ? [PROFILES['4g'], PROFILES['lossy-4g']] : [PROFILES['4g'], PROFILES['lossy-4g'], PROFILES['3g']];
  const single = ctx.o.quick ? 10 : 100;
  const rounds = ctx.o.quick ? 3 : 10;
  const { list, stop } = await resolvers(ctx);
  const one = new Map<string, { ms: number[]; failed: number }>();
  const twenty = new Map<string, { ms: number[]; failed: number }>();
  try {
    // Fresh names per resolver, each its own range of the lab zone's n0…n(LAB_ZONE_NAMES - 1): a name past it would be NXDOMAIN and count as a failure.
    const span = Math.floor(LAB_ZONE_NAMES / list.length);
    const next = new Map<string, number>(list.map((r, i) => [r.label, i * span]));
    const names = (r: Resolver, n: number): string[] => {
      const b = next.get(r.label) ?? 0;
      const first = list.findIndex((x) => x.label === r.label) * span;
      if (b + n > first + span) throw new Error(`getent: ${r.label} needs more than its ${span} names of the lab zone`);
      next.set(r.label, b + n);
      return Array.from({ length: n }, (_, i) => `n${b + i}.test`);
    };
    for (const p of profiles) {
      await ctx.lab.setProfile(p);
      for (const r of list) {
        const rc = ctx.lab.resolvConf(r.nameserver);
        type G = { lookups: { ms: number; ok: boolean }[]; allMs: number };
        const s = await ctx.probe<G>({ mode: 'getent', names: names(r, single), parallel: false, timeoutMs: 30_000 }, rc);
        one.set(`${p.name}|${r.label}`, { ms: s.lookups.map((l) => l.ms), failed: s.lookups.filter((l) => !l.ok).length });
        const all = { ms: [] as number[], failed: 0 };
        for (let i = 0; i < rounds; i++) {
          const g = await ctx.probe<G>({ mode: 'getent', names: names(r, 20), parallel: true, timeoutMs: 30_000 }, rc);
          all.ms.push(g.allMs);
          all.failed += g.lookups.filter((l) => !l.ok).length;
        }
        twenty.set(`${p.name}|${r.label}`, all);
        ctx.log(`  getent ${p.name} ${r.label}: one at a time p50 ${fmtMs(median(one.get(`${p.name}|${r.label}`)?.ms ?? []))} ms; 20 at once p50 ${fmtMs(median(all.ms))} ms`);
      }
    }
  } finally {
    await stop();
  }
  const rowsOne = profiles.flatMap((p) => list.map((r) => {
    const v = one.get(`${p.name}|${r.label}`) ?? { ms: [], failed: 0 };
    return [p.label, r.label, fmtMs(q(v.ms, 50)), fmtMs(q(v.ms, 95)), fmtMs(q(v.ms, 99)), `${v.failed}/${v.ms.length}`];
  }));
  const rowsTwenty = profiles.flatMap((p) => list.map((r) => {
    const v = twenty.get(`${p.name}|${r.label}`) ?? { ms: [], failed: 0 };
    return [p.label, r.label, fmtMs(q(v.ms, 50)), fmtMs(q(v.ms, 95)), fmtMs(Math.max(...v.ms)), `${v.failed}/${v.ms.length * 20}`];
  }));
  const goals: Goal[] = [];
  const d = twenty.get('4g|dotstub');
  const pl = twenty.get('4g|plain DNS');
  if (d && pl) {
    const [dp50, pp50, dp95, pp95] = [q(d.ms, 50), q(pl.ms, 50), q(d.ms, 95), q(pl.ms, 95)];
    goals.push({ goal: '20 names at once by glibc on 4G: dotstub p50 ≤ 1.2× plain DNS\'s', value: `${fmtMs(dp50)} vs ${fmtMs(pp50)} ms (${(dp50 / pp50).toFixed(2)}×)`, met: dp50 <= 1.2 * pp50 });
    goals.push({ goal: '20 names at once by glibc on 4G: dotstub p95 ≤ 0.1× plain DNS\'s', value: `${fmtMs(dp95)} vs ${fmtMs(pp95)} ms (${(dp95 / pp95).toFixed(2)}×; ${rounds} rounds${rounds < 20 ? ', too few for a p95 to mean much' : ''})`, met: dp95 <= 0.1 * pp95 });
  }
  const chart = ctx.chart(
    'getent',
    barsSvg({
      title: 'glibc: time until all of 20 names are resolved (median)',
      subtitle: 'getent ahosts ×20 at once in the client ns; resolv.conf → each resolver',
      yLabel: 'ms',
      categories: profiles.map((p) => p.name),
      series: Object.fromEntries(list.map((r) => [r.label, profiles.map((p) => q(twenty.get(`${p.name}|${r.label}`)?.ms ?? [], 50))])),
    }),
  );
  return {
    id: 'getent',
    title: 'glibc lookups on the web study\'s mobile profiles',
    paper: 'Hounsel et al. 2020: on lossy 4G, DoT pages loaded faster than plain DNS (TCP recovers a loss in ~2 RTT while a UDP stub waits for its timeout: glibc 5 s); on 3G (150 ms, 2.1 % loss, 1 Mbit/s) DoT/DoH did worse. Their DoT and DoH columns are beside plain DNS; here "dotstub (DoH)" is dotstub over its DoH upstream, as on a network that blocks 853.',
    tables: [
      { title: `getent ahosts, one name at a time (${single} names per resolver and profile): ms`, header: ['link', 'resolver', 'p50', 'p95', 'p99', 'failed'], rows: rowsOne },
      { title: `getent ahosts, 20 names at once (${rounds} rounds): time until all 20 are done, ms`, header: ['link', 'resolver', 'p50', 'p95', 'max', 'failed lookups'], rows: rowsTwenty },
    ],
    goals,
    notes: ['glibc as Debian ships it: A and AAAA in parallel, 5 s timeout, 2 attempts. Failures: getent exited non-zero (no answer) or was killed after 30 s.'],
    charts: [chart],
    seconds: (Date.now() - t0) / 1000,
    data: { one: Object.fromEntries(one), twenty: Object.fromEntries(twenty) },
  };
}

/** A script that starts Chromium in the client ns with `resolvConf` as its /etc/resolv.conf; Playwright launches it as the browser. */
function chromiumWrapper(ctx: Ctx, resolvConf: string, label: string): string {
  const [cmd, args] = ctx.lab.clientCommand('/usr/bin/chromium', [], resolvConf);
  const file = path.join(ctx.lab.dir, `chromium-${label.replace(/\W+/g, '_')}.sh`);
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  fs.writeFileSync(file, `#!/bin/sh\nexec ${[cmd, ...args].map(quote).join(' ')} "$@"\n`, { mode: 0o755 });
  return file;
}

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export async function pagesExperiment(ctx: Ctx): Promise<ExperimentReport> {
  const t0 = Date.now();
  if (!fs.existsSync('/usr/bin/chromium')) throw new Error('page loads need Debian\'s Chromium at /usr/bin/chromium (apt-get install chromium)');
  const profiles: LinkProfile[] = ctx.o.quick ? [PROFILES['lossy-4g']] : [PROFILES['4g'], PROFILES['lossy-4g'], PROFILES['3g']];
  const loads = ctx.o.quick ? 3 : 10;
  const { list, stop } = await resolvers(ctx);
  const results = new Map<string, { ms: number[]; failed: number; broken: number }>();
  const browsers: Awaited<ReturnType<typeof chromium.launch>>[] = [];
  let page = 0;
  try {
    for (const r of list) {
      browsers.push(await chromium.launch({ executablePath: chromiumWrapper(ctx, ctx.lab.resolvConf(r.nameserver), r.label), args: CHROMIUM_ARGS, timeout: 60_000 }));
    }
    for (const p of profiles) {
      await ctx.lab.setProfile(p);
      for (let i = 0; i < loads; i++) {
        for (const [k, r] of list.entries()) {
          const browser = browsers[k];
          if (!browser) continue;
          const key = `${p.name}|${r.label}`;
          const rec = results.get(key) ?? { ms: [], failed: 0, broken: 0 };
          results.set(key, rec);
          const id = `${process.pid}x${page++}`;
          const context = await browser.newContext();
          try {
            const tab = await context.newPage();
            await tab.goto(`http://page${id}.web.test:${WEB_PORT}/page/${id}?n=20`, { waitUntil: 'load', timeout: 60_000 });
            const m = await tab.evaluate(() => {
              const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
              return { load: nav ? nav.loadEventEnd - nav.startTime : Number.NaN, broken: Array.from(document.images).filter((im) => im.naturalWidth === 0).length };
            });
            rec.ms.push(m.load);
            rec.broken += m.broken;
          } catch {
            rec.failed++;
          } finally {
            await context.close();
          }
        }
      }
      ctx.log(`  pages ${p.name}: ${list.map((r) => `${r.label} p50 ${fmtMs(median(results.get(`${p.name}|${r.label}`)?.ms ?? []))} ms`).join(', ')}`);
    }
  } finally {
    for (const b of browsers) await b.close().catch(() => undefined);
    await stop();
  }
  const rows = profiles.flatMap((p) => list.map((r) => {
    const v = results.get(`${p.name}|${r.label}`) ?? { ms: [], failed: 0, broken: 0 };
    return [p.label, r.label, fmtMs(q(v.ms, 50)), fmtMs(q(v.ms, 95)), fmtMs(Math.max(...v.ms)), String(v.failed), String(v.broken)];
  }));
  const goals: Goal[] = [];
  const get = (l: string): number[] => results.get(`lossy-4g|${l}`)?.ms ?? [];
  const d = get('dotstub');
  if (d.length) {
    const others = ['plain DNS', 'stubby'].map((l) => ({ l, v: get(l) }));
    goals.push({
      goal: 'lossy 4G page loads: dotstub p50 and p95 better than plain DNS\'s and stubby\'s',
      value: `dotstub ${fmtMs(q(d, 50))}/${fmtMs(q(d, 95))} ms; ${others.map((o) => `${o.l} ${fmtMs(q(o.v, 50))}/${fmtMs(q(o.v, 95))}`).join('; ')} (${loads} loads each)`,
      met: others.every((o) => q(d, 50) < q(o.v, 50) && q(d, 95) < q(o.v, 95)),
    });
  }
  const chart = ctx.chart(
    'pages',
    barsSvg({
      title: 'Page loads in Chromium, 20 names per page (median)',
      subtitle: `loadEventEnd; page server at ${SERVER_ADDR} in the server ns; resolv.conf → each resolver`,
      yLabel: 'ms',
      categories: profiles.map((p) => p.name),
      series: Object.fromEntries(list.map((r) => [r.label, profiles.map((p) => q(results.get(`${p.name}|${r.label}`)?.ms ?? [], 50))])),
    }),
  );
  return {
    id: 'pages',
    title: 'Page loads in Debian\'s Chromium, 20 names per page',
    paper: 'Hounsel et al. 2020: on lossy 4G, pages loaded faster with DoT than with plain DNS; on 3G, DoT and DoH were slower than plain DNS. Their DoT, DoH and plain DNS columns are here as dotstub, dotstub (DoH) (its DoH upstream, 853 refused on the path) and plain DNS.',
    tables: [{ title: `Page load time (loadEventEnd), ms, ${loads} loads per resolver and link, interleaved`, header: ['link', 'resolver', 'p50', 'p95', 'max', 'failed loads', 'broken images'], rows }],
    goals,
    notes: ['Every page has 21 names never asked before (the page\'s own and its 20 image hosts), so no cache helps; each load runs in a fresh browser context. Chromium uses its own resolver, which reads the resolv.conf of its mount namespace.'],
    charts: [chart],
    seconds: (Date.now() - t0) / 1000,
    data: Object.fromEntries(results),
  };
}
