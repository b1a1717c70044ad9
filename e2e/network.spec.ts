/**
 * The Network view and the banner's transport (issue 8 item 9), and "Retry
 * now" (issue 14 item 5), as a user sees them, against real unbound
 * upstreams on loopback:
 * - a resolver whose port 853 refuses connections but whose DoH URL works:
 *   the banner says DNS-over-HTTPS carries the queries and why; the
 *   Network view shows the ladder as it ran (DoT refused, DoH OK, with
 *   timings and the proxy's sentence);
 * - the resolver goes away and comes back while dotstub is backing off:
 *   "Retry now" brings DNS back before the countdown runs out.
 */
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { test as base } from '@playwright/test';
import { startUnbound, type UnboundServer } from '../test-support/unbound.js';
import { Dashboard } from './support/dashboard.js';
import { expect, test } from './support/fixtures.js';
import { ProxyProcess, tempDir, closedPort } from './support/lab.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

/** axe-core's violations, as short lines (the same rules as accessibility.spec.ts). */
async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).options({ rules: { 'label-content-name-mismatch': { enabled: true } } }).analyze();
  return result.violations.map((v) => `${v.impact ?? '?'} ${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

/** A proxy for a resolver whose DoT port is closed and whose DoH URL is a real unbound: the ladder falls back. */
const dohTest = base.extend<{ blockedDot: { upstream: UnboundServer; proxy: ProxyProcess; dotPort: number } }>({
  // eslint-disable-next-line no-empty-pattern
  blockedDot: async ({}, use) => {
    const upstream = await startUnbound({ names: 20, extra: { 'which.test.': '10.0.0.3' }, dohPort: 0 });
    const configDir = tempDir('dotstub-e2e-net-');
    const proxy = new ProxyProcess(configDir);
    try {
      const dotPort = await closedPort();
      await proxy.start({ ...upstream, resolverArg: `127.0.0.1:${dotPort}#dns.test` }, ['--doh', upstream.dohUrl as string]);
      await use({ upstream, proxy, dotPort });
    } finally {
      await proxy.stop();
      await upstream.stop();
      fs.rmSync(configDir, { recursive: true, force: true });
    }
  },
});

