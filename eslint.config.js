// Lint: typescript-eslint's recommended type-aware rules for all TypeScript.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * A no-restricted-imports rule for one layer of proxy/ (test files are exempt:
 * they may reach across). Each restriction is { group, message } or { regex, message }. Flat config
 * does not merge one rule's options across blocks: for a file that several
 * blocks match, the last one wins, so a narrower layer below repeats the
 * restrictions of the wider ones above it.
 */
function layer(files, ...restrictions) {
  return [
    {
      files: [files],
      ignores: ['**/*.test.ts'],
      rules: { 'no-restricted-imports': ['error', { patterns: restrictions }] },
    },
  ];
}

const CONTROL = { group: ['**/control/**'], message: 'only proxy/control/, the app (app.ts) and the command (cli.ts, cli/) may import control/' };
// A connection's lifecycle and its protocol halves are upstream/'s own: the
// rest of proxy/ reaches an upstream through upstream.ts, pools and fallbacks.
const CONNECTION = { group: ['**/upstream/connection/**'], message: 'only proxy/upstream/ may import upstream/connection/' };
// The pool's parts are its own: the rest of proxy/ uses upstream/pool.ts (the
// Pool) and reads pool/options.ts (settings and the CLI fill in PoolOptions).
const POOL = {
  group: ['**/upstream/pool/**', '!**/upstream/pool/options.js'],
  message: 'only proxy/upstream/ may import upstream/pool/ (outside it, use upstream/pool.js, or pool/options.js for PoolOptions)',
};

export default tseslint.config(
  { ignores: ['dist/**', 'renderer/dist/**', 'node_modules/**', 'test-results/**', 'playwright-report/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  // Imports flow one way along a query's path: listen → engine → upstream → dns
  // (config, network and errors are shared below them). Only the control API
  // and the CLI may import control/; nothing in the path imports a stage above it.
  ...layer('proxy/*.ts', CONNECTION, POOL),
  ...layer('proxy/!(control|cli)/**/*.ts', CONTROL, CONNECTION, POOL),
  ...layer('proxy/cli/**/*.ts', CONNECTION, POOL),
  ...layer('proxy/control/**/*.ts', CONNECTION, POOL),
  ...layer('proxy/dotstub.ts', CONTROL, CONNECTION, POOL),
  // The client core: the dashboard bundles it for the browser and the app for
  // Electron's main process, so it stands on the API's types and the error
  // vocabulary alone (no Node module, nothing of the proxy that runs).
  ...layer('proxy/control/api-client/**/*.ts', {
    regex: '^(?!\\./[^/]+\\.js$|\\.\\./api-types\\.js$|\\.\\./\\.\\./error-codes\\.js$)',
    message: 'api-client/ is shared with the dashboard and the app: import only ./, ../api-types.js (types) and ../../error-codes.js',
  }),
  ...layer('proxy/dns/**/*.ts', { group: ['**/listen/**', '**/engine/**', '**/upstream/**', '**/network/**', '**/config/**', '**/control/**', '**/dotstub.js'], message: 'dns/ is the wire format: it imports no other stage' }),
  ...layer('proxy/upstream/**/*.ts', { group: ['**/listen/**', '**/engine/**', '**/control/**', '**/dotstub.js'], message: 'upstream/ must not import the stages that call it' }),
  ...layer('proxy/engine/**/*.ts', { group: ['**/listen/**', '**/control/**', '**/dotstub.js'], message: 'engine/ must not import listen/ or control/' }, CONNECTION, POOL),
  // network/ holds what the network is (its watch, name owners, the network we're on, leaks, probes): facts, below what uses them.
  ...layer('proxy/network/**/*.ts', { group: ['**/listen/**', '**/engine/**', '**/upstream/**', '**/privacy/**', '**/control/**', '**/dotstub.js'], message: 'network/ holds facts: it imports neither the query path nor the decisions above it' }),
  // What the proxy decides about the network (privacy state, portals, degraded
  // mode) stands above the upstream it steers and the network facts it reads.
  ...layer('proxy/privacy/**/*.ts', { group: ['**/listen/**', '**/engine/**', '**/control/**', '**/dotstub.js'], message: 'privacy/ must not import the query path above it' }, CONNECTION, POOL),
  // One atomic write (files/config-file.ts: temp file, fsync, rename, fsync the
  // directory): nothing else in proxy/ renames a file (system-dns/file-state.ts
  // writes the system's files and puts their symlinks back through it).
  // system-dns/lock.ts moves a stale lock aside (a rename is how a lock is
  // broken atomically, not a write).
  {
    files: ['proxy/**/*.ts'],
    ignores: ['**/*.test.ts', 'proxy/files/config-file.ts', 'proxy/system-dns/lock.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name=/^rename(Sync)?$/]",
          message: 'write files with writeFileAtomic/writeFileAtomicSync and set bad ones aside with setAsideSync (files/config-file.ts): one atomic write',
        },
      ],
    },
  },
  {
    files: ['**/*.{js,mjs}'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' } },
  },
);
