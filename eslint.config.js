// Lint: typescript-eslint's recommended type-aware rules for all TypeScript.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** A no-restricted-imports rule for one layer of proxy/ (test files are exempt: they may reach across). */
function layer(files, group, message) {
  return [
    {
      files: [files],
      ignores: ['**/*.test.ts'],
      rules: { 'no-restricted-imports': ['error', { patterns: [{ group, message }] }] },
    },
  ];
}

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
  ...layer('proxy/!(control)/**/*.ts', ['**/control/**'], 'only proxy/control/ and proxy/cli.ts may import control/'),
  ...layer('proxy/dotstub.ts', ['**/control/**'], 'only proxy/control/ and proxy/cli.ts may import control/'),
  ...layer('proxy/dns/**/*.ts', ['**/listen/**', '**/engine/**', '**/upstream/**', '**/network/**', '**/config/**', '**/control/**', '**/dotstub.js'], 'dns/ is the wire format: it imports no other stage'),
  ...layer('proxy/upstream/**/*.ts', ['**/listen/**', '**/engine/**', '**/control/**', '**/dotstub.js'], 'upstream/ must not import the stages that call it'),
  ...layer('proxy/engine/**/*.ts', ['**/listen/**', '**/control/**', '**/dotstub.js'], 'engine/ must not import listen/ or control/'),
  ...layer('proxy/network/**/*.ts', ['**/listen/**', '**/engine/**', '**/control/**', '**/dotstub.js'], 'network/ must not import the query path above it'),
  {
    files: ['**/*.{js,mjs}'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' } },
  },
);
