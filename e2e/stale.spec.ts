/**
 * "Not connected" (issue 24, item 9): once the proxy stops answering, the
 * figures below the banner are from before, and say so with a "last known
 * HH:MM" stamp, in text that stays readable: axe finds no serious or
 * critical violation in that state, light and dark.
 */
import { AxeBuilder } from '@axe-core/playwright';
import path from 'node:path';
import type { Page } from '@playwright/test';
import type { Section } from './support/dashboard.js';
import { expect, test } from './support/fixtures.js';
import { painted } from './support/painted.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

async function serious(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.length} nodes) — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

test('stale figures carry a "last known" stamp and stay readable (axe: no serious violation)', async ({ lab, dashboard, page }) => {
  test.setTimeout(90_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  lab.digMany(Array.from({ length: 20 }, (_, i) => `n${i}.test`));
  await dashboard.goTo('Queries');
  await expect(dashboard.logCount).toHaveText('20 queries held');
  await dashboard.goTo('Overview');
  await lab.proxy.stop();
  await expect(dashboard.liveIndicator).toHaveText('Not connected', { timeout: 10_000 });

  const stamp = page.getByTestId('stale-stamp');
  await expect(stamp).toHaveText(/^Last known \d\d:\d\d(:\d\d)? — figures below are from before the connection was lost\.?$/);

  const found: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const view of ['Overview', 'Queries', 'Connections', 'Events'] as readonly Section[]) {
      await dashboard.nav.getByRole('link', { name: view }).click();
      await painted(page);
      found.push(...(await serious(page)).map((v) => `${scheme} ${view}: ${v}`));
    }
    await dashboard.nav.getByRole('link', { name: 'Overview' }).click();
    for (const width of [1280, 420]) {
      await page.setViewportSize({ width, height: width === 420 ? 800 : 900 });
      await painted(page);
      await page.screenshot({ path: path.join(SHOTS, `not-connected-${width}-${scheme}.png`) });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }
  expect(found).toEqual([]);
});

/**
 * "Not connected" after dotstub went away (issue 29, newcomer item 8): the
 * page says what the last system-DNS view said, not "may not be private"
 * (after a stop the old DNS is already back), and names the service's way
 * back: systemctl, and `dotstub ctl dashboard` for a fresh link.
 */
test('"Not connected" after dotstub died while private DNS was on: says it was on, what dotstub and its watchdog do, and the service\'s way back', async ({ lab, dashboard, page }) => {
  test.setTimeout(60_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await lab.restartWithSystemDns();
  await dashboard.open(lab.proxy.dashboardUrl);
  await dashboard.turnOnFromBanner();
  // A crash: nothing is said before the connection goes.
  await lab.proxy.kill();
  await expect(dashboard.liveIndicator).toHaveText('Not connected', { timeout: 10_000 });
  const detail = dashboard.banner.getByTestId('banner-detail');
  await expect(detail).toContainText(/Private DNS was on at \d\d:\d\d when the connection was lost\./);
  await expect(detail).toContainText('gives the old DNS back');
  await expect(detail).not.toContainText('may not be private');
  const action = dashboard.banner.getByTestId('banner-action');
  await expect(action).toContainText('systemctl status dotstub');
  await expect(action).toContainText('sudo systemctl restart dotstub');
  await expect(action).toContainText('dotstub ctl dashboard');
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 420]) {
      await page.setViewportSize({ width, height: width === 420 ? 800 : 900 });
      await painted(page);
      await page.screenshot({ path: path.join(SHOTS, `not-connected-was-on-${width}-${scheme}.png`) });
    }
  }
});

test('"Not connected" after dotstub stopped while private DNS was on: it gave the old DNS back before it went, and the page says when', async ({ lab, dashboard, page }) => {
  test.setTimeout(60_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await lab.restartWithSystemDns();
  await dashboard.open(lab.proxy.dashboardUrl);
  await dashboard.turnOnFromBanner();
  // A clean stop (quit, systemctl stop): the DNS comes back while the page still listens.
  await lab.proxy.stop();
  await expect(dashboard.liveIndicator).toHaveText('Not connected', { timeout: 10_000 });
  const detail = dashboard.banner.getByTestId('banner-detail');
  await expect(detail).toContainText(/Private DNS was off: the old DNS was given back at \d\d:\d\d\./);
  await expect(detail).not.toContainText('when the connection was lost');
  // The event line says why: the stop, not "not enabled".
  await expect(page.getByText('dotstub stopped and gave the old DNS back').first()).toBeVisible();
  await page.screenshot({ path: path.join(SHOTS, 'not-connected-stopped-1280-light.png') });
});

test('"Not connected" after private DNS was turned off: says when the old DNS was given back', async ({ lab, dashboard, page }) => {
  test.setTimeout(60_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await lab.restartWithSystemDns();
  await dashboard.open(lab.proxy.dashboardUrl);
  await dashboard.turnOnFromBanner();
  await dashboard.turnOffFromHeader('Until I resume');
  await lab.proxy.stop();
  await expect(dashboard.liveIndicator).toHaveText('Not connected', { timeout: 10_000 });
  const detail = dashboard.banner.getByTestId('banner-detail');
  await expect(detail).toContainText(/Private DNS was off: the old DNS was given back at \d\d:\d\d\./);
  await expect(detail).not.toContainText('may not be private');
  await page.screenshot({ path: path.join(SHOTS, 'not-connected-was-off-1280-light.png') });
});
