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
 * bench's lab (bench/probe, unthrottled dnsperf, 4 interleaved rounds), when
 * dotstub allocated ~6.6 KB per query:
 *
 *   semi-space   CPU µs/query   RSS under load
 *   16 MiB       55             111–114 MiB
 *    4 MiB       57 (noise)      93–104 MiB
 *    1 MiB       68 (+24 %)      82–98 MiB, and 15 % fewer queries/s
 *
 * Issue 23 cut the allocation to ~1.7–3.3 KB per query (a scavenge per ~400
 * queries at 1 MiB), and measured again (bench/results/lean-memory.md): at
 * 2,000 q/s (the soak's load, 1 min) CPU per query is the same at 1, 2 and 4
 * MiB within the run-to-run noise (58–64 µs), and the young generation takes
 * 2 MiB instead of 8. At saturation it is not free: with all three flags
 * below, `npm run bench -- --quick --peers dotstub,dnsdist --caches` gave
 * ~14 % more CPU per query against dnsdist in the same runs (1.50 -> 1.71x)
 * and ~7 % fewer queries/s, for a peak RSS of 87 MiB instead of 118 (with
 * ~800 queries outstanding, more of them outlive a 1 MiB semi-space and are
 * promoted). --max-semi-space-size=2 is the middle way if that cost matters.
 *
 * --heap-growing-percent=10 (issue 23): after a full collection V8 lets the
 * old generation grow to live × a factor before the next, and it takes the
 * largest factor, 4, when it has no measure of the allocation rate yet (the
 * first full collection, at start-up). With ~9 MB live at start the next
 * full collection came at 36 MB: under the soak's load (cache filling,
 * query log turning over) V8 held 40 MB of pages for 16–28 MB of objects.
 * At 10 % the limit is live + 8 MB (V8's smallest step): a full collection
 * every ~13 s at 2,000 q/s, 2–15 ms each, most of it on V8's helper threads.
 * Peak RSS under that load: 93 -> 78 MiB (with the 1 MiB semi-space).
 *
 * --v8-pool-size=1 (issue 23): V8's helper threads (concurrent marking and
 * sweeping, background compiles) default to 4; each thread that mallocs gets
 * its own glibc arena, whose freed pages stay resident. With 1: 8 threads
 * instead of 11, malloc's thread arenas 0.5–0.7 MiB instead of 2.1–2.5 under
 * the soak's load, the same CPU per query at 2,000 q/s. (MALLOC_ARENA_MAX=2
 * in the environment did about as well, but it must be in the environment
 * at exec, i.e. in every way dotstub is started, and `node bin/dotstub.js`
 * can't set it for itself.) A node option, read at start only: a process
 * started without it keeps 4.
 *
 * --no-concurrent-recompilation (issue 32): V8 compiles optimized code
 * (Maglev, TurboFan) on the main thread instead of its helper thread. On
 * Node 24 the helper's compiles left ~13 MiB of freed compiler memory in its
 * own glibc arena for good, and malloc never gave it back. With the
 * query path warmed at start (warm-up.ts: most of the compiling done there,
 * before the first lookup), measured with `npm run bench -- desktop --quick
 * --only memory` on Node 24: RSS idle / peak at 2,000 q/s / 20 s after a flood
 * 74.9 / 96.6 / 100.3 MiB before either, 100.2 / 101.3 / 106.6 with the
 * warm-up alone, 83.6 / 85.7 / 91.2 with both; the low-rate bench's p50 the
 * same (bench/results/lowrate-issue32.md). What it costs: a function
 * optimized later (a path first taken after the warm-up) holds the event
 * loop for its compile, a millisecond or two, once.
 *
 * --expose-gc: the proxy runs one full collection when it goes quiet after
 * work (idle-collect.ts), which is what gives a burst's memory back.
 */
export const PROXY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1', '--heap-growing-percent=10', '--v8-pool-size=1', '--no-concurrent-recompilation', '--expose-gc'];
