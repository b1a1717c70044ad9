/**
 * The header's switch and the words under it follow the verdict, not only
 * the takeover (issue 29, newcomer items 2 and 5). Against a real proxy
 * started the way the desktop app starts it (--system-dns on a temp root).
 *
 * - With private DNS on and the resolver down, every lookup fails: the
 *   switch said "On" in green. It says "On — not working: <why>", in the
 *   danger colour, and "On" again once lookups work.
 * - Paused or off, the banner said "Carried by DNS-over-TLS (port 853)" with
 *   green 100 % gauges under it, while this machine's lookups went to its
 *   usual DNS. The transport line says the usual DNS carries them, and the
 *   gauges are neutral and say why.
 */
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Locator, Page } from '@playwright/test';
import { expect, test } from './support/fixtures.js';
import { painted } from './support/painted.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

async function shots(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 420]) {
      await page.setViewportSize({ width, height: width === 420 ? 800 : 900 });
      await page.evaluate(() => window.scrollTo(0, 0));
      await painted(page);
      await page.screenshot({ path: path.join(SHOTS, `${name}-${width}-${scheme}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** Serious or critical accessibility violations on the page as it is, light and dark. */
async function axe(page: Page, where: string): Promise<string[]> {
  const found: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const r = await new AxeBuilder({ page }).analyze();
    found.push(...r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${where} (${scheme}): ${v.id} — ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | ')}`));
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return found;
}

/** The switch track's colour, as the eye sees it (polled: it fades over 0.15 s). */
function trackColour(sw: Locator): Promise<string> {
  return sw.locator('.switch-track').evaluate((el) => getComputedStyle(el).backgroundColor);
}

/** A colour of the page's palette (`--good`, `--danger`) as the browser computes it. */
function palette(page: Page, name: string): Promise<string> {
  return page.evaluate((v) => {
    const probe = document.createElement('span');
    probe.style.backgroundColor = `var(${v})`;
    document.body.append(probe);
    const c = getComputedStyle(probe).backgroundColor;
    probe.remove();
    return c;
  }, name);
}

test('the header switch says "On" in green only while lookups work: "On — not working: …" in red while the resolver is down', async ({ lab, dashboard, page }) => {
  test.setTimeout(90_000);
  await lab.restartWithSystemDns();
  await page.setViewportSize({ width: 1280, height: 900 });
  await dashboard.open(lab.proxy.dashboardUrl);
  await dashboard.turnOnFromBanner();
  expect(lab.dig('n1.test').status).toBe('NOERROR');
  const word = dashboard.headerSwitch.locator('.switch-word');
  await expect(word).toHaveText('On');
  const green = await palette(page, '--good');
  await expect.poll(() => trackColour(dashboard.headerSwitch)).toBe(green);

  await lab.stopUpstream();
  await expect.poll(() => lab.dig('n2.test').status, { timeout: 15_000 }).toBe('SERVFAIL');
  await expect(dashboard.banner).toHaveAttribute('data-state', 'blocked', { timeout: 15_000 });
  // Still switched on (the takeover holds), but not working, and it says so in the header.
  await expect(dashboard.headerSwitch).toHaveAttribute('aria-checked', 'true');
  await expect(word).toHaveText(/^On — not working: \S.*/);
  await expect(dashboard.headerSwitch).toHaveAttribute('data-verdict', 'danger');
  await expect.poll(() => trackColour(dashboard.headerSwitch)).toBe(await palette(page, '--danger'));
  expect(await axe(page, 'not working')).toEqual([]);
  await shots(page, 'switch-not-working');

  // Back: the words and the colour follow.
  // Each lookup tries again (at most once a second): no click to race the proxy's own retry.
  await lab.restartUpstream();
  await expect.poll(() => lab.dig('n3.test').status, { timeout: 15_000 }).toBe('NOERROR');
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private', { timeout: 15_000 });
  await expect(word).toHaveText('On');
  await expect.poll(() => trackColour(dashboard.headerSwitch)).toBe(green);
});

test('paused or off, the transport line and the gauges don\'t claim protection: the usual DNS carries the lookups', async ({ lab, dashboard, page }) => {
  test.setTimeout(90_000);
  await lab.restartWithSystemDns();
  await page.setViewportSize({ width: 1280, height: 900 });
  await dashboard.open(lab.proxy.dashboardUrl);
  await dashboard.turnOnFromBanner();
  lab.digMany(Array.from({ length: 20 }, (_, i) => `n${i}.test`));
  const transport = dashboard.banner.getByTestId('banner-transport');
  await expect(transport).toContainText('DNS-over-TLS');
  const sinceStart = dashboard.gauge('Connection hits since start');
  await expect(sinceStart).toHaveClass(/tone-good/);

  await dashboard.turnOffFromHeader('5 min');
  await expect(transport).not.toContainText('DNS-over-TLS');
  await expect(transport).toContainText('Your usual DNS, not dotstub');
  for (const label of ['Connection hits since start', 'Connection hits, last 5 min']) {
    await expect(dashboard.gauge(label)).not.toHaveClass(/tone-good/);
    await expect(dashboard.gauge(label)).toContainText('Private DNS is paused');
  }
  expect(await axe(page, 'paused')).toEqual([]);
  await shots(page, 'paused-carried-by');

  await dashboard.banner.getByRole('button', { name: 'Resume now' }).click();
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  await dashboard.turnOffFromHeader('Until I resume');
  await expect(transport).not.toContainText('DNS-over-TLS');
  await expect(transport).toContainText('Your usual DNS, not dotstub');
  for (const label of ['Connection hits since start', 'Connection hits, last 5 min']) {
    await expect(dashboard.gauge(label)).not.toHaveClass(/tone-good/);
    await expect(dashboard.gauge(label)).toContainText('Private DNS is off');
  }
  await shots(page, 'off-carried-by');
});
