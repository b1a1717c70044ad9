import { defineConfig } from '@playwright/test';

// No dotstub an e2e test starts may probe for captive portals beyond this machine (they inherit this).
process.env.DOTSTUB_PORTAL_CHECK = 'off';
process.env.DOTSTUB_NAME_ROUTING = 'off';

// Debian's Chromium, never a downloaded browser (no internet here).
export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  // Rebuilds the proxy and the dashboard when their sources are newer than the build.
  globalSetup: './e2e/support/global-setup.ts',
  timeout: 60_000,
  workers: 1,
  reporter: 'list',
  outputDir: 'test-results',
  use: {
    headless: true,
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
