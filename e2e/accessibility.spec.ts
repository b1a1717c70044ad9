/**
 * axe-core on every view, light and dark, wide and at the tray popover's
 * 420 px, against real traffic: zero violations. The query log is checked
 * with a row selected (its detail panel open) and while paused with new
 * queries held back (the grid's active row must still be in the page).
 */
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import type { Section } from './support/dashboard.js';
import { expect, test } from './support/fixtures.js';
import { painted } from './support/painted.js';

const VIEWS: readonly Section[] = ['Overview', 'Queries', 'Resolvers', 'Connections', 'Network', 'Events', 'Settings'];

/** Violations as short readable lines (rule, impact, the first few targets), so a failure says what to fix. */
async function violations(page: Page): Promise<string[]> {
  // label-content-name-mismatch is experimental in axe: turned on, since voice control depends on it.
  const result = await new AxeBuilder({ page }).options({ rules: { 'label-content-name-mismatch': { enabled: true } } }).analyze();
  return result.violations.map(
    (v) => `${v.impact ?? '?'} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`,
  );
}

for (const size of [
  { tag: '1440', width: 1440, height: 900 },
  { tag: '420', width: 420, height: 800 },
] as const) {
  test(`axe finds nothing on any view at ${size.tag} px, light and dark`, async ({ lab, dashboard, page }) => {
    test.setTimeout(120_000);
    await page.setViewportSize({ width: size.width, height: size.height });
    const names = Array.from({ length: 30 }, (_, i) => `n${i}.test`);
    lab.digMany(names);
    lab.digMany(['missing.test', 'which.test']);
    const second = await lab.secondUpstream('10.0.0.2');
    await dashboard.goTo('Resolvers');
    await dashboard.addResolver({ label: 'Lab resolver B', address: '127.0.0.1', port: second.port, authName: 'dns.test' });
    await expect(dashboard.resolverList.getByRole('listitem')).toContainText(['Lab resolver B']);

    const found: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const view of VIEWS) {
        await dashboard.goTo(view);
        if (view === 'Queries') {
          await expect(dashboard.logRows.first()).toBeVisible();
          found.push(...(await violations(page)).map((v) => `${scheme} ${view}: ${v}`));
          await dashboard.openQuery('which.test');
          found.push(...(await violations(page)).map((v) => `${scheme} ${view} (row selected): ${v}`));
          // Narrow, the detail is a full-height sheet over the log: back to the log first.
          if (size.width <= 560) await page.getByRole('button', { name: 'Back to the log' }).click();
          // Paused with the keyboard on the newest row, then new queries arrive.
          await dashboard.queryLog.focus();
          await page.keyboard.press('Home');
          await dashboard.pauseButton.click();
          lab.digMany(['n40.test', 'n41.test', 'n42.test']);
          await expect(page.getByText(/Paused · 3 new/)).toBeVisible();
          // The active row scrolled out of the (virtualised) page: it must not stay the active descendant.
          await page.keyboard.press('End');
          await dashboard.queryLog.evaluate((el) => el.scrollTo(0, 0));
          await painted(page);
          found.push(...(await violations(page)).map((v) => `${scheme} ${view} (paused): ${v}`));
          await dashboard.pauseButton.click();
          await page.keyboard.press('Escape');
        } else {
          await painted(page);
          found.push(...(await violations(page)).map((v) => `${scheme} ${view}: ${v}`));
        }
      }
    }
    expect(found).toEqual([]);
  });
}
