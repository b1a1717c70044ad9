import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['proxy/**/*.test.ts', 'app/**/*.test.ts', 'renderer/src/**/*.test.{ts,tsx}', 'bench/**/*.test.ts', 'test-support/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', 'e2e/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests run real servers and load; on 2 cores, one file at a time keeps them honest.
    fileParallelism: false,
    // No portal probe (http://192.0.2.1/, the check name at the system's resolver) may leave the machine from a
    // test: every dotstub a test starts inherits this. Tests of the probes point them at their own servers.
    env: { DOTSTUB_PORTAL_CHECK: 'off', DOTSTUB_NAME_ROUTING: 'off' },
    // The run's temporary files in one directory, removed at the end (test-support/vitest-global.ts).
    globalSetup: ['./test-support/vitest-global.ts'],
  },
});
