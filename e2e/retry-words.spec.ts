/**
 * What the banner says while the resolver can't be reached (issue 24 item
 * 4), against a real proxy: while lookups come, each may start an attempt at
 * most once a second (upstream/pool/backoff.ts), so the banner says that
 * instead of counting down a 30 s wait that never comes; idle, it counts
 * down from at most 10 s (the idle back-off's cap); a reset handshake is
 * said as a reset, with no guess at a middlebox. Failed before: "retrying
 * in 30 s" under traffic, idle waits up to 30 s, and "a middlebox blocking
 * DNS over TLS?" after one reset.
 */
import net from 'node:net';
import { expect, test } from './support/fixtures.js';
import { closedPort } from './support/lab.js';

test('under traffic the banner says the proxy retries with each lookup; idle, it counts down from at most 10 s', async ({ lab, dashboard, page }) => {
  test.setTimeout(120_000);
  const port = await closedPort();
  await dashboard.goTo('Resolvers');
  await dashboard.addResolver({ label: 'Dead end', address: '127.0.0.1', port, authName: 'dns.test' });
  await dashboard.switchResolver('Dead end');
  await dashboard.resolverList.getByRole('button', { name: 'Switch anyway' }).click();
  await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'Dead end' }).first()).toHaveAttribute('aria-current', 'true');
  expect(lab.dig('n1.test').status).toBe('SERVFAIL');
  await expect(dashboard.banner).toHaveAttribute('data-state', 'blocked');

  // Lookups every 300 ms for 20 s: the proxy tries about once a second, and the banner says so.
  let stop = false;
  const traffic = (async () => {
    for (let i = 0; !stop && i < 70; i++) {
      await lab.digManyAsync([`t${i}.test`]);
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  try {
    const countdown = dashboard.banner.getByTestId('retry-countdown');
    await expect(countdown).toHaveText('retrying with each lookup, about once a second.', { timeout: 10_000 });
    // Said steadily, not a countdown jumping between 29, 30 and 31: read again over a few seconds of the
    // proxy's own attempts (its time, which no page clock moves).
    for (let i = 0; i < 4; i++) {
      await page.waitForTimeout(700);
      await expect(countdown).toHaveText('retrying with each lookup, about once a second.');
    }
  } finally {
    stop = true;
    await traffic;
  }
  // Idle: the proxy retries by itself, within 10 s.
  const countdown = dashboard.banner.getByTestId('retry-countdown');
  await expect(countdown).toHaveText(/^retrying by itself in ([1-9]|10) s, or with the next lookup\.$/, { timeout: 10_000 });
  // The state was announced once, not once per attempt: the reason carries no wait that changes.
  await expect(dashboard.banner.getByTestId('banner-reason')).not.toContainText('30 s');
});

test('a handshake the server resets is said as a reset, with no guess at a middlebox', async ({ lab, dashboard }) => {
  test.setTimeout(60_000);
  const server = net.createServer((s) => s.once('data', () => s.resetAndDestroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  lab.onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as net.AddressInfo;
  await dashboard.goTo('Resolvers');
  await dashboard.addResolver({ label: 'Resetting', address: '127.0.0.1', port, authName: 'dns.test' });
  await dashboard.switchResolver('Resetting');
  await dashboard.resolverList.getByRole('button', { name: 'Switch anyway' }).click();
  await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'Resetting' }).first()).toHaveAttribute('aria-current', 'true');
  expect(lab.dig('n1.test').status).toBe('SERVFAIL');
  await expect(dashboard.banner).toHaveAttribute('data-state', 'blocked');
  await dashboard.goTo('Events');
  await expect(dashboard.events.getByRole('listitem').filter({ hasText: 'Could not connect to Resetting' }).first()).toContainText('reset');
  await expect(dashboard.banner).not.toContainText('middlebox');
  await expect(dashboard.events).not.toContainText('middlebox');
});

test('an outage is one line in Events, updated in place as attempts come, in the banner’s words', async ({ lab, dashboard, page }) => {
  test.setTimeout(90_000);
  await lab.stopUpstream();
  expect(lab.dig('n1.test').status).toBe('SERVFAIL');
  await expect(dashboard.banner).toHaveAttribute('data-state', 'blocked');
  await dashboard.goTo('Events');
  const outage = dashboard.events.getByRole('listitem').filter({ hasText: 'Could not connect to' });

  // Lookups every 300 ms: the proxy tries about once a second, and the banner says so.
  let stop = false;
  const traffic = (async () => {
    for (let i = 0; !stop && i < 70; i++) {
      await lab.digManyAsync([`t${i}.test`]);
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  try {
    await expect(outage.first()).toContainText(/[3-9] attempts since/, { timeout: 15_000 });
    const first = await outage.first().elementHandle();
    await expect(dashboard.banner.getByTestId('retry-countdown')).toHaveText('retrying with each lookup, about once a second.', { timeout: 10_000 });
    await expect(outage.first()).toContainText(/(1\d|[6-9]) attempts since/, { timeout: 20_000 });
    // One line, the same element, its count grown; no closes of connections that never opened between attempts.
    await expect(outage).toHaveCount(1);
    expect(await first?.evaluate((el) => el.isConnected)).toBe(true);
    await expect(dashboard.events.getByRole('listitem').filter({ hasText: /Connection #\d+ to .* closed: it failed/ })).toHaveCount(0);
    // Its words agree with the banner's: no "Retrying in 10 s" while the banner says about once a second.
    await expect(outage).toContainText('retrying with each lookup, about once a second');
    await expect(dashboard.events).not.toContainText('Retrying in');
    await page.screenshot({ path: 'e2e/screenshots/outage-events.png' });
  } finally {
    stop = true;
    await traffic;
  }
});
