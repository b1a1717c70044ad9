/// <reference lib="dom" />
/**
 * Screenshots of every main view, light and dark, against real traffic:
 * e2e/screenshots/<view>-<scheme>.png. They are for people to look at; the
 * test only checks each view rendered.
 */
import path from 'node:path';
import type { Page } from '@playwright/test';
import type { Section } from './support/dashboard.js';
import { expect, test } from './support/fixtures.js';
import { painted } from './support/painted.js';

const DIR = path.join(import.meta.dirname, 'screenshots');
const VIEWS: readonly Section[] = ['Overview', 'Queries', 'Resolvers', 'Connections', 'Network', 'Events', 'Settings'];
const SIZES = [
  { tag: '1440', width: 1440, height: 900 },
  { tag: '1280', width: 1280, height: 720 },
  { tag: '420', width: 420, height: 900 },
] as const;

async function shoot(page: Page, name: string): Promise<void> {
  // Let charts and the histogram catch up with the last batch: the histogram re-bins once a second and the
  // metrics arrive once a second, so this is real time, not a frame (the pictures are for people; nothing is asserted).
  await page.waitForTimeout(800);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(DIR, `${name}.png`), fullPage: true });
}

test.use({ viewport: { width: 1440, height: 900 } });

test('screenshots of each main view at 1440, 1280 and 420 px, light and dark', async ({ lab, dashboard, page }) => {
  test.setTimeout(240_000);
  const second = await lab.secondUpstream('10.0.0.2');
  await dashboard.goTo('Resolvers');
  await dashboard.addResolver({ label: 'Lab resolver B', address: '127.0.0.1', port: second.port, authName: 'dns.test' });
  await expect(dashboard.resolverList.getByRole('listitem')).toContainText(['Lab resolver B']);

  // Traffic over several seconds so the per-second charts have a shape: bounded, 8 rounds.
  const names = Array.from({ length: 50 }, (_, i) => `n${i}.test`);
  for (let round = 0; round < 8; round++) {
    lab.digMany(names.slice(0, 10 + round * 5), round % 3 === 0 ? 'AAAA' : 'A');
    lab.digMany(['missing.test', 'which.test', 'big.test'], round % 2 ? 'TXT' : 'A');
    await page.waitForTimeout(400);
  }
  // A switch and back, so the timeline and connections show real history.
  // (A switch is "Now using" once the new resolver's connection opens: a query after it makes sure.)
  await dashboard.switchResolver('Lab resolver B');
  await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'Lab resolver B' })).toHaveAttribute('aria-current', 'true');
  lab.digMany(names.slice(0, 20));
  await expect(dashboard.page.getByText(/Now using Lab resolver B/)).toBeVisible();
  await dashboard.switchResolver('dns.test (127.0.0.1)');
  await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'dns.test (127.0.0.1)' })).toHaveAttribute('aria-current', 'true');
  lab.digMany(names.slice(20, 50));
  await expect(dashboard.page.getByText(/Now using dns\.test/)).toBeVisible();
  await expect(dashboard.liveIndicator).toHaveText('Live');

  lab.dig('which.test');
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const view of VIEWS) {
        await dashboard.goTo(view);
        if (view === 'Queries') await dashboard.openQuery('which.test');
        await shoot(page, `${view.toLowerCase()}-${size.tag}-${scheme}`);
        // Narrow, the detail is a full-height sheet over the page: back to the log before leaving.
        if (view === 'Queries' && size.width <= 560) await page.getByRole('button', { name: 'Back to the log' }).click();
      }
    }
  }
});

test('screenshots of the overview live and of the banner when dotstub is unreachable or not signed in, wide and narrow, light and dark', async ({ lab, dashboard, page }) => {
  test.setTimeout(120_000);
  const names = Array.from({ length: 50 }, (_, i) => `n${i}.test`);
  for (let round = 0; round < 6; round++) {
    lab.digMany(names.slice(0, 10 + round * 6));
    await page.waitForTimeout(400);
  }
  await expect(dashboard.tile('Latency p50 / p95')).not.toContainText('no answers');
  const sizes = [
    { tag: '1440', width: 1440, height: 900 },
    { tag: '420', width: 420, height: 900 },
  ] as const;
  for (const size of sizes) {
    await page.setViewportSize({ width: size.width, height: size.height });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await shoot(page, `overview-live-${size.tag}-${scheme}`);
    }
  }

  await lab.proxy.stop();
  await expect(dashboard.banner).toHaveAttribute('data-state', 'lost', { timeout: 3000 });
  for (const size of sizes) {
    await page.setViewportSize({ width: size.width, height: size.height });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await painted(page);
      await page.screenshot({ path: path.join(DIR, `banner-unreachable-${size.tag}-${scheme}.png`) });
    }
  }

  // Not signed in: the dashboard's address without the link.
  await lab.proxy.start(lab.upstream);
  await page.goto(`${lab.proxy.ready.control}/`);
  await expect(dashboard.banner).toContainText('Not signed in');
  for (const size of sizes) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.emulateMedia({ colorScheme: 'light' });
    await painted(page);
    await page.screenshot({ path: path.join(DIR, `banner-signed-out-${size.tag}-light.png`) });
  }
});
