/**
 * Home in the live log (issue 24, item 8): the newest row, in full view
 * below the sticky header (not under it), and the log follows live again:
 * queries that arrive next appear at the top, no "N new" cue.
 */
import { expect, test } from './support/fixtures.js';

test('Home shows the newest row below the header and follows live', async ({ lab, dashboard, page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  lab.digMany(Array.from({ length: 50 }, (_, i) => `n${i}.test`));
  await dashboard.goTo('Queries');
  await expect(dashboard.logCount).toHaveText('50 queries held');
  await dashboard.queryLog.focus();
  const header = dashboard.queryLog.getByRole('row').first();
  const active = dashboard.queryLog.locator('.log-row.active');

  for (let probe = 0; probe < 4; probe++) {
    // Somewhere down the log, then Home.
    await page.keyboard.press('End');
    for (let i = 0; i < probe * 3; i++) await page.keyboard.press('PageUp');
    await page.keyboard.press('Home');
    await expect(active).toContainText('n49.test');
    const head = await header.boundingBox();
    const row = await active.boundingBox();
    expect(row, 'the active row is rendered').not.toBeNull();
    expect(row!.y, `probe ${probe}: the newest row starts below the sticky header`).toBeGreaterThanOrEqual(head!.y + head!.height - 1);
  }

  // Following live: with the keyboard still in the grid, new queries land at the top.
  lab.digMany(['n60.test', 'n61.test']);
  await expect(dashboard.logCount).toHaveText('52 queries held');
  await expect(page.getByTestId('new-cue')).toHaveCount(0);
  await expect(dashboard.logRows.first()).toContainText('n61.test');
  await expect(dashboard.logRows.first()).toBeInViewport();
  const first = await dashboard.logRows.first().boundingBox();
  const head = await header.boundingBox();
  expect(first!.y).toBeGreaterThanOrEqual(head!.y + head!.height - 1);
});
