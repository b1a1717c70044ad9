/**
 * What the dashboard asks the proxy for (issue 19): while the live stream is
 * connected, the stream's snapshots carry status, resolvers, connections and
 * metrics, so an idle page sends no request at all; a resolver switch is
 * a probe and one PUT, whose answer is the new status. Before this, 10 s
 * idle cost 14 requests and a switch 18 in its first 5 s. Counted with page.on('request')
 * against a real proxy and two real upstreams.
 */
import path from 'node:path';
import { expect, test } from './support/fixtures.js';

test('an idle dashboard polls nothing while the stream is up, and a resolver switch is a probe and one PUT', async ({ lab, dashboard, page }) => {
  test.setTimeout(60_000);
  const second = await lab.secondUpstream('10.0.0.2');
  await dashboard.goTo('Resolvers');
  await dashboard.addResolver({ label: 'Lab resolver B', address: '127.0.0.1', port: second.port, authName: 'dns.test' });
  await expect(page.getByText('Added Lab resolver B.')).toBeVisible();
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  // Let what the page does on its own after the add settle. This and the two windows below are the
  // measurement (requests per 10 s idle, per 5 s from a switch): real time, kept.
  await page.waitForTimeout(1500);

  let seen: string[] = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/api/')) seen.push(`${r.method()} ${u.pathname}`);
  });

  // 10 s idle on the Resolvers view.
  await page.waitForTimeout(10_000);
  const idle = seen;
  seen = [];

  // One switch, and 5 s after it: the new status, the new connection, all on screen.
  const clicked = Date.now();
  await dashboard.switchResolver('Lab resolver B');
  await expect(page.getByText(/Now using Lab resolver B: connection #\d+ to 127\.0\.0\.1/)).toBeVisible();
  await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'Lab resolver B' })).toHaveAttribute('aria-current', 'true');
  await expect(dashboard.banner).toContainText('Lab resolver B');
  await page.waitForTimeout(Math.max(0, clicked + 5000 - Date.now()));
  const onSwitch = seen;
  await page.screenshot({ path: path.join(import.meta.dirname, 'screenshots', 'requests-after-switch.png') });

  console.log(`requests in 10 s idle: ${idle.length} (${idle.join(', ') || 'none'})`);
  console.log(`requests in the 5 s from a resolver switch: ${onSwitch.length} (${onSwitch.join(', ')})`);
  expect(idle, 'nothing polled while the stream is up').toEqual([]);
  // "Use" asks the resolver first (does it answer now?), then switches: the PUT's answer and the stream say the rest.
  expect(onSwitch, 'the switch is a probe and one PUT').toEqual(['POST /api/resolvers/probe', 'PUT /api/resolvers/active']);
});
