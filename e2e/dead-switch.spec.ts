/**
 * Switching to a dead resolver (issue 24 item 3): the page probes before it
 * commits (connect, handshake, one query, about a second), says why on the
 * clicked card with "Switch anyway" and "Keep …"; switched anyway, the card
 * turns red, the banner names the resolver with its port and offers
 * "Switch back to …". Failed before: the switch was committed at once, the
 * card stayed green "in use", the banner said "(127.0.0.1)" and offered only
 * "Retry now".
 */
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Locator, Page } from '@playwright/test';
import { expect, test } from './support/fixtures.js';
import { painted } from './support/painted.js';
import { closedPort } from './support/lab.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

/** Serious or critical accessibility violations on the page as it is, light and dark. */
async function axe(page: Page, where: string): Promise<string[]> {
  const found: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const r = await new AxeBuilder({ page }).analyze();
    found.push(...r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${where} (${scheme}): ${v.id} — ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | ')}`));
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return found;
}

/** Light and dark, 1280 and 420 px, with `focus` scrolled into view (the banner stays at the top when it fits). */
async function shots(page: Page, name: string, focus: Locator): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 420]) {
      await page.setViewportSize({ width, height: width === 420 ? 800 : 900 });
      await page.evaluate(() => window.scrollTo(0, 0));
      await focus.scrollIntoViewIfNeeded();
      await painted(page);
      await page.screenshot({ path: path.join(SHOTS, `${name}-${width}-${scheme}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
}

test('a switch to a dead resolver is probed first: "didn\'t answer", Switch anyway / Keep; then a red card and "Switch back" in the banner', async ({ lab, dashboard, page }) => {
  test.setTimeout(90_000);
  const port = await closedPort();
  await dashboard.goTo('Resolvers');
  await dashboard.addResolver({ label: 'Dead end', address: '127.0.0.1', port, authName: 'dns.test' });
  const card = (label: string) => dashboard.resolverList.getByRole('listitem').filter({ has: page.locator('.resolver-name strong').getByText(label, { exact: true }) });
  await expect(card('Dead end')).toBeVisible();

  await dashboard.switchResolver('Dead end');
  const asked = card('Dead end').getByRole('alert');
  await expect(asked).toContainText('Dead end didn’t answer (connection refused).');
  // Nothing was committed: the one in use is still in use, and private.
  await expect(card('dns.test (127.0.0.1)')).toHaveAttribute('aria-current', 'true');
  await expect(card('Dead end')).not.toHaveAttribute('aria-current', 'true');
  expect(lab.dig('which.test').answers).toEqual(['10.0.0.1']);
  await expect(asked.getByRole('button', { name: 'Switch anyway' })).toBeVisible();
  await shots(page, 'dead-switch-asked', asked);
  const violations = await axe(page, 'asked');

  // Keep: the question goes, nothing changes.
  await asked.getByRole('button', { name: 'Keep dns.test (127.0.0.1)' }).click();
  await expect(card('Dead end').getByRole('alert')).toHaveCount(0);
  await expect(card('dns.test (127.0.0.1)')).toHaveAttribute('aria-current', 'true');

  // Switch anyway: committed, and it says so in red, with the name and port.
  await dashboard.switchResolver('Dead end');
  await card('Dead end').getByRole('button', { name: 'Switch anyway' }).click();
  await expect(card('Dead end')).toHaveAttribute('aria-current', 'true');
  expect(lab.dig('n1.test').status).toBe('SERVFAIL');
  await expect(card('Dead end')).toHaveAttribute('data-health', 'failing');
  await expect(card('Dead end')).toContainText('in use — not answering');
  await expect(card('Dead end')).not.toContainText('Active');
  await expect(dashboard.banner).toHaveAttribute('data-state', 'blocked');
  const reason = dashboard.banner.getByTestId('banner-reason');
  await expect(reason).toContainText(`Dead end (127.0.0.1:${port})`);
  await expect(page.getByTestId('switch-failed')).toContainText(`Dead end (127.0.0.1:${port}) can’t be reached`);
  await shots(page, 'dead-switch-committed', card('Dead end'));
  violations.push(...(await axe(page, 'committed')));
  expect(violations).toEqual([]);

  await dashboard.banner.getByRole('button', { name: 'Switch back to dns.test (127.0.0.1)' }).click();
  await expect(card('dns.test (127.0.0.1)')).toHaveAttribute('aria-current', 'true');
  expect(lab.dig('which.test').answers).toEqual(['10.0.0.1']);
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  await expect(card('Dead end')).not.toHaveAttribute('data-health', 'failing');
});
