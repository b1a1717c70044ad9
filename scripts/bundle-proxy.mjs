// The proxy as it runs: dist/proxy (tsc's output, one module per source
// file) bundled into one module without comments or whitespace,
// dist/proxy/dotstub.bundle.js, which bin/dotstub.js loads (so the CLI, the
// service, the package and the desktop app's supervisor all run it). Issue
// 32, item 4 ("memory you choose"): V8 keeps each module's source text and
// a record per module; bundled, the proxy starts idle at 74 MiB instead of
// 83 on the packaged Node 24, and 55 instead of 57 on Node 20
// (bench/results/memory-issue32.md).
//
// The bundle sits in dist/proxy beside cli.js, so what it finds relative to
// itself (../../package.json, the dashboard's files, node_modules through
// createRequire) is where cli.js finds it. Packages loaded through
// createRequire (dns-packet, zod, the sockopt addon) stay in node_modules,
// with their licences; Node's own modules stay Node's.
//
//   node scripts/bundle-proxy.mjs     (npm run build does it after tsc)
import path from 'node:path';
import { build } from 'esbuild';

const ROOT = path.resolve(import.meta.dirname, '..');
export const BUNDLE = path.join(ROOT, 'dist', 'proxy', 'dotstub.bundle.js');

const result = await build({
  entryPoints: [path.join(ROOT, 'dist', 'proxy', 'entry.js')],
  outfile: BUNDLE,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Whitespace and syntax only: identifiers stay, so error classes keep their names (DotstubError sets
  // name from new.target) and a stack trace reads. Minifying names too saved no memory measurable here.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
  absWorkingDir: ROOT,
});
const inputs = Object.keys(result.metafile.inputs);
const outside = inputs.filter((f) => !f.startsWith('dist/proxy/'));
if (outside.length > 0) {
  // Only the proxy's own code goes in: a package would lose its licence file and its own updates.
  throw new Error(`the proxy bundle would take in code from outside dist/proxy: ${outside.join(', ')}`);
}
