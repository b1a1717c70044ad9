#!/usr/bin/env node
// Entry point for the `dotstub` command: runs the compiled proxy CLI.
import { main } from '../dist/proxy/cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    console.error(`dotstub: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
