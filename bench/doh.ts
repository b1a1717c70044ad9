/**
 * `npm run bench:doh`: what DNS-over-HTTPS costs against DNS-over-TLS through
 * the same upstream. One unbound serves both (DoT on one port, DoH on
 * another, same zone, same PKI); dotstub runs in this process twice, once
 * per transport, and dnsperf drives each over UDP on loopback:
 *
 *   dnsperf ──UDP──► dotstub (DoT pool)             ──TLS :dot──► unbound
 *   dnsperf ──UDP──► dotstub (Fallback, 853 closed) ──h2  :doh──► unbound
 *
 * The DoH proxy is configured as a user would be whose port 853 is blocked:
 * its DoT port has nothing listening, so the fallback carries every query
 * over DoH. Rounds alternate the order; ratios are DoH ÷ DoT within a round,
 * then the median over rounds (the machine is shared: ratios hold, absolute
 * numbers move). Every run is bounded by dnsperf's -l and a kill timer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseResolverArg } from '../proxy/config/resolvers.js';
import { defaultConfig, startDotstub, type StubProxy } from '../proxy/dotstub.js';
import { DEFAULT_POOL_OPTIONS } from '../proxy/upstream/pool/options.js';
import { freePort, startUnbound } from '../test-support/unbound.js';
import { killRunning, runDnsperf, writeQueryFile, type DnsperfResult } from './dnsperf.js';
import { ROOT, benchMeta } from './lab.js';
import { median, percentile } from './stats.js';
import { wholeNumberFlags } from './args.js';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

const USAGE = 'usage: npm run bench:doh -- [--rounds N] [--seconds S] [--rate QPS] [--rate-seconds S] [--out DIR]';

const int = wholeNumberFlags(USAGE);

type Transport = 'dot' | 'doh';

interface RunRecord {
  readonly round: number;
  readonly transport: Transport;
  /** NOERROR answers per second, unthrottled. */
  readonly qps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly lost: number;
  readonly errors: number;
}

function noerrorQps(r: DnsperfResult): number {
  return (r.rcodes.NOERROR ?? 0) / r.runSeconds;
}

