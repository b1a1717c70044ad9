/**
 * Node and V8 flags the proxy process runs with, wherever it is started:
 * the `dotstub` command's shebang (bin/dotstub.js), the desktop app's
 * supervisor, the packaged CLI wrapper (packaging/dotstub-cli) and the
 * benchmarks. They must be given at start-up: V8 sizes its heap before any
 * script runs, and setting them later from JavaScript has no effect.
 *
 * Why (issue 11, memory): V8's young generation grows to 16 MiB per
 * semi-space under load and is not given back, so one burst of queries (or
 * of garbage) left the process 30–50 MiB larger for good. dotstub's objects
 * are short-lived (a query lives for one round trip), so 1 MiB semi-spaces
 * cost a few more scavenges of a small heap, each well under a millisecond,
 * and keep the process near its idle size under load.
 */
export const PROXY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];
