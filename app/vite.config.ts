/**
 * Builds the Electron side into dist/app (electron-vite's layout, plain Vite):
 *   --mode main     app/main.ts    → dist/app/main.js     (ESM; Electron ≥28 loads an ESM main)
 *   --mode preload  app/preload.ts → dist/app/preload.cjs (CommonJS, one file: sandboxed
 *                   preloads can require only electron's own modules, not ours)
 * Types are checked by `tsc -p tsconfig.json` (the root config includes app/).
 */
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig(({ mode }) => {
  if (mode !== 'main' && mode !== 'preload') throw new Error(`app/vite.config.ts: use --mode main or --mode preload, not ${mode}`);
  const preload = mode === 'preload';
  return {
    root,
    publicDir: false,
    build: {
      outDir: 'dist/app',
      emptyOutDir: false,
      sourcemap: true,
      minify: false,
      target: 'node20',
      reportCompressedSize: false,
      lib: {
        entry: preload ? 'app/preload.ts' : 'app/main.ts',
        formats: [preload ? 'cjs' : 'es'],
        fileName: () => (preload ? 'preload.cjs' : 'main.js'),
      },
      rollupOptions: {
        external: ['electron', ...builtinModules, ...builtinModules.map((m) => `node:${m}`)],
      },
    },
  };
});