dohTest('port 853 refused: the banner says DNS-over-HTTPS carries queries and why; the Network view shows the ladder as it ran', async ({ blockedDot, page }) => {
  const { upstream, proxy, dotPort } = blockedDot;
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.setViewportSize({ width: 1440, height: 900 });
  const dashboard = new Dashboard(page);
  await dashboard.open(proxy.dashboardUrl);

  const { dig } = await import('./support/lab.js');
  expect(dig(proxy.dnsPort, 'which.test').answers).toEqual(['10.0.0.3']);

  const dohPort = upstream.dohPort as number;
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  const carried = dashboard.banner.getByTestId('banner-transport');
  await expect(carried).toContainText(`DNS-over-HTTPS (port ${dohPort})`);
  await expect(carried).toContainText(`Port ${dotPort} is blocked here; using DNS-over-HTTPS on ${dohPort}.`);

  await carried.getByRole('link', { name: 'Network →' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Network');
  await expect(page.getByTestId('transport-carrier')).toContainText(`DNS-over-HTTPS (port ${dohPort})`);
  const steps = page.getByRole('list', { name: 'Fallback ladder, in the order tried' }).getByRole('listitem');
  await expect(steps).toHaveCount(2);
  await expect(steps.nth(0)).toContainText(new RegExp(`DNS-over-TLS \\(port ${dotPort}\\) to 127\\.0\\.0\\.1: refused after \\d+ ms`));
  await expect(steps.nth(0)).toContainText(`This network refuses encrypted DNS connections to dns.test (127.0.0.1) (port ${dotPort}).`);
  await expect(steps.nth(1)).toContainText(new RegExp(`DNS-over-HTTPS \\(port ${dohPort}\\) to dns\\.test \\(127\\.0\\.0\\.1\\): OK in \\d+ ms`));
  await page.screenshot({ path: path.join(SHOTS, 'network-doh-1440-light.png'), fullPage: true });
  expect(await violations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.setViewportSize({ width: 420, height: 900 });
  await page.screenshot({ path: path.join(SHOTS, 'network-doh-420-dark.png'), fullPage: true });
  expect(await violations(page)).toEqual([]);
  expect(errors).toEqual([]);
});

test('“Retry now” brings DNS back before the countdown runs out', async ({ lab, dashboard, page }) => {
  test.setTimeout(90_000);
  expect(lab.dig('which.test').answers).toEqual(['10.0.0.1']);
  await lab.stopUpstream();
  expect(lab.dig('n1.test').status).toBe('SERVFAIL');
  await expect(dashboard.banner).toHaveAttribute('data-state', 'blocked');
  await expect(dashboard.banner.getByRole('button', { name: 'Retry now' })).toBeVisible();
  expect(await violations(page)).toEqual([]);
  // The proxy keeps trying with a growing back-off (250 ms, 500 ms, … 8 s): wait for a long wait.
  const countdown = dashboard.banner.getByTestId('retry-countdown');
  await expect(countdown).toHaveText(/retrying by itself in ([6-9]|\d\d) s/, { timeout: 20_000 });

  await lab.restartUpstream();
  await page.screenshot({ path: path.join(SHOTS, 'banner-retry-1440-light.png') });
  // Read the wait left after the screenshot: the time from here on is the click's alone.
  const left = Number(/in (\d+) s/.exec((await countdown.textContent()) ?? '')?.[1]);
  expect(left).toBeGreaterThanOrEqual(3);
  const clicked = Date.now();
  await dashboard.banner.getByRole('button', { name: 'Retry now' }).click();
  await expect(dashboard.banner.getByTestId('retry-said')).toHaveText('Trying now…');
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private', { timeout: 3000 });
  // Back well before the back-off would have tried again.
  expect(Date.now() - clicked).toBeLessThan((left - 1) * 1000);
  expect(lab.dig('which.test').answers).toEqual(['10.0.0.1']);

  // The Network view tells it: DoT carries queries again, its latest try OK.
  await dashboard.goTo('Network');
  await expect(page.getByTestId('transport-carrier')).toContainText('DNS-over-TLS');
  await expect(page.getByTestId('ladder-step').first()).toContainText(/DNS-over-TLS \(port \d+\) to 127\.0\.0\.1: OK in \d+ ms/);
});

/** A proxy for a resolver with an IPv6 and an IPv4 address, where only IPv4 answers: the connection races them. */
const raceTest = base.extend<{ dualStack: { upstream: UnboundServer; proxy: ProxyProcess } }>({
  // eslint-disable-next-line no-empty-pattern
  dualStack: async ({}, use) => {
    const upstream = await startUnbound({ names: 20, extra: { 'which.test.': '10.0.0.4' } });
    const configDir = tempDir('dotstub-e2e-race-');
    const proxy = new ProxyProcess(configDir);
    try {
      // unbound listens on 127.0.0.1 only: [::1] refuses (or has no route), IPv4 wins.
      await proxy.start({ ...upstream, resolverArg: `[::1]:${upstream.port},127.0.0.1:${upstream.port}#dns.test` });
      await use({ upstream, proxy });
    } finally {
      await proxy.stop();
      await upstream.stop();
      fs.rmSync(configDir, { recursive: true, force: true });
    }
  },
});

raceTest('a resolver with IPv6 and IPv4 addresses: the Network view shows the last race, what IPv6 met and that IPv4 won', async ({ dualStack, page }) => {
  const { proxy } = dualStack;
  await page.setViewportSize({ width: 1440, height: 900 });
  const dashboard = new Dashboard(page);
  await dashboard.open(proxy.dashboardUrl);
  const { dig } = await import('./support/lab.js');
  expect(dig(proxy.dnsPort, 'which.test').answers).toEqual(['10.0.0.4']);
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  await dashboard.goTo('Network');
  const race = page.getByTestId('address-race');
  await expect(race).toContainText(/IPv4 127\.0\.0\.1 won after \d+ ms, over DNS-over-TLS/);
  const tried = race.getByRole('list', { name: 'Addresses tried in the last race' }).getByRole('listitem');
  await expect(tried).toHaveCount(2);
  await expect(tried.nth(0)).toContainText(/IPv6 ::1: tried at \d+ ms, (refused after|no route to it|failed after)/);
  await expect(tried.nth(1)).toContainText(/IPv4 127\.0\.0\.1: tried at \d+ ms, won after \d+ ms/);
  await page.screenshot({ path: path.join(SHOTS, 'network-race-1440-light.png'), fullPage: true });
  expect(await violations(page)).toEqual([]);
});

test('the ladder card says the connection carrying lookups now, not only the attempts since the last reset', async ({ lab, dashboard, page }) => {
  // The proxy connected at start, before anything recorded the ladder; no lookup since.
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  await dashboard.goTo('Network');
  const ladder = page.getByRole('region', { name: 'The fallback ladder, as it ran' });
  await expect(ladder).not.toContainText('No connection attempts yet');
  await expect(ladder.getByTestId('ladder-live')).toHaveText(/^\s*Connected: connection #\d+ to 127\.0\.0\.1 \(TLSv1\.3, full handshake\), open for \d+ s, carried \d+ (query|queries)\.$/);
  expect(lab.dig('n1.test').status).toBe('NOERROR');
  await page.screenshot({ path: 'e2e/screenshots/network-ladder-live-1280-light.png' });
});
