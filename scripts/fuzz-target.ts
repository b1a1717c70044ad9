/**
 * The fuzzer's target: one dotstub (the real StubProxy, as the CLI wires it)
 * on 127.0.0.1 port 0 against the resolver given, run as a child process so
 * its memory and descriptors are its own and a crash is an exit.
 *
 *   node --import tsx scripts/fuzz-target.ts <resolver> <ca-file> [port]
 *
 * Speaks over the IPC channel: sends { type: 'ready', port } once private,
 * answers { type: 'stats' } with the engine's counters and the heap after a
 * full collection, and exits 70 on an
 * uncaught exception (a crash) after printing it.
 */
import fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseResolverArg } from '../proxy/config/resolvers.js';
import { defaultConfig, startDotstub } from '../proxy/dotstub.js';
import { DEFAULT_POOL_OPTIONS } from '../proxy/upstream/pool/options.js';

export interface TargetReady {
  readonly type: 'ready';
  readonly port: number;
}

export interface TargetStats {
  readonly type: 'stats';
  readonly counters: Readonly<Record<string, number>>;
  /** V8 heap in use after a full collection (the target runs with --expose-gc), KiB. */
  readonly heapUsedKiB: number;
  /** Event-loop delay since the last stats message: 99th percentile and maximum, ms. */
  readonly loopDelayMs: { readonly p99: number; readonly max: number };
}

const [resolverArg, caFile, portArg] = process.argv.slice(2);
if (!resolverArg || !caFile || !process.send) {
  console.error('usage: node --import tsx scripts/fuzz-target.ts <resolver> <ca-file> [port] (with an IPC channel)');
  process.exit(2);
}

process.on('uncaughtException', (err) => {
  console.error(`fuzz-target: uncaught exception: ${err.stack ?? String(err)}`);
  process.exit(70);
});
process.on('unhandledRejection', (err) => {
  console.error(`fuzz-target: unhandled rejection: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(70);
});

const {
  proxy,
  bound: [bound],
} = await startDotstub(
  defaultConfig(parseResolverArg(resolverArg, []), {
    listen: [{ host: '127.0.0.1', port: portArg ? Number(portArg) : 0 }],
    auth: { mode: 'strict', ca: [fs.readFileSync(caFile, 'utf8')] },
    recordNames: false,
    // One connection: the fuzzer's descriptor check looks for leaks, and extra
    // connections for bursts (issue 12; tested in proxy/upstream) would come
    // and go on their own idle schedule.
    pool: { ...DEFAULT_POOL_OPTIONS, burstConnections: 0 },
  }),
);
if (!bound) throw new Error('bound no address');
await new Promise<void>((resolve) => {
  if (proxy.privacy.state.state === 'private') resolve();
  else proxy.on('state', (s) => s.state === 'private' && resolve());
});
const send = (m: TargetReady | TargetStats): void => {
  process.send?.(m);
};
send({ type: 'ready', port: bound.port });
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
process.on('message', (m: { type?: string }) => {
  if (m.type === 'stats') {
    (globalThis as { gc?: () => void }).gc?.();
    const heapUsedKiB = Math.round(process.memoryUsage().heapUsed / 1024);
    const loopDelayMs = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
    loop.reset();
    send({ type: 'stats', counters: { ...proxy.counters } as unknown as Record<string, number>, heapUsedKiB, loopDelayMs });
  }
  if (m.type === 'stop') void proxy.stop(1000).then(() => process.exit(0));
});
// The parent going away ends the target too.
process.on('disconnect', () => void proxy.stop(500).then(() => process.exit(0)));
process.on('SIGTERM', () => void proxy.stop(500).then(() => process.exit(0)));
