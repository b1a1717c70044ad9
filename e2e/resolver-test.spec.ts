/**
 * "Test resolvers" (issue 14) as a user meets it: real unbound resolvers on
 * loopback, two behind relays that add 5 ms and 40 ms each way, one that
 * refuses; the ranking puts them in the order of their delays, says why the
 * dead one couldn't be measured, lists the presets as not measured (nothing
 * is sent to the Internet: the lab runs dotstub with --measure-only-local),
 * and switching from the ranking works.
 */
import { AxeBuilder } from '@axe-core/playwright';
import net from 'node:net';
import path from 'node:path';
import { startDelayRelay } from '../test-support/delay-relay.js';
import { expect, test } from './support/fixtures.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

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

  await page.getByRole('button', { name: 'Test resolvers' }).click();
  await expect(page.getByTestId('test-status')).toContainText(/Tested at/, { timeout: 25_000 });
  const ranking = page.getByRole('list', { name: 'Ranking, fastest first' }).getByRole('listitem');
  await expect(ranking).toHaveCount(3);
  // No delay, then 5 ms each way, then 40 ms each way.
  await expect(ranking.nth(0)).toContainText('dns.test (127.0.0.1)');
  await expect(ranking.nth(0)).toContainText('in use');
  await expect(ranking.nth(1)).toContainText('Near lab');
  await expect(ranking.nth(2)).toContainText('Far lab');
  await expect(ranking.nth(2)).toContainText(/DoT\s*\d+(\.\d+)? ms on an open connection · \d+(\.\d+)? ms new/);
  await expect(page.getByTestId('test-suggestion')).toContainText('The one in use, dns.test (127.0.0.1), is the fastest from here.');
  await expect(page.getByTestId('test-failed')).toContainText('Dead lab');
  await expect(page.getByTestId('test-failed')).toContainText('refuses encrypted DNS connections');
  await expect(page.getByTestId('test-skipped')).toContainText('Not measured: Cloudflare, Quad9');
  await expect(page.getByTestId('test-skipped')).toContainText('not on this machine');
  await page.getByRole('region', { name: 'Which is fastest from here?' }).screenshot({ path: path.join(SHOTS, 'test-resolvers-1440-light.png') });
  const axe = async (): Promise<string[]> =>
    (await new AxeBuilder({ page }).options({ rules: { 'label-content-name-mismatch': { enabled: true } } }).analyze()).violations.map(
      (v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`,
    );
  expect(await axe()).toEqual([]);

  await page.emulateMedia({ colorScheme: 'dark' });
  await page.setViewportSize({ width: 420, height: 900 });
  await page.screenshot({ path: path.join(SHOTS, 'test-resolvers-420-dark.png'), fullPage: true });
  expect(await axe()).toEqual([]);
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1440, height: 900 });

  // Switch from the ranking: Near lab answers from then on.
  await ranking.nth(1).getByRole('button', { name: 'Use Near lab' }).click();
  await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'Near lab' })).toHaveAttribute('aria-current', 'true');
  // Not lab.dig: a blocking dig would stall the relays, which run in this process.
  expect((await lab.digManyAsync(['which.test'])).trim()).toBe('10.0.0.2');
  await expect(ranking.nth(1)).toContainText('in use');
});
