/**
 * Switching to a resolver that can't be reached (a closed port on
 * loopback): the failure is said where the switch was made, in words, the
 * banner counts down to the next try, the reuse gauges stop claiming reuse,
 * and one click switches back.
 */
import { expect, test } from './support/fixtures.js';
import { closedPort } from './support/lab.js';

/** How long an outage has lasted by its Events line: "… 5 attempts since 14:03:07, the last at 14:03:11". */
function outageSeconds(line: string): number {
  const m = /since (\d\d):(\d\d):(\d\d), the last at (\d\d):(\d\d):(\d\d)/.exec(line);
  if (!m) return 0;
  const [since, last] = [m.slice(1, 4), m.slice(4, 7)].map(([h, min, sec]) => Number(h) * 3600 + Number(min) * 60 + Number(sec)) as [number, number];
  return (last - since + 86_400) % 86_400;
}

test('switching to a dead resolver shows the failure in words, and one click switches back', async ({ lab, dashboard, page }) => {
  test.setTimeout(90_000);
  lab.digMany(['n1.test', 'n2.test', 'n3.test']);
  const port = await closedPort();
  await dashboard.goTo('Resolvers');
  await dashboard.addResolver({ label: 'Dead lab', address: '127.0.0.1', port, authName: 'dns.test' });
  await expect(dashboard.resolverList.getByRole('listitem')).toContainText(['Dead lab']);

  await dashboard.switchResolver('Dead lab');
  // Asked first (it didn't answer the probe): switched anyway.
  await dashboard.resolverList.getByRole('button', { name: 'Switch anyway' }).click();
  await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'Dead lab' })).toHaveAttribute('aria-current', 'true');
  // The pool connects on the next query; the query fails, and so does the switch.
  expect(lab.dig('n4.test').status).toBe('SERVFAIL');
  const failure = page.getByTestId('switch-failed');
  await expect(failure).toContainText(`Dead lab (127.0.0.1:${port}) can’t be reached: couldn’t connect to the resolver`);
  await expect(page.getByText(/Now using Dead lab/)).toHaveCount(0);
  await expect(dashboard.banner).toHaveAttribute('data-state', 'blocked');
  // A countdown that moves, not a snapshot.
  const countdown = dashboard.banner.getByTestId('retry-countdown');
  await expect(countdown).toHaveText(/^retrying (by itself in \d+ s, or with the next lookup\.|now…|with each lookup, about once a second\.)$/);

  // The charts mark the outage and the switch on their time axis.
  await dashboard.goTo('Overview');
  await expect(page.getByTestId('chart-marks').first()).toContainText(/1 stretch without private DNS \(shaded\) and 1 resolver switch \(dashed line\)/, { timeout: 10_000 });

  // The failed query says why in words, and which resolver it never reached.
  await dashboard.goTo('Queries');
  await dashboard.openQuery('n4.test');
  await expect(dashboard.queryDetail).toContainText('none reached: couldn’t connect to the resolver');
  await expect(dashboard.queryDetail).toContainText('couldn’t connect to the resolver (DOTSTUB_CONNECT_FAILED)');

  // The reuse gauges reflect the outage.
  await dashboard.goTo('Connections');
  await expect(page.getByRole('meter', { name: 'Connection hits, last 5 min' })).toContainText('no connection');

  // The events tell it once: the change to Stopped, and one line for the outage counting its attempts from the
  // first, the one that blocked DNS (not three lines an attempt, issue 29: nor a second line for the first); no
  // "still Stopped"; dated times.
  await dashboard.goTo('Events');
  const failures = dashboard.events.getByRole('listitem').filter({ hasText: 'Could not connect to Dead lab' });
  await expect(failures.first()).toContainText(/\d+ attempts since/, { timeout: 10_000 });
  await expect(failures).toHaveCount(1);
  await expect(dashboard.events.getByRole('listitem').filter({ hasText: 'to Dead lab closed' })).toHaveCount(0);
  await expect(dashboard.events).not.toContainText('still');
  await expect(failures.first().locator('time')).toHaveText(/^\d{1,2} [A-Z][a-z]{2} \d\d:\d\d:\d\d\.\d{3}$/);

  // The charts once the outage is a few seconds old (as its line in Events says), so the shading has width.
  await expect.poll(async () => outageSeconds((await failures.first().textContent()) ?? ''), { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
  await dashboard.goTo('Overview');
  await page.getByRole('region', { name: 'Queries per second' }).screenshot({ path: 'e2e/screenshots/charts-outage-marked-light.png' });

  // One click back, where the switch was made.
  await dashboard.goTo('Resolvers');
  await failure.getByRole('button', { name: 'Switch back to dns.test (127.0.0.1)' }).click();
  await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'dns.test (127.0.0.1)' })).toHaveAttribute('aria-current', 'true');
  expect(lab.dig('which.test').answers).toEqual(['10.0.0.1']);
  await expect(page.getByText(/Now using dns\.test \(127\.0\.0\.1\)/)).toBeVisible();
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  await expect(page.getByTestId('switch-failed')).toHaveCount(0);
});
