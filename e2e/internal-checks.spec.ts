/**
 * dotstub's own checks (issue 24, item 5): the system-DNS watchdog asks
 * liveness.dotstub.resolver.arpa about once a second. Those lookups are
 * dotstub's, not the user's: they stay out of the top names and the
 * counts, and the log hides them unless "Show dotstub's own checks" is on.
 */
import { expect, test } from './support/fixtures.js';

const PROBE = 'liveness.dotstub.resolver.arpa';

test("dotstub's liveness checks are not the top name, and the log shows them only when asked", async ({ lab, dashboard, page }) => {
  // The watchdog's probe, more often than any name the user looked up.
  lab.digMany(Array.from({ length: 12 }, () => PROBE));
  lab.digMany(['n1.test', 'n2.test', 'n1.test']);

  const top = page.getByRole('list', { name: 'Top names' });
  await expect(top.getByRole('listitem').first()).toContainText('n1.test');
  await expect(top).not.toContainText(PROBE);
  await expect(page.getByTestId('breakdown-summary')).toContainText(/^3 queries since/);

  await dashboard.goTo('Queries');
  await expect(dashboard.logCount).toHaveText('3 queries held');
  await expect(dashboard.row(PROBE)).toHaveCount(0);
  const show = page.getByRole('checkbox', { name: 'Show dotstub’s own checks' });
  await show.check();
  await expect(dashboard.row(PROBE).first()).toBeVisible();
  await expect(dashboard.logCount).toContainText('15 queries');
  await show.uncheck();
  await expect(dashboard.row(PROBE)).toHaveCount(0);

  // The proxy keeps them apart and its API leaves them out unless asked; a reloaded page asks, so the box still shows them.
  await page.reload();
  await expect(dashboard.liveIndicator).toHaveText('Live');
  await dashboard.goTo('Queries');
  await expect(dashboard.logCount).toHaveText('3 queries held');
  await show.check();
  await expect(dashboard.logCount).toContainText('15 queries');
  await show.uncheck();

  // The proxy's own figures leave them out too: its query count and per-second series.
  const { control, token } = lab.proxy.ready;
  const get = async <T,>(p: string): Promise<T> => (await (await fetch(control + p, { headers: { authorization: `Bearer ${token}` } })).json()) as T;
  const status = await get<{ counters: { queries: number; internalChecks: number } }>('/api/status');
  expect(status.counters.queries).toBe(3);
  expect(status.counters.internalChecks).toBe(12);
  const metrics = await get<{ series: { queries: number }[] }>('/api/metrics');
  expect(metrics.series.reduce((n, p) => n + p.queries, 0)).toBe(3);
});
