import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['proxy/**/*.test.ts', 'app/**/*.test.ts', 'renderer/src/**/*.test.{ts,tsx}', 'bench/**/*.test.ts', 'test-support/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', 'e2e/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests run real servers and load; on 2 cores, one file at a time keeps them honest.
    fileParallelism: false,
  },
});