function errorsOf(r: DnsperfResult): number {
  return Object.entries(r.rcodes).reduce((n, [code, c]) => (code === 'NOERROR' ? n : n + c), 0);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string' },
      seconds: { type: 'string' },
      rate: { type: 'string' },
      'rate-seconds': { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const rounds = int(values.rounds, 'rounds', 3, 1, 20);
  const seconds = int(values.seconds, 'seconds', 5, 1, 60);
  const rate = int(values.rate, 'rate', 2000, 1, 100_000);
  const rateSeconds = int(values['rate-seconds'], 'rate-seconds', 5, 1, 60);
  const out = path.resolve(values.out ?? path.join(ROOT, 'bench', 'results'));

  const upstream = await startUnbound({ names: 1000, threads: 1, dohPort: 0 });
  const dir = fs.mkdtempSync(path.join(upstream.dir, 'bench-'));
  const proxies: StubProxy[] = [];
  const stop = async (): Promise<void> => {
    killRunning();
    await Promise.all(proxies.map((p) => p.stop(500)));
    await upstream.stop();
  };
  const onSignal = (): void => void stop().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const queryFile = writeQueryFile(dir, 1000);
    const closedDotPort = await freePort();
    const start = async (transport: Transport): Promise<{ proxy: StubProxy; port: number }> => {
      const resolver =
        transport === 'dot'
          ? parseResolverArg(upstream.resolverArg)
          : parseResolverArg(`127.0.0.1:${closedDotPort}#${upstream.pki.authName}`, [], upstream.dohUrl);
      const { proxy, bound } = await startDotstub(
        defaultConfig(resolver, {
          listen: [{ host: '127.0.0.1', port: 0 }],
          auth: { mode: 'strict', ca: [upstream.pki.caPem] },
          pool: DEFAULT_POOL_OPTIONS,
          // The transports are what is measured: every query goes to the resolver.
          cache: null,
          recordNames: false,
        }),
      );
      proxies.push(proxy);
      return { proxy, port: bound[0]?.port as number };
    };
    const dot = await start('dot');
    const doh = await start('doh');
    const ports: Record<Transport, number> = { dot: dot.port, doh: doh.port };
    log(`bench:doh: unbound DoT :${upstream.port}, DoH ${upstream.dohUrl}; ${rounds} rounds × (${seconds} s unthrottled + ${rateSeconds} s at ${rate} qps) per transport`);
    for (const t of ['dot', 'doh'] as const) {
      await runDnsperf({ port: ports[t], queryFile, seconds: 2, outstanding: 200, clients: 4, timeoutSeconds: 3 });
    }
    if (doh.proxy.transport !== 'doh') throw new Error(`the DoH proxy is not on DoH after warm-up (transport ${String(doh.proxy.transport)})`);
    const runs: RunRecord[] = [];
    for (let round = 1; round <= rounds; round++) {
      const order: Transport[] = round % 2 === 1 ? ['dot', 'doh'] : ['doh', 'dot'];
      for (const t of order) {
        const max = await runDnsperf({ port: ports[t], queryFile, seconds, outstanding: 200, clients: 4, timeoutSeconds: 3 });
        const paced = await runDnsperf({ port: ports[t], queryFile, seconds: rateSeconds, maxQps: rate, outstanding: 200, clients: 4, timeoutSeconds: 3, verbose: true });
        const lat = Float64Array.from(paced.latenciesMs).sort();
        const rec: RunRecord = {
          round,
          transport: t,
          qps: noerrorQps(max),
          p50Ms: percentile(lat, 50),
          p99Ms: percentile(lat, 99),
          lost: max.lost + paced.lost,
          errors: errorsOf(max) + errorsOf(paced),
        };
        runs.push(rec);
        log(`  round ${round} ${t.toUpperCase()}: ${Math.round(rec.qps)} qps, p50 ${rec.p50Ms.toFixed(3)} ms, p99 ${rec.p99Ms.toFixed(3)} ms @${rate}, lost ${rec.lost}, errors ${rec.errors}`);
      }
    }
    const per = (t: Transport, f: (r: RunRecord) => number): number => median(runs.filter((r) => r.transport === t).map(f));
    const ratio = (f: (r: RunRecord) => number): number =>
      median(
        Array.from({ length: rounds }, (_, i) => {
          const a = runs.find((r) => r.round === i + 1 && r.transport === 'doh');
          const b = runs.find((r) => r.round === i + 1 && r.transport === 'dot');
          return a && b ? f(a) / f(b) : Number.NaN;
        }),
      );
    const meta = benchMeta(`unbound (DoT :${upstream.port}, DoH :${upstream.dohPort})`);
    const md = [
      `# DoH vs DoT through one unbound (${meta.date}, ${meta.commit}${meta.proxyDirty ? ', proxy/ modified' : ''})`,
      '',
      `${meta.cores} cores (${meta.cpuModel}), node ${meta.node}; dnsperf UDP -q 200 -c 4; ${rounds} rounds, ${seconds} s unthrottled + ${rateSeconds} s at ${rate} qps each; in-process dotstub with its default pool (1 connection + up to ${DEFAULT_POOL_OPTIONS.burstConnections ?? 0} for bursts), padding on, no cache.`,
      '',
      '| transport | max qps (median) | p50 ms @' + rate + ' | p99 ms @' + rate + ' | lost | errors |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...(['dot', 'doh'] as const).map(
        (t) =>
          `| ${t === 'dot' ? 'DoT' : 'DoH (fallback, 853 closed)'} | ${Math.round(per(t, (r) => r.qps))} | ${per(t, (r) => r.p50Ms).toFixed(3)} | ${per(t, (r) => r.p99Ms).toFixed(3)} | ${runs.filter((r) => r.transport === t).reduce((n, r) => n + r.lost, 0)} | ${runs.filter((r) => r.transport === t).reduce((n, r) => n + r.errors, 0)} |`,
      ),
      '',
      `DoH ÷ DoT (median of per-round ratios): throughput ${ratio((r) => r.qps).toFixed(2)}×, p50 ${ratio((r) => r.p50Ms).toFixed(2)}×, p99 ${ratio((r) => r.p99Ms).toFixed(2)}×.`,
      '',
    ].join('\n');
    process.stdout.write(md);
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'doh.md'), md);
    fs.writeFileSync(path.join(out, 'doh.json'), `${JSON.stringify({ meta, settings: { rounds, seconds, rate, rateSeconds }, runs }, null, 2)}\n`);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stop();
  }
}

main().catch((err: unknown) => {
  log(`bench:doh: ${err instanceof Error ? err.message : String(err)}`);
  killRunning();
  process.exitCode = 1;
});
