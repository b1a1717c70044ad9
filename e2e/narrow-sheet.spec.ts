/**
 * Narrow leftovers (issue 24, item 7) at the tray popover's 420 px: a
 * query's detail opens as a full-height sheet with Back (it used to open
 * below the log, off-screen), and every Events filter segment can be reached
 * by pointer (two were clipped).
 */
import { expect, test } from './support/fixtures.js';

test('at 420 px a query opens as a full-height sheet with Back, and every Events filter is on screen', async ({ lab, dashboard, page }) => {
  await page.setViewportSize({ width: 420, height: 800 });
  lab.digMany(Array.from({ length: 30 }, (_, i) => `n${i}.test`));
  lab.dig('which.test');
  await dashboard.goTo('Queries');
  await expect(dashboard.row('which.test')).toHaveCount(1);
  await dashboard.openQuery('which.test');
  await expect(dashboard.queryDetail).toBeInViewport({ ratio: 0.9 });
  const back = dashboard.queryDetail.getByRole('button', { name: 'Back to the log' });
  await expect(back).toBeInViewport({ ratio: 1 });
  await expect(back).toBeFocused();
  await page.screenshot({ path: 'e2e/screenshots/narrow-detail-sheet-420-light.png' });
  await back.click();
  await expect(dashboard.queryDetail).toHaveCount(0);
  await expect(dashboard.queryLog).toBeFocused();

  await dashboard.goTo('Events');
  const segments = page.getByRole('group', { name: 'Event kind' }).getByRole('button');
  const n = await segments.count();
  expect(n).toBeGreaterThan(2);
  for (let i = 0; i < n; i++) await expect(segments.nth(i)).toBeInViewport({ ratio: 1 });
});
