/**
 * The System DNS panel against a real proxy started with --system-dns on a
 * copy of the system files (a temp root: this machine's DNS is never
 * touched): off until enabled, the toggle points the copy at dotstub and
 * the banner turns private, the leak test says in words that nothing leaks,
 * disabling gives the file back byte for byte.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from './support/fixtures.js';
import { tempDir } from './support/lab.js';

const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\nnameserver fd00:99::1\nsearch lab.test\n';

test('enable private DNS for the machine, run the leak test, disable: the old file comes back', async ({ lab, dashboard, page }) => {
  const root = tempDir('dotstub-e2e-root-');
  lab.onCleanup(async () => fs.rmSync(root, { recursive: true, force: true }));
  fs.mkdirSync(path.join(root, 'etc'));
  const resolvConf = path.join(root, 'etc', 'resolv.conf');
  fs.writeFileSync(resolvConf, ORIGINAL);
  await lab.proxy.stop();
  await lab.proxy.start(lab.upstream, ['--system-dns', '--system-dns-root', root, '--system-dns-state-dir', path.join(root, 'state')]);
  await dashboard.open(lab.proxy.dashboardUrl);

  await dashboard.goTo('System DNS');
  await expect(page.getByRole('heading', { name: 'Private DNS is off for this machine' })).toBeVisible();
  await expect(page.getByTestId('sysdns-reason')).toContainText('not enabled for this machine');
  await expect(page.getByTestId('sysdns-backend')).toHaveText('/etc/resolv.conf, written directly');
  // The banner tells the truth: the upstream is verified, but the machine doesn't ask dotstub.
  await expect(dashboard.banner).toContainText(/off/i);

  await dashboard.enablePrivateDns();
  await expect(page.getByRole('heading', { name: 'Private DNS is on for this machine' })).toBeVisible();
  await expect(page.getByTestId('sysdns-changed')).toContainText('resolv.conf');
  expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);
  await expect(dashboard.banner).toContainText(/private/i);

  const result = await dashboard.runLeakTest();
  await expect(result).toContainText('No leak found');
  await expect(result).toContainText('reached dotstub');
  await expect(result).toContainText('The system knows no other resolver.');
  await expect(result).toContainText("Firefox's canary (use-application-dns.net) was answered by dotstub itself.");
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: path.join(import.meta.dirname, 'screenshots', 'system-dns-after-leak-test-1280-light.png'), fullPage: true });

  // Pause for 5 minutes: the old DNS is back at once, and the page says until when and what that means; resume.
  await page.getByRole('group', { name: 'Pause private DNS' }).getByRole('button', { name: '5 min' }).click();
  await expect(page.getByRole('heading', { name: /^Private DNS is paused until \d\d:\d\d$/ })).toBeVisible();
  await expect(page.getByTestId('sysdns-reason')).toContainText('asks its usual resolver, unencrypted');
  expect(fs.readFileSync(resolvConf, 'utf8')).toBe(ORIGINAL);
  await page.screenshot({ path: path.join(import.meta.dirname, 'screenshots', 'system-dns-paused-1280-light.png'), fullPage: true });
  await page.getByRole('switch', { name: 'Resume private DNS now' }).click();
  await expect(page.getByRole('heading', { name: 'Private DNS is on for this machine' })).toBeVisible();
  expect(fs.readFileSync(resolvConf, 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);

  await dashboard.disablePrivateDns();
  await expect(page.getByRole('heading', { name: 'Private DNS is off for this machine' })).toBeVisible();
  expect(fs.readFileSync(resolvConf, 'utf8')).toBe(ORIGINAL);
  expect(fs.existsSync(path.join(root, 'state', 'system-dns.journal.json'))).toBe(false);

  // After disabling, the same test says plainly that lookups bypass dotstub.
  const leaky = await dashboard.runLeakTest();
  await expect(leaky).toContainText('Lookups can leak past dotstub');
  await expect(leaky).toContainText('did NOT reach dotstub');
});

test('Events tell a pause from a turn-off: "Paused for 5 min (until HH:MM)", then "Turned off"', async ({ lab, dashboard, page }) => {
  const root = tempDir('dotstub-e2e-root-');
  lab.onCleanup(async () => fs.rmSync(root, { recursive: true, force: true }));
  fs.mkdirSync(path.join(root, 'etc'));
  fs.writeFileSync(path.join(root, 'etc', 'resolv.conf'), ORIGINAL);
  await lab.proxy.stop();
  await lab.proxy.start(lab.upstream, ['--system-dns', '--system-dns-root', root, '--system-dns-state-dir', path.join(root, 'state')]);
  await dashboard.open(lab.proxy.dashboardUrl);
  await dashboard.goTo('System DNS');
  await dashboard.enablePrivateDns();
  await expect(page.getByRole('heading', { name: 'Private DNS is on for this machine' })).toBeVisible();
  await page.getByRole('group', { name: 'Pause private DNS' }).getByRole('button', { name: '5 min' }).click();
  const heading = page.getByRole('heading', { name: /^Private DNS is paused until \d\d:\d\d$/ });
  await expect(heading).toBeVisible();
  const until = /until (\d\d:\d\d)$/.exec((await heading.textContent()) ?? '')?.[1];
  await page.getByRole('switch', { name: 'Resume private DNS now' }).click();
  await expect(page.getByRole('heading', { name: 'Private DNS is on for this machine' })).toBeVisible();
  await dashboard.disablePrivateDns();
  await expect(page.getByRole('heading', { name: 'Private DNS is off for this machine' })).toBeVisible();

  await dashboard.goTo('Events');
  const choices = dashboard.events.locator('.event-title').filter({ hasText: /^(Turned|Paused|Resumed)/ });
  // Newest first: the turn-off, the resume, the pause with its length and end, the turn-on.
  await expect(dashboard.events.getByRole('listitem').filter({ hasText: `Paused for 5 min (until ${until})` })).toHaveCount(1);
  await expect(dashboard.events.getByRole('listitem').filter({ hasText: 'Turned off' })).toHaveCount(1);
  await expect(dashboard.events.getByRole('listitem').filter({ hasText: 'Turned on' })).toHaveCount(1);
  await expect(choices).toHaveText(['Turned off', 'Resumed before the pause ended', `Paused for 5 min (until ${until})`, 'Turned on']);
  // The pause's line doesn't say "not enabled", which is the turn-off's.
  await expect(dashboard.events.getByRole('listitem').filter({ hasText: 'Paused for' })).not.toContainText('not enabled');
  await page.screenshot({ path: path.join(import.meta.dirname, 'screenshots', 'events-pause-and-off-1280-light.png') });
});
