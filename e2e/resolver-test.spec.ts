/**
 * "Test resolvers" (issue 14) as a user meets it: real unbound resolvers on
 * loopback, two behind relays that add 5 ms and 40 ms each way, one that
 * refuses; the ranking puts them in the order of their delays, says why the
 * dead one couldn't be measured, lists the presets as not measured (nothing
 * is sent to the Internet: the lab runs dotstub with --measure-only-local),
 * and switching from the ranking works. Issue 24 item 10: the results are
 * on the resolver cards (bars, a "fastest" badge, "unreachable: connection
 * refused at …", "not measured"), the one in use first, with "Use fastest".
 * Failed before: the results were a second list below, presets said "no
 * answers" like a refused resolver, the one in use was listed last.
 */
import { AxeBuilder } from '@axe-core/playwright';
import path from 'node:path';
import { startDelayRelay } from '../test-support/delay-relay.js';
import { expect, test } from './support/fixtures.js';
import { painted } from './support/painted.js';
import { closedPort } from './support/lab.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

test('Test resolvers ranks real resolvers by their delay, explains failures, and switches from the ranking', async ({ lab, dashboard, page }) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 1440, height: 900 });
  const near = await lab.secondUpstream('10.0.0.2');
  const far = await lab.secondUpstream('10.0.0.3');
  const nearRelay = await startDelayRelay(near.port, 5);
  lab.onCleanup(() => nearRelay.close());
  const farRelay = await startDelayRelay(far.port, 40);
  lab.onCleanup(() => farRelay.close());

  await dashboard.goTo('Resolvers');
  for (const r of [
    { label: 'Far lab', port: farRelay.port },
    { label: 'Near lab', port: nearRelay.port },
    { label: 'Dead lab', port: await closedPort() },
  ]) {
    await dashboard.addResolver({ label: r.label, address: '127.0.0.1', authName: 'dns.test', port: r.port });
    await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: r.label })).toBeVisible();
  }

  // Before any test: never-tried presets say "not measured", not "no answers".
  const card = (label: string) => dashboard.resolverList.getByRole('listitem').filter({ has: page.locator('.resolver-name strong').getByText(label, { exact: true }) });
  await expect(card('Quad9').getByTestId('resolver-figure')).toHaveText('not measured');

  await page.getByRole('button', { name: 'Test resolvers' }).click();
  await expect(page.getByTestId('test-status')).toContainText(/Tested at/, { timeout: 25_000 });
  // The results are on the cards (no second list): the one in use first, then fastest first, the unreachable, the not measured.
  await expect(page.getByRole('list', { name: 'Ranking, fastest first' })).toHaveCount(0);
  const names = dashboard.resolverList.locator('.resolver-name strong');
  await expect(names.nth(0)).toHaveText('dns.test (127.0.0.1)');
  await expect(names.nth(1)).toHaveText('Near lab');
  await expect(names.nth(2)).toHaveText('Far lab');
  await expect(names.nth(3)).toHaveText('Dead lab');
  // No delay, then 5 ms each way, then 40 ms each way.
  await expect(card('dns.test (127.0.0.1)').getByTestId('fastest')).toHaveText('fastest');
  await expect(card('dns.test (127.0.0.1)')).toContainText('in use');
  await expect(card('Near lab').getByTestId('card-test')).toContainText('Test: #2');
  await expect(card('Far lab').getByTestId('card-test')).toContainText(/DoT\s*\d+(\.\d+)? ms on an open connection · \d+(\.\d+)? ms new/);
  await expect(card('Far lab').getByTestId('fastest')).toHaveCount(0);
  await expect(card('Dead lab').getByTestId('card-test')).toHaveText(/^\s*Test: unreachable: connection refused at \d\d:\d\d:\d\d\.$/);
  await expect(card('Quad9').getByTestId('card-test')).toContainText('Not tested: not on this machine');
  // Refused is not "not measured": the card's figure says it, where a never-tried preset says "not measured".
  await expect(card('Dead lab').getByTestId('resolver-figure')).toContainText('unreachable: connection refused');
  await expect(card('Quad9').getByTestId('resolver-figure')).toHaveText('not tested');
  await expect(page.getByTestId('test-suggestion')).toContainText('The one in use, dns.test (127.0.0.1), is the fastest from here.');
  await expect(page.getByRole('button', { name: /^Use fastest/ })).toHaveCount(0);
  const axe = async (): Promise<string[]> =>
    (await new AxeBuilder({ page }).options({ rules: { 'label-content-name-mismatch': { enabled: true } } }).analyze()).violations.map(
      (v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`,
    );
  expect(await axe()).toEqual([]);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 420]) {
      await page.setViewportSize({ width, height: 900 });
      // The list's top just below the sticky header.
      await dashboard.resolverList.evaluate((el) => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - (document.querySelector('header')?.getBoundingClientRect().height ?? 0) - 12));
      await painted(page);
      await page.screenshot({ path: path.join(SHOTS, `resolver-cards-tested-${width}-${scheme}.png`) });
      if (scheme === 'dark') expect(await axe()).toEqual([]);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1440, height: 900 });

  // On a slower one, "Use fastest" goes back to the fastest; the one in use moves to the top.
  await dashboard.switchResolver('Far lab');
  await expect(card('Far lab')).toHaveAttribute('aria-current', 'true');
  await expect(names.nth(0)).toHaveText('Far lab');
  await page.getByRole('button', { name: 'Test again' }).click();
  await expect(page.getByTestId('test-status')).toContainText(/Tested at/, { timeout: 25_000 });
  await expect(page.getByTestId('test-suggestion')).toContainText('is the fastest from here');
  await page.getByRole('button', { name: /^Use fastest/ }).click();
  await expect(names.nth(0)).not.toHaveText('Far lab');
  await expect(dashboard.resolverList.locator('[aria-current="true"]').getByTestId('fastest')).toBeVisible();
  // Not lab.dig: a blocking dig would stall the relays, which run in this process.
  expect(['10.0.0.1', '10.0.0.2']).toContain((await lab.digManyAsync(['which.test'])).trim());
});

test('the test and "Use fastest" come before the cards; each card has one figure on one scale; the last test survives a restart', async ({ lab, dashboard, page }) => {
  test.setTimeout(90_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  const second = await lab.secondUpstream('10.0.0.2');
  await dashboard.goTo('Resolvers');
  await dashboard.addResolver({ label: 'Second lab', address: '127.0.0.1', authName: 'dns.test', port: second.port });
  const card = (label: string) => dashboard.resolverList.getByRole('listitem').filter({ has: page.locator('.resolver-name strong').getByText(label, { exact: true }) });
  await expect(card('Second lab')).toBeVisible();

  // Above the cards: the test is found without scrolling past every resolver.
  const testButton = page.getByRole('button', { name: 'Test resolvers' });
  const pageTop = (l: typeof testButton): Promise<number> => l.evaluate((el) => el.getBoundingClientRect().top + window.scrollY);
  const buttonTop = await pageTop(testButton);
  expect(buttonTop).toBeLessThan(await pageTop(dashboard.resolverList));
  expect(buttonTop).toBeLessThan(600);

  await testButton.click();
  await expect(page.getByTestId('test-status')).toContainText(/Tested at/, { timeout: 25_000 });
  // One figure and at most one bar per card, all on the test's scale, said once above the list.
  await expect(page.getByTestId('latency-scale')).toContainText(/^Bars: each resolver’s time for a lookup on an open connection, from the test at \d\d:\d\d:\d\d, on one scale: a full bar is \d+(\.\d+)? (ms|s)\.$/);
  for (const label of ['dns.test (127.0.0.1)', 'Second lab', 'Quad9']) {
    await expect(card(label).locator('.meter')).toHaveCount(label === 'Quad9' ? 0 : 1);
    await expect(card(label)).not.toContainText('median, 5 min');
  }
  await expect(card('Second lab').getByTestId('resolver-figure')).toHaveText(/^\d+(\.\d+)? ms$/);
  await expect(card('Quad9').getByTestId('resolver-figure')).toHaveText('not tested');
  const rankBefore = await card('Second lab').getByTestId('card-test').textContent();
  await page.screenshot({ path: 'e2e/screenshots/resolver-test-above-cards-1280-light.png' });

  // A restart (and a fresh page) keeps the last test, with its time.
  await lab.restartProxy();
  await dashboard.open(lab.proxy.dashboardUrl);
  await dashboard.goTo('Resolvers');
  await expect(page.getByTestId('test-status')).toContainText(/Tested at/);
  await expect(page.getByRole('button', { name: 'Test again' })).toBeVisible();
  await expect(card('Second lab').getByTestId('card-test')).toHaveText(rankBefore ?? '');
});
