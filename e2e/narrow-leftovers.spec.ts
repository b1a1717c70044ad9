/**
 * The rest of issue 24's item 7 (narrow windows): the Connections table,
 * which scrolls sideways at 420 px, says so ("More columns: scroll
 * sideways →") until it is scrolled to its end; below 560 px the query
 * log's filters wait behind a "Filters" button, so at 320 px the first log
 * rows are on the first screen. Failed before: no cue; the filters took the
 * first screen at 320 px.
 */
import { expect, test } from './support/fixtures.js';

test('the Connections table says it scrolls sideways; the log filters fold behind a button below 560 px', async ({ lab, dashboard, page }) => {
  test.setTimeout(90_000);
  lab.digMany(Array.from({ length: 20 }, (_, i) => `n${i}.test`));
  await page.setViewportSize({ width: 420, height: 800 });
  await dashboard.goTo('Connections');
  const table = page.getByRole('region', { name: 'Open connections, scrollable' });
  await expect(table.getByRole('row')).not.toHaveCount(1);
  const cue = page.getByTestId('scroll-cue');
  await expect(cue).toBeVisible();
  await expect(cue).toHaveText('More columns: scroll sideways →');
  await table.scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/narrow-connections-cue-420-light.png' });
  // Scrolled to its end, the cue goes.
  await table.evaluate((el) => el.scrollTo({ left: el.scrollWidth }));
  await expect(cue).toBeHidden();
  // Wide enough for every column: no cue.
  await page.setViewportSize({ width: 1600, height: 900 });
  await expect(cue).toBeHidden();

  // The log at 320 px: the filters behind one button, the rows on the first screen.
  await page.setViewportSize({ width: 320, height: 640 });
  await dashboard.goTo('Queries');
  await expect(dashboard.logRows.first()).toBeVisible();
  const toggle = page.getByRole('button', { name: /^Filters/ });
  await expect(toggle).toHaveAttribute('aria-expanded', 'false');
  await expect(page.getByRole('combobox', { name: 'Filter by type' })).toBeHidden();
  await expect(page.getByRole('searchbox', { name: 'Filter by name' })).toBeVisible();
  await page.screenshot({ path: 'e2e/screenshots/narrow-log-320-light.png' });
  await expect(dashboard.logRows.first()).toBeInViewport();
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
  await page.getByRole('combobox', { name: 'Filter by type' }).selectOption('A');
  await toggle.click();
  // A filter in force is counted on the button while folded.
  await expect(toggle).toHaveText(/Filters \(1\)/);
  // Wide: no button, the filters in the toolbar.
  await page.setViewportSize({ width: 1280, height: 900 });
  await expect(toggle).toBeHidden();
  await expect(page.getByRole('combobox', { name: 'Filter by type' })).toBeVisible();
});
