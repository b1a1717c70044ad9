/**
 * A retired preset saved in the config dir (issue 29: Mullvad closed its
 * public encrypted DNS on 2 Nov 2026), in the dashboard: the banner says what
 * happened and which resolver is the choice now (and whether it is connected), its "change" link opens the
 * resolver switcher, the event says the same, and a dismissed banner stays
 * away after a reload and a restart. Screenshot at 1280 px, light.
 *
 * The proxy runs in-process (as captive.spec.ts does) so it can start on
 * Quad9 without sending it anything: no warm connection, no network watch,
 * no query; "Test resolvers" is limited to this machine.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { startControl, tempConfigDir, type ControlHarness, type ControlHarnessOptions } from '../test-support/control-harness.js';

const DIR = path.join(import.meta.dirname, 'screenshots');

let h: ControlHarness | undefined;

test.afterEach(async () => {
  await h?.stop();
  h = undefined;
});

async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations.filter((v) => v.impact === 'critical' || v.impact === 'serious').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

test('Mullvad saved: the banner says it closed and that Quad9 is the choice now, not yet connected (nothing is sent there); "change" opens the switcher; dismissed, it stays away', async ({ page }) => {
  const configDir = tempConfigDir();
  fs.writeFileSync(path.join(configDir, 'resolvers.json'), JSON.stringify({ active: 'mullvad', custom: [] }));
  const options: ControlHarnessOptions = {
    configDir,
    resolverArg: '127.0.0.1:9#dns.test',
    warm: false,
    watchNetwork: false,
    measureScope: 'local',
    dashboardDir: path.join(import.meta.dirname, '..', 'renderer', 'dist'),
  };
  h = await startControl(options);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${h.url}/#token=${h.token}`);

  const notice = page.getByRole('region', { name: 'Resolver retired' });
  await expect(notice).toHaveText(/^Mullvad DNS closed on 2 Nov 2026; your choice is now Quad9; not connected to it yet — change\s*Dismiss$/);
  await page.screenshot({ path: path.join(DIR, 'retired-preset-1280-light.png'), fullPage: false });
  expect(await violations(page)).toEqual([]);

  await notice.getByRole('link', { name: 'change' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Resolvers');
  const inUse = page.getByRole('list', { name: 'Resolvers', exact: true }).getByRole('listitem').filter({ has: page.getByText('in use', { exact: true }) });
  await expect(inUse).toContainText('Quad9');
  await expect(page.getByRole('list', { name: 'Resolvers', exact: true })).not.toContainText('Mullvad');

  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Events', exact: true }).click();
  await expect(page.getByRole('list', { name: 'Events, newest first' })).toContainText('Mullvad DNS closed on 2 Nov 2026; dotstub moved your choice to Quad9');

  await notice.getByRole('button', { name: 'Dismiss' }).click();
  await expect(notice).toHaveCount(0);
  await page.reload();
  await expect(page.getByRole('banner').getByRole('status')).toHaveText('Live');
  await expect(notice).toHaveCount(0);

  await h.stop();
  h = await startControl(options);
  await page.goto(`${h.url}/#token=${h.token}`);
  await expect(page.getByRole('banner').getByRole('status')).toHaveText('Live');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Overview');
  await expect(notice).toHaveCount(0);
  expect(errors).toEqual([]);
});
