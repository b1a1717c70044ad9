/**
 * The `dotstub` command's program: what bin/dotstub.js runs, through the
 * one-module bundle scripts/bundle-proxy.mjs makes of the compiled proxy
 * (dist/proxy/dotstub.bundle.js: less for V8 to keep than a module per
 * source file). Started without the shebang's flags (`node bin/dotstub.js`),
 * what of them can still take effect is applied first.
 */
import { main } from './cli.js';
import { applyLateFlags } from './runtime/late-flags.js';

applyLateFlags();

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`dotstub: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
