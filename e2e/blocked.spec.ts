/**
 * Why a name was blocked (issue 46): a filtering resolver of our own (the
 * fault server) refuses malware.lab with NXDOMAIN and an Extended DNS
 * Error 15 "malware: lab list", and answers ads.lab 0.0.0.0 without a
 * word. The log row says who blocked it and why, the detail says what the
 * resolver sent, the Blocked filter picks them, the Overview counts them
 * today; the resolver cards say what a preset blocks; and axe finds
 * nothing on those views.
 */
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { testPki } from '../test-support/certs.js';
import { startFaultServer } from '../test-support/fault-server.js';
import { expect, test } from './support/fixtures.js';
import { painted } from './support/painted.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).options({ rules: { 'label-content-name-mismatch': { enabled: true } } }).analyze();
  return result.violations.map((v) => `${v.impact ?? '?'} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

test('a blocked answer says who blocked it and why, in the row and its detail; the filter and the Overview count it', async ({ lab, dashboard, page }) => {
  test.setTimeout(60_000);
  const fault = await startFaultServer();
  lab.onCleanup(() => fault.stop());
  fault.behaviour.blocks.set('malware.lab', { kind: 'ede', code: 15, text: 'malware: lab list' });
  fault.behaviour.blocks.set('ads.lab', { kind: 'zero-address' });
  await lab.proxy.stop();
  await lab.proxy.start({ resolverArg: fault.resolverArg, pki: testPki() });
  await dashboard.open(lab.proxy.dashboardUrl);
  await page.setViewportSize({ width: 1440, height: 900 });

  // dig asks with EDNS, so the EDE comes back to it; the fault server answers in this process, so dig runs beside the test.
  await lab.digManyAsync(['q1.lab', 'malware.lab', 'ads.lab', 'q2.lab']);
  await dashboard.goTo('Queries');
  await expect(dashboard.logCount).toHaveText('4 queries held');

  const label = (await dashboard.row('q1.lab').getByRole('gridcell').last().textContent())?.trim() ?? '';
  expect(label).not.toBe('');
  const blocked = dashboard.row('malware.lab').getByTestId('block-badge');
  await expect(blocked).toHaveText(`Blocked by ${label}: malware: lab list`);
  await expect(dashboard.row('malware.lab').getByRole('gridcell').nth(1)).toHaveAttribute('title', `malware.lab: Blocked by ${label}: malware: lab list`);
  await expect(dashboard.row('ads.lab').getByTestId('block-badge')).toHaveText('Answered 0.0.0.0: the usual way to block');
  await expect(dashboard.row('ads.lab').getByRole('gridcell').nth(1)).toHaveAttribute('title', `ads.lab: ${label} answered 0.0.0.0: the usual way to block`);
  await expect(dashboard.row('q1.lab').getByTestId('block-badge')).toHaveCount(0);

  await dashboard.openQuery('malware.lab');
  await expect(page.getByTestId('block-notice')).toHaveText(`Blocked by ${label}: malware: lab list`);
  await expect(dashboard.queryDetail).toContainText(`Blocked${label} refused the name and said why: EDE 15 (Blocked): ‘malware: lab list’`);
  await expect(dashboard.queryDetail).toContainText('Extended DNS ErrorEDE 15 (Blocked): ‘malware: lab list’');
  await expect(dashboard.queryDetail).toContainText('NXDOMAIN');
  await painted(page);
  await page.screenshot({ path: path.join(SHOTS, 'queries-blocked-1440-light.png') });
  const found = (await violations(page)).map((v) => `Queries (blocked row selected): ${v}`);

  // "Blocked by your resolver": the one it said so for; "either way" adds the 0.0.0.0 answer.
  await page.getByRole('button', { name: 'Close query details' }).click();
  const select = page.getByRole('combobox', { name: 'Filter by whether it was blocked' });
  await select.selectOption({ label: 'Blocked by your resolver' });
  await expect(dashboard.logCount).toHaveText('1 query match (of 4 held)');
  await expect(dashboard.logRows).toHaveCount(1);
  await expect(dashboard.logRows.first()).toContainText('malware.lab');
  await select.selectOption({ label: 'Blocked, either way' });
  await expect(dashboard.logCount).toHaveText('2 queries match (of 4 held)');
  await painted(page);
  // The rows' whole words, the detail closed.
  await page.screenshot({ path: path.join(SHOTS, 'queries-blocked-filtered-1440-light.png') });
  found.push(...(await violations(page)).map((v) => `Queries (filtered): ${v}`));

  // The Overview counts them today, and links to them.
  await dashboard.goTo('Overview');
  await expect(page.getByTestId('blocked-today')).toHaveText('2 blocked today: 1 by your resolver, 1 answered 0.0.0.0');
  await painted(page);
  await page.screenshot({ path: path.join(SHOTS, 'overview-blocked-1440-light.png') });
  found.push(...(await violations(page)).map((v) => `Overview: ${v}`));
  await page.getByRole('link', { name: '2 blocked today' }).click();
  await expect(dashboard.logCount).toHaveText('2 queries match (of 4 held)');

  // Where a resolver is described, what it blocks: a preset's words; nothing claimed for one of your own.
  await dashboard.goTo('Resolvers');
  const quad9 = dashboard.resolverList.getByRole('listitem').filter({ hasText: 'Quad9' });
  await expect(quad9.getByTestId('resolver-blocking')).toHaveText(/^Blocks names its threat-intelligence partners list as malware, phishing/);
  await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: label }).getByTestId('resolver-blocking')).toHaveCount(0);
  await painted(page);
  await page.screenshot({ path: path.join(SHOTS, 'resolvers-blocking-1440-light.png'), fullPage: true });
  found.push(...(await violations(page)).map((v) => `Resolvers: ${v}`));
  expect(found).toEqual([]);
});
