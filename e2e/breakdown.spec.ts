/**
 * The overview's "What was looked up" over a chosen window, from the page's
 * log, and the charts' hover values.
 */
import { expect, test } from './support/fixtures.js';

test('top names, failed names and response codes over a window; charts show values on hover', async ({ lab, dashboard, page }) => {
  await expect(dashboard.liveIndicator).toHaveText('Live');
  lab.digMany(['n1.test', 'n1.test', 'n1.test', 'n2.test', 'missing.test']);
  const card = page.getByRole('region', { name: 'What was looked up' });
  const top = card.getByRole('list', { name: 'Top names' });
  await expect(top.getByRole('listitem').first()).toContainText(/n1\.test\s*3/);
  await expect(card.getByRole('list', { name: 'Response codes' })).toContainText(/NOERROR\s*4/);
  await expect(card.getByRole('list', { name: 'Response codes' })).toContainText(/NXDOMAIN\s*1/);
  await expect(card).toContainText('No failures');
  await expect(card.getByTestId('breakdown-summary')).toContainText('5 queries since');
  await card.getByRole('combobox', { name: 'Window' }).selectOption({ label: 'everything held' });
  await expect(card.getByTestId('breakdown-summary')).toContainText('5 queries since');

  // Hovering the queries-per-second chart shows the second and its value.
  const chart = page.getByRole('img', { name: 'Queries per second, last 5 minutes' });
  const over = chart.locator('.u-over');
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  if (!box) throw new Error('chart not laid out');
  await over.hover({ position: { x: box.width - 6, y: box.height / 2 } });
  await expect(chart.locator('.u-legend')).toContainText(/\d\d:\d\d:\d\d/);
});
