/**
 * Words and symbols (issue 24, item 6). When the resolver can't be reached
 * dotstub fails safe: lookups fail rather than leave in cleartext. "Blocked"
 * is the good number in Pi-hole and AdGuard, so the state is named for what
 * the user gets. The tab's title and favicon follow the privacy state (a
 * background tab must not look protected); the brand mark is neutral.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './support/fixtures.js';
import { painted } from './support/painted.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

async function favicon(page: Page): Promise<string> {
  return page.locator('link[rel="icon"]').getAttribute('href').then((h) => h ?? '');
}

test('a failing resolver reads "Stopped — failing safe, no DNS"; title and favicon follow the state', async ({ lab, dashboard, page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  lab.dig('n1.test');
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  await expect(page).toHaveTitle(/^Private · Overview · dotstub$/);
  const privateIcon = await favicon(page);

  await lab.stopUpstream();
  // The pool connects on the next query; once it has seen the resolver go, the query fails at once (nothing leaves).
  await expect.poll(() => lab.dig('n2.test').status).toBe('SERVFAIL');
  await expect(dashboard.banner).toHaveAttribute('data-state', 'blocked', { timeout: 15_000 });
  await expect(dashboard.banner.locator('.banner-chip')).toHaveText('Stopped');
  await expect(dashboard.banner).toContainText('Stopped — failing safe, no DNS');
  await expect(dashboard.banner).not.toContainText(/blocked/i);
  await expect(page).toHaveTitle(/^Stopped · Overview · dotstub$/);
  const stoppedIcon = await favicon(page);
  expect(stoppedIcon).not.toBe(privateIcon);
  expect(stoppedIcon).not.toContain('1f883d');

  // The brand mark says "dotstub", not "protected": the same neutral mark in every state.
  const brand = page.getByRole('banner').locator('.brand img');
  const src = await brand.getAttribute('src');
  const svg = fs.readFileSync(path.join(import.meta.dirname, '..', 'renderer', 'public', (src ?? '').replace(/^\.\//, '')), 'utf8');
  expect(svg).not.toMatch(/#1f8a5b|#1f883d/i);

  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 420]) {
      await page.setViewportSize({ width, height: width === 420 ? 800 : 900 });
      await painted(page);
      await page.screenshot({ path: path.join(SHOTS, `stopped-${width}-${scheme}.png`) });
    }
  }

  // Back: the title and the icon say so.
  await lab.restartUpstream();
  await page.getByRole('button', { name: /Retry now/ }).click();
  await expect.poll(() => lab.dig('n3.test').status, { timeout: 15_000 }).toBe('NOERROR');
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private', { timeout: 15_000 });
  await expect(page).toHaveTitle(/^Private · Overview · dotstub$/);
  expect(await favicon(page)).toBe(privateIcon);
});
