import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Builds the dashboard into renderer/dist, which the control server serves at
// `/` under a strict CSP (script-src 'self'): so no inline scripts, and all
// CSS goes to files. `DOTSTUB_CONTROL=http://127.0.0.1:PORT npx vite renderer`
// proxies /api to a running proxy for development.
const root = fileURLToPath(new URL('.', import.meta.url));
const control = process.env.DOTSTUB_CONTROL;

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    // The CSP forbids inline scripts; never inline the entry or its assets.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: control ? { proxy: { '/api': { target: control, changeOrigin: false } } } : {},
});
