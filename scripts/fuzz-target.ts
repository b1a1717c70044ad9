/**
 * The fuzzer's target: one dotstub (the real StubProxy, as the CLI wires it)
 * on 127.0.0.1 port 0 against the resolver given, run as a child process so
 * its memory and descriptors are its own and a crash is an exit.
 *
 *   node --import tsx scripts/fuzz-target.ts <resolver> <ca-file> [port]
 *
 * Speaks over the IPC channel: sends { type: 'ready', port } once private,
 * answers { type: 'stats' } with the engine's counters, and exits 70 on an
 * uncaught exception (a crash) after printing it.
 */
import fs from 'node:fs';
import { parseResolverArg } from '../proxy/config/resolvers.js';
import { defaultConfig, StubProxy } from '../proxy/dotstub.js';

export interface TargetReady {
  readonly type: 'ready';
  readonly port: number;
}

export interface TargetStats {
  readonly type: 'stats';
  readonly counters: Readonly<Record<string, number>>;
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

const proxy = new StubProxy(
  defaultConfig(parseResolverArg(resolverArg, []), {
    listen: [{ host: '127.0.0.1', port: portArg ? Number(portArg) : 0 }],
    auth: { mode: 'strict', ca: [fs.readFileSync(caFile, 'utf8')] },
    recordNames: false,
  }),
);
const [bound] = await proxy.start();
if (!bound) throw new Error('bound no address');
await new Promise<void>((resolve) => {
  if (proxy.state.state === 'private') resolve();
  else proxy.on('state', (s) => s.state === 'private' && resolve());
});
const send = (m: TargetReady | TargetStats): void => {
  process.send?.(m);
};
send({ type: 'ready', port: bound.port });
process.on('message', (m: { type?: string }) => {
  if (m.type === 'stats') send({ type: 'stats', counters: { ...proxy.counters } as unknown as Record<string, number> });
  if (m.type === 'stop') void proxy.stop(1000).then(() => process.exit(0));
});
// The parent going away ends the target too.
process.on('disconnect', () => void proxy.stop(500).then(() => process.exit(0)));
process.on('SIGTERM', () => void proxy.stop(500).then(() => process.exit(0)));
