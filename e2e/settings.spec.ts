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
  await expect(dashboard.text('Allowed: 100 to 100,000 records; e.g. 10,000.')).toBeVisible();
  await dashboard.fillSetting('Query log size', '4');
  await dashboard.fillSetting('Connections per resolver', '40');
  await expect(dashboard.settingField('Query log size')).toHaveAttribute('aria-invalid', 'true');
  await dashboard.saveSettings();
  await expect(dashboard.settingsErrors.getByRole('listitem')).toHaveText([
    'Connections per resolver: Connections per resolver must be at most 16 connections.',
    'Query log size: Query log size must be at least 100 records.',
  ]);
  await expect(dashboard.alert).toContainText('Nothing was saved.');
  await page.screenshot({ path: path.join(SHOTS, 'settings-errors-1440-light.png'), fullPage: true });
  // A listed error takes you to its field.
  await dashboard.settingsErrors.getByRole('link', { name: 'Query log size' }).click();
  await expect(dashboard.settingField('Query log size')).toBeFocused();

  // Nothing reached the proxy.
  await page.reload();
  await expect(dashboard.liveIndicator).toHaveText('Live');
  await expect(dashboard.settingField('Query log size')).toHaveValue('10000');
  await expect(dashboard.settingField('Connections per resolver')).toHaveValue('1');
});

test('leaving Settings with unsaved edits asks first: stay keeps them, leave discards them', async ({ dashboard, page }) => {
  await dashboard.goTo('Settings');
  await dashboard.fillSetting('Idle timeout', '45');
  await expect(dashboard.unsavedChanges).toHaveText('1 unsaved change');
  await dashboard.clickSection('Queries');
  await expect(dashboard.leaveGuard).toBeVisible();
  await expect(dashboard.leaveGuard).toHaveAccessibleName(/You have 1 unsaved change\. Leave Settings without saving\?/);
  await expect(dashboard.sectionHeading).toHaveText('Settings');
  await expect(dashboard.leaveGuardButton('Stay and keep editing')).toBeFocused();
  await page.screenshot({ path: path.join(SHOTS, 'settings-leave-guard-1440-light.png'), fullPage: true });
  await dashboard.leaveGuardButton('Stay and keep editing').click();
  await expect(dashboard.leaveGuard).toHaveCount(0);
  await expect(dashboard.settingField('Idle timeout')).toHaveValue('45');

  await dashboard.clickSection('Queries');
  await dashboard.leaveGuardButton('Discard changes and leave').click();
  await expect(dashboard.sectionHeading).toHaveText('Query log');
  await dashboard.goTo('Settings');
  await expect(dashboard.settingField('Idle timeout')).toHaveValue('60');
  // Saved edits leave without a question.
  await dashboard.fillSetting('Idle timeout', '50');
  await dashboard.saveSettings();
  await expect(dashboard.statusMessage('Saved.')).toBeVisible();
  await dashboard.goTo('Queries');
});

test('network DNS (the one server ever asked unencrypted) takes addresses only, and is kept', async ({ dashboard, page }) => {
  await dashboard.goTo('Settings');
  const field = dashboard.settingField('Network DNS');
  await field.fill('router.lan');
  await dashboard.saveSettings();
  await expect(dashboard.settingsErrors.getByRole('listitem')).toHaveText([
    'Network DNS: Network DNS must be addresses like 192.168.1.1, 192.168.1.1:53 or [fe80::1%wlan0]:53.',
  ]);
  await field.fill('192.168.1.1, [fe80::1%wlan0]:53');
  await dashboard.saveSettings();
  await expect(dashboard.statusMessage('Saved')).toBeVisible();
  await page.reload();
  await expect(dashboard.liveIndicator).toHaveText('Live');
  await expect(dashboard.settingField('Network DNS')).toHaveValue('192.168.1.1, [fe80::1%wlan0]:53');
  await expect(dashboard.settingSwitch('Check for Wi-Fi sign-in pages')).toBeChecked();
  await expect(dashboard.settingSwitch('Cleartext fallback (opportunistic mode only)')).not.toBeChecked();
});
