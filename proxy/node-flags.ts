/**
 * Node and V8 flags the proxy process runs with, wherever it is started:
 * the `dotstub` command's shebang (bin/dotstub.js), the desktop app's
 * supervisor, the package's /opt/dotstub/dotstub-cli (scripts/package-deb.mjs) and the
 * benchmarks. They must be given at start-up: V8 sizes its heap before any
 * script runs, and setting them later from JavaScript has no effect.
 *
 * Why (issue 11, memory): V8's young generation grows to 16 MiB per
 * semi-space under load and is not given back, so one burst of queries (or
 * of garbage) left the process tens of MiB larger for good. Measured on the
 * bench's lab (bench/probe, unthrottled dnsperf, 4 interleaved rounds):
 *
 *   semi-space   CPU µs/query   RSS under load
 *   16 MiB       55             111–114 MiB
 *    4 MiB       57 (noise)      93–104 MiB
 *    1 MiB       68 (+24 %)      82–98 MiB, and 15 % fewer queries/s
 *
 * 4 MiB is the size that costs no measurable throughput. dotstub allocates
 * ~6.6 KB per query (one scavenge per ~150 queries at 1 MiB); cutting that
 * is what would let the young generation shrink further for free.
 *
 * --expose-gc: the proxy runs one full collection when it goes quiet after
 * work (idle-collect.ts), which is what gives a burst's memory back.
 */
export const PROXY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4', '--expose-gc'];
