/**
 * "Switch back" comes from the server (issue 29, newcomer item 4): it was
 * offered only in the tab that made the switch, so a second window, a
 * reload, or a switch made with `dotstub ctl use` got only "Retry now". The
 * resolvers view carries the one in use before the last switch, and every
 * page offers the way back while the active one fails.
 */
import path from 'node:path';
import { Dashboard } from './support/dashboard.js';
import { expect, test } from './support/fixtures.js';
import { painted } from './support/painted.js';
import { closedPort } from './support/lab.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

test('a switch made through the API (as `dotstub ctl use` makes it) is offered "Switch back" in a fresh page, and in one already open; it works', async ({ lab, dashboard, page }) => {
  test.setTimeout(60_000);
  const port = await closedPort();
  const dead = await lab.proxy.api<{ id: string }>('POST', '/api/resolvers', { label: 'Dead end', address: '127.0.0.1', port, authName: 'dns.test' });
  await lab.proxy.api('PUT', '/api/resolvers/active', { id: dead.id });
  expect(lab.dig('n1.test').status).toBe('SERVFAIL');

  // A second window that never saw the switch.
  const second = await page.context().newPage();
  const fresh = new Dashboard(second);
  await second.setViewportSize({ width: 1280, height: 900 });
  await fresh.open(lab.proxy.dashboardUrl);
  await expect(fresh.banner).toHaveAttribute('data-state', 'blocked', { timeout: 15_000 });
  const back = fresh.banner.getByRole('button', { name: 'Switch back to dns.test (127.0.0.1)' });
  await expect(back).toBeVisible();
  // The page that was open all along didn't make the switch either.
  await expect(dashboard.banner.getByRole('button', { name: 'Switch back to dns.test (127.0.0.1)' })).toBeVisible();
  for (const width of [1280, 420]) {
    await second.setViewportSize({ width, height: width === 420 ? 800 : 900 });
    await painted(second);
    await second.screenshot({ path: path.join(SHOTS, `switch-back-fresh-page-${width}-light.png`) });
  }

  await back.click();
  await expect.poll(() => lab.dig('which.test').answers, { timeout: 15_000 }).toEqual(['10.0.0.1']);
  await expect(fresh.banner).toHaveAttribute('data-state', 'private', { timeout: 15_000 });
  await expect(fresh.banner.getByRole('button', { name: /^Switch back/ })).toHaveCount(0);
  await second.close();
});
