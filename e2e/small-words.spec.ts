/**
 * The smaller things a newcomer tripped on (issue 29, "What a newcomer saw"
 * item 13), against a real proxy: "Export settings" is where its words
 * point (Settings); the Overview's resolver tile doesn't repeat the
 * resolver's name under it; counts of one are singular; the page says a
 * date one way; after a save that fails, focus is on what went wrong.
 */
import path from 'node:path';
import { expect, test } from './support/fixtures.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');
/** The page's one date format: "28 Nov 20:29:24.106". */
const DATE_TIME = /^\d{1,2} [A-Z][a-z]{2} \d\d:\d\d:\d\d\.\d{3}$/;

test('Export and import of settings are in Settings, as their words say', async ({ dashboard, page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await dashboard.goTo('Settings');
  const transfer = page.getByRole('region', { name: 'Move your settings' });
  await expect(transfer.getByRole('button', { name: 'Export settings' })).toBeVisible();
  await expect(transfer.getByRole('button', { name: 'Import settings…' })).toBeVisible();
  const download = page.waitForEvent('download');
  await transfer.getByRole('button', { name: 'Export settings' }).click();
  expect((await download).suggestedFilename()).toMatch(/^dotstub-settings-.*\.json$/);
  await expect(transfer.getByRole('status')).toContainText('Exported your settings');
  await transfer.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(SHOTS, 'settings-move-1280-light.png') });
});

test('the resolver tile names the resolver once; one answer is "1 answer"; one date format; focus on a failed save’s message', async ({ lab, dashboard, page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  expect(lab.dig('n1.test').status).toBe('NOERROR');
  const resolverTile = dashboard.tile('Resolver');
  await expect(resolverTile).toContainText('dns.test (127.0.0.1)');
  // Its certificate name is the resolver's, not a second resolver: not repeated under a label that holds it.
  await expect(resolverTile.locator('.tile-sub')).not.toContainText('dns.test');
  await expect(resolverTile.getByRole('link', { name: /change/ })).toBeVisible();
  // One cached answer, one answer in the chart's 5 minutes.
  await expect(dashboard.tile('Answer cache').locator('.tile-sub')).toContainText(/^1 answer · /);
  await expect(page.getByText(/last 5 min · 1 answer · /)).toBeVisible();
  await page.screenshot({ path: path.join(SHOTS, 'overview-one-answer-1280-light.png') });

  // The query's start and an event's time: one format.
  await dashboard.goTo('Queries');
  await dashboard.openQuery('n1.test');
  const started = dashboard.queryDetail.locator('dt', { hasText: /^Started$/ }).locator('xpath=following-sibling::dd[1]');
  await expect(started).toHaveText(DATE_TIME);
  await dashboard.goTo('Events');
  await expect(dashboard.events.locator('time').first()).toHaveText(DATE_TIME);

  // A save that fails: focus moves to the message saying so (not left on Save).
  await dashboard.goTo('Settings');
  await dashboard.fillSetting('Query log size', '4');
  await dashboard.saveSettings();
  const alert = page.getByRole('alert').filter({ hasText: 'Nothing was saved.' });
  await expect(alert).toBeFocused();
});
