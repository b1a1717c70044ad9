import path from 'node:path';
import fs from 'node:fs';
import { expect, test } from './support/fixtures.js';

const IP = /^\d+\.\d+\.\d+\.\d+$/;

test.describe('dashboard against the real proxy and unbound', () => {
  test('queries sent with dig appear live with their latencies', async ({ lab, dashboard }) => {
    await expect(dashboard.banner).toContainText('Your DNS is private');
    await expect(dashboard.banner).toContainText('Only encrypted DNS to');
    await dashboard.goTo('Queries');
    expect(lab.dig('n1.test').answers).toEqual(['192.0.2.2']);
    expect(lab.dig('n2.test', 'AAAA').status).toBe('NOERROR');
    expect(lab.dig('missing.test').status).toBe('NXDOMAIN');

    const n1 = dashboard.row('n1.test');
    await expect(n1).toHaveCount(1);
    await expect(n1.getByRole('gridcell').nth(2)).toHaveText('A');
    await expect(n1.getByRole('gridcell').nth(3)).toHaveText('NOERROR');
    await expect(n1.getByRole('gridcell').nth(4)).toHaveText(/^\d+(\.\d+)? (ms|s)$/);
    await expect(dashboard.row('missing.test').getByRole('gridcell').nth(3)).toHaveText(/NXDOMAIN/);
    await expect(dashboard.row('n2.test').getByRole('gridcell').nth(2)).toHaveText('AAAA');

    // A row opens its timing breakdown; the keyboard works too.
    await dashboard.openQuery('n1.test');
    const timing = dashboard.queryDetail.getByRole('table', { name: 'Timing breakdown' });
    await expect(timing.getByRole('row', { name: /Queue wait/ })).toBeVisible();
    await expect(timing.getByRole('row', { name: /Upstream/ })).toContainText(/ms/);
    await dashboard.page.keyboard.press('Escape');
    await expect(dashboard.queryDetail).toBeHidden();
    await dashboard.queryLog.focus();
    await dashboard.page.keyboard.press('Home');
    await dashboard.page.keyboard.press('Enter');
    await expect(dashboard.queryDetail.getByRole('heading', { level: 3 })).toContainText('missing.test');
  });

  test('the log filters by name, type, response and slowness, and pauses', async ({ lab, dashboard }) => {
    await dashboard.goTo('Queries');
    lab.digMany(['n1.test', 'n2.test', 'n3.test', 'n11.test']);
    lab.dig('n1.test', 'AAAA');
    lab.dig('missing.test');
    await expect(dashboard.logRows).toHaveCount(6);

    await dashboard.filterByName('n1');
    await expect(dashboard.logRows).toHaveCount(3); // n1 A, n1 AAAA, n11
    await dashboard.filterByType('AAAA');
    await expect(dashboard.logRows).toHaveCount(1);
    await expect(dashboard.logRows.first()).toContainText('n1.test');
    await dashboard.clearFilters();
    await expect(dashboard.logRows).toHaveCount(6);

    await dashboard.rcodeFilter.selectOption('NXDOMAIN');
    await expect(dashboard.logRows).toHaveCount(1);
    await expect(dashboard.logRows.first()).toContainText('missing.test');
    await dashboard.clearFilters();

    // Nothing on loopback takes 10 s: slow-only at that threshold shows none.
    await dashboard.page.getByRole('spinbutton', { name: 'Slow threshold in milliseconds' }).fill('10000');
    await dashboard.slowOnly.check();
    await expect(dashboard.logRows).toHaveCount(0);
    await expect(dashboard.queryLog).toContainText('No queries match these filters.');
    await dashboard.clearFilters();

    // Paused: new queries are counted, not shown, until resumed.
    await dashboard.pauseButton.click();
    await expect(dashboard.pauseButton).toHaveAttribute('aria-pressed', 'true');
    lab.digMany(['n4.test', 'n5.test']);
    await expect(dashboard.page.getByText(/Paused · 2 new/)).toBeVisible();
    await expect(dashboard.logRows).toHaveCount(6);
    await dashboard.pauseButton.click();
    await expect(dashboard.logRows).toHaveCount(8);
  });

  test('switching between two real upstreams changes the connection and loses no query', async ({ lab, dashboard }) => {
    const second = await lab.secondUpstream('10.0.0.2');
    expect(lab.dig('which.test').answers).toEqual(['10.0.0.1']);

    await dashboard.goTo('Resolvers');
    await dashboard.addResolver({ label: 'Lab resolver B', address: '127.0.0.1', port: second.port, authName: 'dns.test' });
    await expect(dashboard.page.getByText('Added Lab resolver B.')).toBeVisible();

    // Queries keep flowing while the switch happens.
    const names = Array.from({ length: 400 }, (_, i) => `n${i % 50}.test`);
    const load = lab.digManyAsync(names);
    await dashboard.switchResolver('Lab resolver B');
    await expect(dashboard.page.getByText(/Now using Lab resolver B: connection #\d+ to 127\.0\.0\.1/)).toBeVisible();
    const answers = (await load).split('\n').filter((l) => IP.test(l.trim()));
    expect(answers.length, 'every query during the switch was answered').toBe(names.length);

    expect(lab.dig('which.test').answers).toEqual(['10.0.0.2']);
    await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'Lab resolver B' })).toContainText('in use');
    await expect(dashboard.banner).toContainText('Lab resolver B');

    await dashboard.goTo('Connections');
    await expect(dashboard.connectionsTable.getByRole('row').filter({ hasText: 'Lab resolver B' })).toHaveCount(1);
    await expect(dashboard.connectionsTable.getByRole('row').filter({ hasText: 'dns.test (127.0.0.1)' })).toHaveCount(0);

    await dashboard.goTo('Events');
    await expect(dashboard.events).toContainText('Resolver switched from');
    await expect(dashboard.events).toContainText(/Connection #\d+ opened to Lab resolver B/);
  });

  test('when the upstream stops the banner says so and why, then it comes back', async ({ lab, dashboard }) => {
    await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
    await lab.stopUpstream();
    // A query finds the resolver gone: it must still get an answer (SERVFAIL), never silence.
    expect(['SERVFAIL', 'NOERROR']).toContain(lab.dig('n1.test').status);
    await expect(dashboard.banner).toHaveAttribute('data-state', 'blocked');
    await expect(dashboard.banner).toContainText('DNS is stopped to keep it private');
    await expect(dashboard.banner.getByTestId('banner-reason')).toContainText(/retrying/);
    await expect(dashboard.banner.getByTestId('banner-leaves')).toContainText(/^Nothing/);
    await dashboard.page.screenshot({ path: path.join(import.meta.dirname, 'screenshots', 'banner-blocked-light.png') });

    await lab.restartUpstream();
    await expect(dashboard.banner).toHaveAttribute('data-state', 'private', { timeout: 30_000 });
    await expect(dashboard.banner).toContainText('Your DNS is private');
    expect(lab.dig('n1.test').answers).toEqual(['192.0.2.2']);

    await dashboard.goTo('Events');
    await expect(dashboard.events).toContainText('Privacy: Private → Blocked');
    await expect(dashboard.events).toContainText('Privacy: Blocked → Private');
  });

  test('a changed setting survives a proxy restart', async ({ lab, dashboard, page }) => {
    await dashboard.goTo('Settings');
    await dashboard.fillSetting('Idle timeout', 'soon');
    await expect(page.getByText('Use a whole number of seconds')).toBeVisible();
    await expect(page.getByRole('textbox', { name: 'Idle timeout' })).toHaveAttribute('aria-invalid', 'true');
    await dashboard.fillSetting('Idle timeout', '45');
    await dashboard.setRecordNames(false);
    await dashboard.saveSettings();
    await expect(page.getByRole('status').filter({ hasText: 'Saved. The proxy uses the new settings' })).toBeVisible();

    await lab.restartProxy();
    await dashboard.open(lab.proxy.dashboardUrl);
    await dashboard.goTo('Settings');
    await expect(page.getByRole('textbox', { name: 'Idle timeout' })).toHaveValue('45');
    await expect(page.getByRole('switch', { name: 'Record names in the query log' })).not.toBeChecked();

    // And it is in force: the log keeps timings but no names.
    lab.dig('n7.test');
    await dashboard.goTo('Queries');
    await expect(dashboard.row('(name not recorded)')).toHaveCount(1);
    await expect(dashboard.queryLog).not.toContainText('n7.test');
  });

  test('export CSV of the query log, with the filters applied', async ({ lab, dashboard }) => {
    await dashboard.goTo('Queries');
    lab.digMany(['n1.test', 'n2.test', 'n3.test']);
    lab.dig('missing.test');
    await expect(dashboard.logRows).toHaveCount(4);

    const all = await dashboard.exportCsv();
    const text = fs.readFileSync(await all.path(), 'utf8').trim();
    const [header, ...rows] = text.split(/\r?\n/);
    expect(header).toMatch(/name/);
    expect(header).toMatch(/rcode/);
    expect(rows).toHaveLength(4);
    for (const n of ['n1.test', 'n2.test', 'n3.test', 'missing.test']) expect(rows.some((r) => r.includes(n))).toBe(true);
    expect(rows.find((r) => r.includes('missing.test'))).toContain('NXDOMAIN');

    await dashboard.filterByName('n2');
    await expect(dashboard.logRows).toHaveCount(1);
    const filtered = await dashboard.exportCsv();
    const fRows = fs.readFileSync(await filtered.path(), 'utf8').trim().split(/\r?\n/).slice(1);
    expect(fRows).toHaveLength(1);
    expect(fRows[0]).toContain('n2.test');
  });
});
