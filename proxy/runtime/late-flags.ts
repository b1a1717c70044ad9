/**
 * The proxy's node flags (node-flags.ts) for a process started without
 * them — `node bin/dotstub.js`, or a tool that spawns the script with its
 * own node — as far as they can still take effect once V8 runs (issue 23:
 * the same memory however dotstub is started). A no-op where the flags were
 * given, as the shebang, the app's supervisor and the service give them.
 *
 * - --expose-gc: set now, it gives a `gc` to contexts made from then on;
 *   one made here lends its `gc` to the global object, where the idle
 *   collector (idle-collect.ts) looks for it.
 * - --max-semi-space-size: V8 fixed the young generation's ceiling when it
 *   started (16 MiB a semi-space), but it reads --semi-space-growth-factor
 *   each time it would grow it: a factor of 1 keeps it at the size it
 *   started with (4 MiB in all, measured; the flag allows 8). Not the flag's
 *   ceiling exactly (a
 *   factor that changes as it grows would need a callback after every
 *   collection, and a late one lets it overshoot): more scavenges, less
 *   memory.
 * - --heap-growing-percent: V8 reads it each time it sets the old
 *   generation's next limit, so set now it works as if given at start.
 *
 * Measured with the soak's load (bench/soak.ts: 90 s at 500 q/s, then 60 s
 * quiet) on `node bin/dotstub.js`: RSS peak 110 -> 85 MiB, and 60 s after
 * the load 111.5 MiB (V8 holding 55.8 MB for 18 MB of objects, never given
 * back) -> 67 MiB (15.8 MB for 13.9), with the answer cache's smaller
 * entries of the same commits.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { PROXY_NODE_FLAGS } from './node-flags.js';

const SEMI_SPACE_FLAG = '--max-semi-space-size=';
const HEAP_GROWING_FLAG = '--heap-growing-percent=';

/** What was applied (for tests, and to say nothing happened). */
export interface LateFlags {
  readonly exposedGc: boolean;
  readonly youngGenerationCapped: boolean;
  readonly oldGenerationGrowthSet: boolean;
}

export function applyLateFlags(execArgv: readonly string[] = process.execArgv): LateFlags {
  let exposedGc = false;
  const global = globalThis as { gc?: unknown };
  if (typeof global.gc !== 'function' && PROXY_NODE_FLAGS.includes('--expose-gc')) {
    v8.setFlagsFromString('--expose-gc');
    global.gc = vm.runInNewContext('gc');
    exposedGc = true;
  }
  const wanted = PROXY_NODE_FLAGS.some((f) => f.startsWith(SEMI_SPACE_FLAG));
  const given = execArgv.some((a) => a.startsWith(SEMI_SPACE_FLAG));
  if (wanted && !given) v8.setFlagsFromString('--semi-space-growth-factor=1');
  const growth = PROXY_NODE_FLAGS.find((f) => f.startsWith(HEAP_GROWING_FLAG));
  const growthGiven = execArgv.some((a) => a.startsWith(HEAP_GROWING_FLAG));
  if (growth !== undefined && !growthGiven) v8.setFlagsFromString(growth);
  return { exposedGc, youngGenerationCapped: wanted && !given, oldGenerationGrowthSet: growth !== undefined && !growthGiven };
}
