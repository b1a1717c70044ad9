/**
 * Settings validation in the form (issue 14), from the proxy's own schema:
 * ranges and realistic examples shown, every error listed with the field's
 * name as the form shows it, nothing saved while one is wrong; and a guard
 * against leaving with unsaved edits.
 */
import path from 'node:path';
import { expect, test } from './support/fixtures.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

test('errors are listed with human field names and ranges; nothing is saved until they are fixed', async ({ dashboard, page }) => {
  await dashboard.goTo('Settings');
  await expect(page.getByText('Allowed: 100 to 100,000 records; e.g. 10,000.')).toBeVisible();
  await dashboard.fillSetting('Query log size', '4');
  await dashboard.fillSetting('Connections per resolver', '40');
  await expect(page.getByRole('textbox', { name: 'Query log size' })).toHaveAttribute('aria-invalid', 'true');
  await dashboard.saveSettings();
  const errors = page.getByRole('list', { name: 'Settings to fix' });
  await expect(errors.getByRole('listitem')).toHaveText([
    'Connections per resolver: Connections per resolver must be at most 16 connections.',
    'Query log size: Query log size must be at least 100 records.',
  ]);
  await expect(page.getByRole('alert')).toContainText('Nothing was saved.');
  await page.screenshot({ path: path.join(SHOTS, 'settings-errors-1440-light.png'), fullPage: true });
  // A listed error takes you to its field.
  await errors.getByRole('link', { name: 'Query log size' }).click();
  await expect(page.getByRole('textbox', { name: 'Query log size' })).toBeFocused();

  // Nothing reached the proxy.
  await page.reload();
  await expect(dashboard.liveIndicator).toHaveText('Live');
  await expect(page.getByRole('textbox', { name: 'Query log size' })).toHaveValue('10000');
  await expect(page.getByRole('textbox', { name: 'Connections per resolver' })).toHaveValue('1');
});

test('leaving Settings with unsaved edits asks first: stay keeps them, leave discards them', async ({ dashboard, page }) => {
  await dashboard.goTo('Settings');
  await dashboard.fillSetting('Idle timeout', '45');
  await expect(page.getByTestId('unsaved')).toHaveText('1 unsaved change');
  await dashboard.nav.getByRole('link', { name: 'Queries' }).click();
  const guard = page.getByRole('alertdialog', { name: /You have 1 unsaved change\. Leave Settings without saving\?/ });
  await expect(guard).toBeVisible();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Settings');
  await expect(guard.getByRole('button', { name: 'Stay and keep editing' })).toBeFocused();
  await page.screenshot({ path: path.join(SHOTS, 'settings-leave-guard-1440-light.png'), fullPage: true });
  await guard.getByRole('button', { name: 'Stay and keep editing' }).click();
  await expect(guard).toHaveCount(0);
  await expect(page.getByRole('textbox', { name: 'Idle timeout' })).toHaveValue('45');

  await dashboard.nav.getByRole('link', { name: 'Queries' }).click();
  await page.getByRole('alertdialog').getByRole('button', { name: 'Discard changes and leave' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Query log');
  await dashboard.goTo('Settings');
  await expect(page.getByRole('textbox', { name: 'Idle timeout' })).toHaveValue('60');
  // Saved edits leave without a question.
  await dashboard.fillSetting('Idle timeout', '50');
  await dashboard.saveSettings();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await dashboard.goTo('Queries');
});

test('network DNS (the one server ever asked unencrypted) takes addresses only, and is kept', async ({ dashboard, page }) => {
  await dashboard.goTo('Settings');
  const field = page.getByRole('textbox', { name: 'Network DNS' });
  await field.fill('router.lan');
  await dashboard.saveSettings();
  await expect(page.getByRole('list', { name: 'Settings to fix' }).getByRole('listitem')).toHaveText([
    'Network DNS: Network DNS must be addresses like 192.168.1.1, 192.168.1.1:53 or [fe80::1%wlan0]:53.',
  ]);
  await field.fill('192.168.1.1, [fe80::1%wlan0]:53');
  await dashboard.saveSettings();
  await expect(page.getByRole('status').filter({ hasText: 'Saved' })).toBeVisible();
  await page.reload();
  await expect(dashboard.liveIndicator).toHaveText('Live');
  await expect(page.getByRole('textbox', { name: 'Network DNS' })).toHaveValue('192.168.1.1, [fe80::1%wlan0]:53');
  await expect(page.getByRole('switch', { name: 'Check for Wi-Fi sign-in pages' })).toBeChecked();
  await expect(page.getByRole('switch', { name: 'Cleartext fallback (opportunistic mode only)' })).not.toBeChecked();
});
