/**
 * One obvious switch (issue 24, item 1), against a real proxy started the
 * way the desktop app starts it: --system-dns, here on a copy of the system
 * files (a temp root: this machine's DNS is never touched). A first start
 * shows Off with a primary "Turn on private DNS" in the banner; the header
 * holds a switch whose "off" asks for how long (5 min, 1 hour, until I
 * resume); a pause is its own state, with a countdown and "Resume now".
 */
import fs from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect, test } from './support/fixtures.js';
import { painted } from './support/painted.js';
import { tempDir } from './support/lab.js';

const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\nsearch lab.test\n';
const SHOTS = path.join(import.meta.dirname, 'screenshots');

/** Serious and critical axe violations, as short lines. */
async function axe(page: Page, where: string): Promise<string[]> {
  const r = await new AxeBuilder({ page }).analyze();
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${where}: ${v.id} — ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | ')}`);
}

async function shots(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 420]) {
      await page.setViewportSize({ width, height: width === 420 ? 800 : 900 });
      await painted(page);
      await page.screenshot({ path: path.join(SHOTS, `${name}-${width}-${scheme}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
}

test('Off has a primary "Turn on"; the header switch pauses for a while, and a pause counts down with "Resume now"', async ({ lab, dashboard, page }) => {
  test.setTimeout(90_000);
  const root = tempDir('dotstub-e2e-root-');
  lab.onCleanup(async () => fs.rmSync(root, { recursive: true, force: true }));
  fs.mkdirSync(path.join(root, 'etc'));
  const resolvConf = path.join(root, 'etc', 'resolv.conf');
  fs.writeFileSync(resolvConf, ORIGINAL);
  await lab.proxy.stop();
  await lab.proxy.start(lab.upstream, ['--system-dns', '--system-dns-root', root, '--system-dns-state-dir', path.join(root, 'state')]);
  await page.setViewportSize({ width: 1280, height: 900 });
  await dashboard.open(lab.proxy.dashboardUrl);

  // A first start: Off, and the way on is right there, in the banner.
  await expect(dashboard.banner).toHaveAttribute('data-state', 'off');
  const turnOn = dashboard.banner.getByRole('button', { name: 'Turn on private DNS' });
  await expect(turnOn).toBeVisible();
  const headerSwitch = page.getByRole('banner').getByRole('switch', { name: 'Private DNS' });
  await expect(headerSwitch).toHaveAttribute('aria-checked', 'false');
  const found = await axe(page, 'off');
  await shots(page, 'switch-off');

  await turnOn.click();
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  await expect(headerSwitch).toHaveAttribute('aria-checked', 'true');
  expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);

  // Off from the header asks for how long; 5 minutes is a pause, not Off.
  await headerSwitch.click();
  const choices = page.getByRole('group', { name: 'Turn private DNS off for' });
  await expect(choices.getByRole('button')).toHaveText(['5 min', '1 hour', 'Until I resume']);
  found.push(...(await axe(page, 'menu open')));
  // Escape closes it without changing anything.
  await page.keyboard.press('Escape');
  await expect(choices).toHaveCount(0);
  await expect(headerSwitch).toBeFocused();
  await expect(headerSwitch).toHaveAttribute('aria-checked', 'true');
  await headerSwitch.click();
  await choices.getByRole('button', { name: '5 min' }).click();
  await expect(dashboard.banner).toHaveAttribute('data-state', 'paused');
  await expect(dashboard.banner).toContainText('Paused');
  await expect(dashboard.banner).not.toContainText(/\bOff\b/);
  await expect(dashboard.banner.getByTestId('pause-countdown')).toHaveText(/^back on at \d\d:\d\d · (4 min [0-5]?\d s|5 min 0 s) left$/);
  await expect(headerSwitch).toHaveAttribute('aria-checked', 'false');
  await expect(page.getByRole('banner')).toContainText('Paused');
  expect(fs.readFileSync(resolvConf, 'utf8')).toBe(ORIGINAL);
  found.push(...(await axe(page, 'paused')));
  await page.emulateMedia({ colorScheme: 'dark' });
  found.push(...(await axe(page, 'paused, dark')));
  await shots(page, 'switch-paused');
  expect(found).toEqual([]);

  await dashboard.banner.getByRole('button', { name: 'Resume now' }).click();
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  await expect(headerSwitch).toHaveAttribute('aria-checked', 'true');
  expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);

  // "Until I resume" gives the old DNS back with no end: Off, with the way back on in the banner.
  await headerSwitch.click();
  await page.getByRole('group', { name: 'Turn private DNS off for' }).getByRole('button', { name: 'Until I resume' }).click();
  await expect(dashboard.banner).toHaveAttribute('data-state', 'off');
  await expect(dashboard.banner.getByRole('button', { name: 'Turn on private DNS' })).toBeVisible();
  expect(fs.readFileSync(resolvConf, 'utf8')).toBe(ORIGINAL);

  // The header switch turns it on in one click.
  await headerSwitch.click();
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);
});

test('the banner\'s "since" moves with every change of the privacy state, turning private DNS on and off included', async ({ lab, dashboard, page }) => {
  test.setTimeout(60_000);
  const root = tempDir('dotstub-e2e-root-');
  lab.onCleanup(async () => fs.rmSync(root, { recursive: true, force: true }));
  fs.mkdirSync(path.join(root, 'etc'));
  fs.writeFileSync(path.join(root, 'etc', 'resolv.conf'), ORIGINAL);
  await lab.proxy.stop();
  await lab.proxy.start(lab.upstream, ['--system-dns', '--system-dns-root', root, '--system-dns-state-dir', path.join(root, 'state')]);
  await dashboard.open(lab.proxy.dashboardUrl);
  await expect(dashboard.banner).toHaveAttribute('data-state', 'off');
  const since = dashboard.banner.locator('.banner-since');
  /** Seconds of the day the banner's "since HH:MM:SS" names (the page's clock and this one agree: same machine). */
  const sinceSeconds = async (): Promise<number> => {
    const m = /since (\d\d):(\d\d):(\d\d)/.exec((await since.textContent()) ?? '');
    if (!m) throw new Error(`no "since HH:MM:SS" in the banner: ${await since.textContent()}`);
    return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
  };
  const now = (): number => {
    const d = new Date();
    return d.getHours() * 3600 + d.getMinutes() * 60 + d.getSeconds();
  };
  // Let the proxy's own start (and its first connection) be clearly in the past: the banner's "since" is
  // to the second, so only two seconds of real time tell the turn-on's moment from the start's.
  await page.waitForTimeout(2100);
  const onAt = now();
  await dashboard.banner.getByRole('button', { name: 'Turn on private DNS' }).click();
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  await expect.poll(sinceSeconds).toBeGreaterThanOrEqual(onAt);
  // The same for the turn-off's moment against the turn-on's.
  await page.waitForTimeout(2100);
  const offAt = now();
  const headerSwitch = page.getByRole('banner').getByRole('switch', { name: 'Private DNS' });
  await headerSwitch.click();
  await page.getByRole('group', { name: 'Turn private DNS off for' }).getByRole('button', { name: 'Until I resume' }).click();
  await expect(dashboard.banner).toHaveAttribute('data-state', 'off');
  await expect.poll(sinceSeconds).toBeGreaterThanOrEqual(offAt);
});
