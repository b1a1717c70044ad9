#!/usr/bin/env -S node --max-semi-space-size=1 --heap-growing-percent=10 --v8-pool-size=1 --expose-gc
// Entry point for the `dotstub` command: runs the compiled proxy CLI.
// The shebang's flags are proxy/runtime/node-flags.ts's PROXY_NODE_FLAGS (a test keeps them equal).
import { main } from '../dist/proxy/cli.js';
import { applyLateFlags } from '../dist/proxy/runtime/late-flags.js';

// Started without the shebang's flags (`node bin/dotstub.js`): what of them can still take effect.
applyLateFlags();

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    console.error(`dotstub: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
