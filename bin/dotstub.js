#!/usr/bin/env -S node --max-semi-space-size=1 --heap-growing-percent=10 --v8-pool-size=1 --no-concurrent-recompilation --expose-gc
// Entry point for the `dotstub` command: runs the compiled proxy (proxy/entry.ts), as one
// module (scripts/bundle-proxy.mjs; `npm run build` makes it).
// The shebang's flags are proxy/runtime/node-flags.ts's PROXY_NODE_FLAGS (a test keeps them equal).
import '../dist/proxy/dotstub.bundle.js';
