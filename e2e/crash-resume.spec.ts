/**
 * A crash does not silently end private DNS (issue 29, "What a newcomer
 * saw" 1). The desktop-app case: a proxy started with --system-dns (no
 * service), private DNS turned on from the page, then the proxy is killed
 * (SIGKILL: nothing of dotstub's own runs). The watchdog gives the old DNS
 * back within seconds (never a machine without DNS); the next start takes
 * it over again, says in words what happened, and the events from before
 * the crash are still there. All on a copy of the system files (a temp
 * root): this machine's DNS is never touched.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from './support/fixtures.js';
import { tempDir } from './support/lab.js';

const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\nsearch lab.test\n';

test('killed while private DNS is on: the old DNS comes back meanwhile, the next start turns private DNS back on and says why, the events survive', async ({ lab, dashboard, page }) => {
  const root = tempDir('dotstub-e2e-crash-');
  lab.onCleanup(async () => fs.rmSync(root, { recursive: true, force: true }));
  fs.mkdirSync(path.join(root, 'etc'));
  const resolvConf = path.join(root, 'etc', 'resolv.conf');
  fs.writeFileSync(resolvConf, ORIGINAL);
  const args = ['--system-dns', '--system-dns-root', root, '--system-dns-state-dir', path.join(root, 'state')];
  await lab.proxy.stop();
  await lab.proxy.start(lab.upstream, args);
  await dashboard.open(lab.proxy.dashboardUrl);
  await dashboard.goTo('System DNS');
  await dashboard.enablePrivateDns();
  await expect(page.getByRole('heading', { name: 'Private DNS is on for this machine' })).toBeVisible();
  expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);
  await dashboard.goTo('Events');
  await expect(dashboard.events).toContainText('Privacy: Off → Private');
  const before = await dashboard.events.getByRole('listitem').count();

  await lab.proxy.kill();
  // Never a machine without DNS: the watchdog (its own process) gives the old file back, byte for byte.
  await expect.poll(() => fs.readFileSync(resolvConf, 'utf8'), { timeout: 15_000 }).toBe(ORIGINAL);

  await lab.proxy.start(lab.upstream, args);
  // The choice was "on" when the crash ended it: taken over again at start.
  expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);
  await dashboard.open(lab.proxy.dashboardUrl);
  await dashboard.goTo('System DNS');
  await expect(page.getByRole('heading', { name: 'Private DNS is on for this machine' })).toBeVisible();
  await expect(page.getByTestId('sysdns-reason')).toContainText(/private DNS was turned back on at \d\d:\d\d: dotstub \(process \d+\) stopped unexpectedly at \d\d:\d\d, and the old DNS had been given back meanwhile/);
  await expect(dashboard.banner).toContainText(/private/i);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: path.join(import.meta.dirname, 'screenshots', 'crash-resumed-system-dns-1280-light.png'), fullPage: true });

  // The history from before the crash is still there, and the resume is in it, in words.
  await dashboard.goTo('Events');
  await expect(dashboard.events).toContainText('turned back on');
  expect(await dashboard.events.getByRole('listitem').count()).toBeGreaterThan(before);
  // The start's and the enable's (from before the crash) and the resume's.
  await expect(dashboard.events.getByRole('listitem').filter({ hasText: 'Privacy: Off → Private' })).toHaveCount(3);
  await page.screenshot({ path: path.join(import.meta.dirname, 'screenshots', 'crash-resumed-events-1280-light.png'), fullPage: true });

  // Turned off by the user: a later start leaves it off (a user's "off" is never undone).
  await dashboard.goTo('System DNS');
  await dashboard.disablePrivateDns();
  expect(fs.readFileSync(resolvConf, 'utf8')).toBe(ORIGINAL);
  await lab.proxy.stop();
  await lab.proxy.start(lab.upstream, args);
  expect(fs.readFileSync(resolvConf, 'utf8')).toBe(ORIGINAL);
});
