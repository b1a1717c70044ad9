/**
 * The live log while reading it (issue 14): a selected row stays where it
 * is while new queries arrive above it, with an "N new" cue that goes back
 * to the newest; and "Clear log" empties the log here and in dotstub (a
 * reload shows it empty), after asking.
 */
import path from 'node:path';
import { expect, test } from './support/fixtures.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

test('a selected row stays in place as queries arrive; “N new” takes you back to the newest', async ({ lab, dashboard, page }) => {
  // More rows than the grid shows, as in any log read for a while (a row near the bottom of a
  // shorter log can't stay put: the grid can't scroll past its end).
  lab.digMany(Array.from({ length: 20 }, (_, i) => `n${i}.test`));
  lab.dig('which.test');
  lab.digMany(Array.from({ length: 5 }, (_, i) => `n${40 + i}.test`));
  await dashboard.goTo('Queries');
  // Every row in place before clicking: a row arriving during the click moves the one clicked.
  await expect(dashboard.row('n44.test')).toHaveCount(1);
  await dashboard.openQuery('which.test');
  await expect(dashboard.queryDetail).toContainText('which.test');
  const row = dashboard.row('which.test').first();
  const before = await row.boundingBox();

  lab.digMany(Array.from({ length: 20 }, (_, i) => `n${20 + i}.test`));
  const cue = page.getByTestId('new-cue');
  await expect(cue).toHaveText('↑ 20 new — show newest');
  const after = await row.boundingBox();
  expect(Math.abs((after?.y ?? 0) - (before?.y ?? 0)), 'the selected row did not move').toBeLessThanOrEqual(1);
  await expect(dashboard.queryDetail).toContainText('which.test');
  await page.screenshot({ path: path.join(SHOTS, 'queries-new-cue-1440-light.png') });

  await cue.click();
  await expect(cue).toHaveCount(0);
  await expect(dashboard.logRows.first()).toContainText('n39.test');
  await expect(dashboard.queryDetail).toHaveCount(0);
  await expect(dashboard.logRows.first()).toBeInViewport();
});

test('Clear log asks, then empties the log here and in dotstub', async ({ lab, dashboard, page }) => {
  lab.digMany(['n1.test', 'n2.test', 'n3.test']);
  await dashboard.goTo('Queries');
  await expect(dashboard.logCount).toHaveText('3 queries held');
  await page.getByRole('button', { name: 'Clear log' }).click();
  const confirm = page.getByRole('group', { name: 'Clear the log?' });
  await expect(confirm).toContainText('Clear all 3 held, here and in dotstub?');
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await expect(dashboard.logCount).toHaveText('3 queries held');

  await page.getByRole('button', { name: 'Clear log' }).click();
  await page.getByRole('group', { name: 'Clear the log?' }).getByRole('button', { name: 'Clear' }).click();
  await expect(page.getByText('Cleared 3 queries.')).toBeVisible();
  await expect(dashboard.logCount).toHaveText('0 queries held');
  // Gone from dotstub too: a fresh page fills its log from the proxy and finds nothing.
  await page.reload();
  await expect(dashboard.liveIndicator).toHaveText('Live');
  await expect(dashboard.logCount).toHaveText('0 queries held');
  // New queries appear as before.
  lab.dig('which.test');
  await expect(dashboard.row('which.test')).toHaveCount(1);
  await expect(dashboard.logCount).toHaveText('1 query held');
});
