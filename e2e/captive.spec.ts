/**
 * The captive-portal card in the dashboard, against a real proxy in the
 * "hotel Wi-Fi" of captive-api.test.ts (the hotspot's resolver, its sign-in
 * server, a private resolver that isn't reachable yet), strict mode: the
 * banner says sign in, the card asks once, one click allows it, the sign-in
 * page opens from the card, the events tell the story. Screenshots light and
 * dark, wide and narrow, in e2e/screenshots/.
 */
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { startControl, type ControlHarness } from '../test-support/control-harness.js';
import { UdpClient } from '../test-support/dns-client.js';
import { startFakePortal, startHotspotDns, emptyDiscoveryPaths, type FakePortal, type HotspotDns } from '../test-support/fake-portal.js';
import { waitForState } from '../test-support/proxy-harness.js';
import { freePort } from '../test-support/unbound.js';

const DIR = path.join(import.meta.dirname, 'screenshots');

async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

let h: ControlHarness | undefined;
let dns: HotspotDns | undefined;
let portal: FakePortal | undefined;

test.afterEach(async () => {
  await h?.stop();
  await portal?.close();
  dns?.stop();
  h = undefined;
  portal = undefined;
  dns = undefined;
});

test('a Wi-Fi that wants a sign-in: the card asks once, one click allows it, the page opens from it', async ({ page }) => {
  test.setTimeout(60_000);
  dns = await startHotspotDns();
  portal = await startFakePortal({ host: '127.0.0.1', port: 0, loginHost: 'login.hotspot.test' });
  h = await startControl({
    resolverArg: `127.0.0.1:${await freePort()}#dns.test`,
    forceResolver: true,
    overrides: { mode: 'strict' },
    dashboardDir: path.join(import.meta.dirname, '..', 'renderer', 'dist'),
    captive: {
      probes: { interceptionUrl: `http://127.0.0.1:${portal.port}/`, checkUrl: `http://connectivitycheck.gstatic.com:${portal.port}/generate_204`, capportUrl: null },
      networkDns: [`127.0.0.1:${dns.port}`],
      consentFile: null,
      networkKey: () => null,
      paths: emptyDiscoveryPaths(),
    },
  });
  const client = await UdpClient.open(h.dnsPort);
  try {
    await client.query('example.org', { timeoutMs: 4000 });
  } finally {
    client.close();
  }
  await waitForState(h.proxy, 'captive', 5000);

  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${h.url}/#token=${h.token}`);
  const banner = page.getByRole('region', { name: 'Privacy status' });
  await expect(banner).toHaveAttribute('data-state', 'captive');
  await expect(banner).toContainText('Wi-Fi sign-in');
  const card = page.getByRole('region', { name: /This Wi-Fi wants you to sign in at login\.hotspot\.test/ });
  await expect(card).toHaveAttribute('data-exception', 'asking');
  await expect(card).toContainText('Strict mode');
  await expect(card.getByRole('checkbox', { name: 'Remember my answer for this network' })).toBeChecked();
  await page.screenshot({ path: path.join(DIR, 'captive-asking-1280-light.png'), fullPage: true });
  expect(await violations(page)).toEqual([]);

  await card.getByRole('button', { name: 'Allow sign-in' }).click();
  await expect(card).toHaveAttribute('data-exception', 'active');
  await expect(card.getByTestId('captive-window')).toContainText(/Sign-in lookups allowed until \d\d:\d\d(:\d\d)? \(5 min left\)/);
  const open = card.getByRole('link', { name: 'Open sign-in page' });
  await expect(open).toHaveAttribute('href', `http://login.hotspot.test:${portal.port}/login`);
  await expect(open).toHaveAttribute('rel', 'noopener noreferrer');
  await card.getByRole('button', { name: '5 more minutes' }).click();
  await expect(card.getByTestId('captive-window')).toContainText(/\((9|10) min left\)/);
  await card.getByText('What is let through').click();
  await expect(card).toContainText('login.hotspot.test');
  await page.screenshot({ path: path.join(DIR, 'captive-active-1280-light.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.setViewportSize({ width: 420, height: 900 });
  await page.screenshot({ path: path.join(DIR, 'captive-active-420-dark.png'), fullPage: true });
  expect(await violations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });

  // The events tell the story.
  await page.getByRole('navigation').getByRole('link', { name: 'Events', exact: true }).click();
  await page.getByRole('button', { name: 'Wi-Fi sign-in' }).click();
  const events = page.getByRole('list', { name: 'Events, newest first' });
  await expect(events).toContainText('Wi-Fi sign-in page found at login.hotspot.test');
  await expect(events).toContainText('Sign-in lookups allowed');
  expect(errors).toEqual([]);
});
