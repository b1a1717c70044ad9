/// <reference lib="dom" />
/**
 * The narrow layout (the tray popover, 420 px) and a 1280 x 720 laptop, as
 * a user sees them: every section reachable from the nav, the log's
 * Response and Latency on screen, no page wider than the window, the
 * banner leaving room for the page, key numbers not cut off.
 */
import type { Page } from '@playwright/test';
import { expect, test } from './support/fixtures.js';

const SECTIONS = ['Overview', 'Queries', 'Resolvers', 'Connections', 'Network', 'Events', 'System DNS', 'Settings'] as const;

/** How far the page reaches past the window's right edge, in px. */
function overflowX(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

test('at 420 px every section is in view, the log shows Response and Latency, and nothing overflows', async ({ lab, dashboard, page }) => {
  await page.setViewportSize({ width: 420, height: 800 });
  lab.digMany(['n1.test', 'n2.test', 'missing.test']);

  for (const name of SECTIONS) await expect(dashboard.nav.getByRole('link', { name })).toBeInViewport({ ratio: 1 });
  // The banner leaves most of the first screen to the page.
  const banner = await dashboard.banner.boundingBox();
  expect(banner?.height ?? 0).toBeLessThan(220);

  for (const name of SECTIONS) {
    await dashboard.goTo(name);
    expect(await overflowX(page), `${name} is no wider than the window`).toBeLessThanOrEqual(0);
  }

  await dashboard.goTo('Queries');
  const row = dashboard.row('missing.test');
  await expect(row.getByText('NXDOMAIN')).toBeInViewport({ ratio: 1 });
  await expect(row.getByText(/^\d+(\.\d+)? (ms|s)$/)).toBeInViewport({ ratio: 1 });
});

test('at 1280 x 720 the overview’s key numbers are not cut off', async ({ lab, dashboard, page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  lab.digMany(Array.from({ length: 40 }, (_, i) => `n${i}.test`));
  await expect(dashboard.tile('Latency p50 / p95')).not.toContainText('no answers');
  const cut = await page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>('.tile-value')).filter((el) => el.scrollWidth > el.clientWidth).map((el) => el.textContent),
  );
  expect(cut).toEqual([]);
});
