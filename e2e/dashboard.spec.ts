import path from 'node:path';
import fs from 'node:fs';
import { UdpClient } from '../test-support/dns-client.js';
import { Dashboard } from './support/dashboard.js';
import { expect, test } from './support/fixtures.js';

const IP = /^\d+\.\d+\.\d+\.\d+$/;

/** `count` distinct questions sent at once over UDP (what a page load does), each waited for. */
async function burstOf(port: number, count: number): Promise<{ answered: number }> {
  const client = await UdpClient.open(port);
  try {
    const asked = Array.from({ length: count }, (_, i) => client.query(`burst${i}.test`, { timeoutMs: 5000 }).then((a) => a.rcode === 'NXDOMAIN' || a.rcode === 'NOERROR'));
    const ok = await Promise.all(asked);
    return { answered: ok.filter(Boolean).length };
  } finally {
    client.close();
  }
}

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
    await expect(dashboard.logCell(n1, 'type')).toHaveText('A');
    await expect(dashboard.logCell(n1, 'response')).toHaveText('NOERROR');
    await expect(dashboard.logCell(n1, 'time')).toHaveText(/^\d+(\.\d+)? (ms|s)$/);
    await expect(dashboard.logCell(dashboard.row('missing.test'), 'response')).toHaveText(/NXDOMAIN/);
    await expect(dashboard.logCell(dashboard.row('n2.test'), 'type')).toHaveText('AAAA');

    // A row opens its timing breakdown; the keyboard works too.
    await dashboard.openQuery('n1.test');
    await expect(dashboard.timingRow(/Queue wait/)).toBeVisible();
    await expect(dashboard.timingRow(/Upstream/)).toContainText(/ms/);
    await dashboard.page.keyboard.press('Escape');
    await expect(dashboard.queryDetail).toBeHidden();
    await dashboard.queryLog.focus();
    await dashboard.page.keyboard.press('Home');
    await dashboard.page.keyboard.press('Enter');
    await expect(dashboard.queryDetail.getByRole('heading', { level: 2 })).toContainText('missing.test');
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
    await dashboard.slowThreshold.fill('10000');
    await dashboard.slowOnly.check();
    await expect(dashboard.logRows).toHaveCount(0);
    await expect(dashboard.queryLog).toContainText('No queries match these filters.');
    await dashboard.clearFilters();

    // Paused: new queries are counted, not shown, until resumed.
    await dashboard.pauseButton.click();
    await expect(dashboard.pauseButton).toHaveAttribute('aria-pressed', 'true');
    lab.digMany(['n4.test', 'n5.test']);
    await expect(dashboard.pausedNote(2)).toBeVisible();
    await expect(dashboard.logRows).toHaveCount(6);
    await dashboard.pauseButton.click();
    await expect(dashboard.logRows).toHaveCount(8);
  });

  test('switching between two real upstreams changes the connection and loses no query', async ({ lab, dashboard }) => {
    const second = await lab.secondUpstream('10.0.0.2');
    expect(lab.dig('which.test').answers).toEqual(['10.0.0.1']);

    await dashboard.goTo('Resolvers');
    await dashboard.addResolver({ label: 'Lab resolver B', address: '127.0.0.1', port: second.port, authName: 'dns.test' });
    await expect(dashboard.statusMessage('Added Lab resolver B.')).toBeVisible();

    // Queries keep flowing while the switch happens.
    const names = Array.from({ length: 400 }, (_, i) => `n${i % 50}.test`);
    const load = lab.digManyAsync(names);
    await dashboard.switchResolver('Lab resolver B');
    await expect(dashboard.statusMessage(/Now using Lab resolver B: connection #\d+ to 127\.0\.0\.1/)).toBeVisible();
    const answers = (await load).split('\n').filter((l) => IP.test(l.trim()));
    expect(answers.length, 'every query during the switch was answered').toBe(names.length);

    expect(lab.dig('which.test').answers).toEqual(['10.0.0.2']);
    await expect(dashboard.resolverCard('Lab resolver B')).toHaveAttribute('aria-current', 'true');
    // Both resolvers answered: their bars share a stated scale.
    await expect(dashboard.latencyScale).toHaveText(/a full bar is \d+ (ms|s)\.$/);
    await expect(dashboard.banner).toContainText('Lab resolver B');

    await dashboard.goTo('Connections');
    await expect(dashboard.connectionRow('Lab resolver B')).toHaveCount(1);
    // The key agreement in words: unbound here is built on OpenSSL 3.0 (no ML-KEM), so classical.
    await expect(dashboard.connectionRow('Lab resolver B').getByTestId('key-agreement')).toHaveText('Key agreement: X25519 (classical)');
    await expect(dashboard.connectionRow('dns.test (127.0.0.1)')).toHaveCount(0);

    await dashboard.goTo('Events');
    await expect(dashboard.events).toContainText('Resolver switched from');
    await expect(dashboard.events).toContainText(/Connection #\d+ opened to Lab resolver B/);
  });

  test('a burst of lookups opens extra connections: Connections marks them "burst" and Events says why', async ({ lab, dashboard }) => {
    await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
    // 100 names never asked before, at once (a page load): about four initial windows of padded answers.
    const burst = await burstOf(lab.proxy.dnsPort, 100);
    expect(burst.answered, 'every query of the burst answered').toBe(100);
    await dashboard.goTo('Connections');
    await expect(dashboard.connectionsTable.getByRole('rowheader').filter({ hasText: 'burst' }).first()).toBeVisible();
    await expect(dashboard.text('Connections for bursts')).toBeVisible();
    // What every lookup says of this machine's network (ECS with prefix 0), beside the padding.
    await expect(dashboard.text('Your subnet')).toBeVisible();
    await expect(dashboard.text('never sent')).toBeVisible();
    // Whether the resolver validates DNSSEC, measured: the rig's unbound has no validator, and the line says so.
    await expect(dashboard.text('DNSSEC', { exact: true })).toBeVisible();
    await expect(dashboard.text('not validated', { exact: true })).toBeVisible();
    await expect(dashboard.text(/does not validate DNSSEC: a signed name came back without the validated \(AD\) mark/)).toBeVisible();
    await dashboard.page.screenshot({ path: path.join(import.meta.dirname, 'screenshots', 'connections-burst-light.png'), fullPage: true });
    await dashboard.goTo('Events');
    await expect(dashboard.events).toContainText(/Connection #\d+ opened to .* for a burst of lookups/);
  });

  test('when the upstream stops the banner says so and why, then it comes back', async ({ lab, dashboard }) => {
    await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
    await lab.stopUpstream();
    // A query finds the resolver gone: it must still get an answer (SERVFAIL), never silence.
    expect(['SERVFAIL', 'NOERROR']).toContain(lab.dig('n1.test').status);
    await expect(dashboard.banner).toHaveAttribute('data-state', 'blocked');
    await expect(dashboard.banner).toContainText('Stopped — failing safe, no DNS');
    await expect(dashboard.banner.getByTestId('banner-reason')).toContainText(/retrying/);
    await expect(dashboard.banner.getByTestId('banner-leaves')).toContainText(/^Nothing/);
    await dashboard.page.screenshot({ path: path.join(import.meta.dirname, 'screenshots', 'banner-blocked-light.png') });
    // Fast SERVFAILs made up by the proxy are not the resolver's latency (issue 14, item 3).
    await expect(dashboard.tile('Latency p50 / p95')).toContainText('no answers');
    await dashboard.goTo('Resolvers');
    // Not "not measured": the card says the resolver was tried and failed, and when (issue 24 item 10).
    await expect(dashboard.currentResolver).toContainText(/unreachable: .* at \d\d:\d\d:\d\d/);
    await dashboard.goTo('Overview');

    await lab.restartUpstream();
    await expect(dashboard.banner).toHaveAttribute('data-state', 'private', { timeout: 30_000 });
    await expect(dashboard.banner).toContainText('Your DNS is private');
    expect(lab.dig('n1.test').answers).toEqual(['192.0.2.2']);

    await dashboard.goTo('Events');
    await expect(dashboard.events).toContainText('Privacy: Private → Stopped');
    await expect(dashboard.events).toContainText('Privacy: Stopped → Private');
  });

  test('a changed setting survives a proxy restart', async ({ lab, dashboard }) => {
    await dashboard.goTo('Settings');
    await dashboard.fillSetting('Idle timeout', 'soon');
    await expect(dashboard.text('Idle timeout must be a whole number from 1 to 86400 seconds.')).toBeVisible();
    await expect(dashboard.settingField('Idle timeout')).toHaveAttribute('aria-invalid', 'true');
    await dashboard.fillSetting('Idle timeout', '45');
    await dashboard.setRecordNames(false);
    await dashboard.saveSettings();
    await expect(dashboard.statusMessage('Saved. The proxy uses the new settings')).toBeVisible();

    await lab.restartProxy();
    await dashboard.open(lab.proxy.dashboardUrl);
    await dashboard.goTo('Settings');
    await expect(dashboard.settingField('Idle timeout')).toHaveValue('45');
    await expect(dashboard.settingSwitch('Record names in the query log')).not.toBeChecked();

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
    const resolverName = (await dashboard.logCell(dashboard.logRows.first(), 'resolver').textContent()) ?? '';
    expect(resolverName).not.toBe('');

    const all = await dashboard.exportCsv();
    const text = fs.readFileSync(await all.path(), 'utf8').trim();
    const [header, ...rows] = text.split(/\r?\n/);
    const columns = (header ?? '').split(',');
    expect(columns).toContain('name');
    expect(columns).toContain('rcode');
    expect(rows).toHaveLength(4);
    for (const n of ['n1.test', 'n2.test', 'n3.test', 'missing.test']) expect(rows.some((r) => r.includes(n))).toBe(true);
    expect(rows.find((r) => r.includes('missing.test'))).toContain('NXDOMAIN');
    // The resolver by the name the screen shows (issue 14, item 6).
    const resolverCol = columns.indexOf('resolver');
    for (const r of rows) expect(r.split(',')[resolverCol]?.replace(/^"|"$/g, '')).toBe(resolverName);

    await dashboard.filterByName('n2');
    await expect(dashboard.logRows).toHaveCount(1);
    const filtered = await dashboard.exportCsv();
    const fRows = fs.readFileSync(await filtered.path(), 'utf8').trim().split(/\r?\n/).slice(1);
    expect(fRows).toHaveLength(1);
    expect(fRows[0]).toContain('n2.test');
  });

  test('the export holds exactly what the screen counts: more than the proxy keeps, filtered, paused (issue 14, item 6)', async ({ lab, dashboard }) => {
    // The proxy keeps its smallest log (100 records); the page keeps 100,000.
    await dashboard.goTo('Settings');
    await dashboard.fillSetting('Query log size', '100');
    await dashboard.saveSettings();
    await expect(dashboard.statusMessage('Saved.')).toBeVisible();
    await dashboard.goTo('Queries');
    const names = Array.from({ length: 150 }, (_, i) => `n${(i % 50) + 1}.test`);
    lab.digMany(names);
    await expect(dashboard.logCount).toHaveText('150 queries held');
    const rowsOf = async (): Promise<string[]> => fs.readFileSync(await (await dashboard.exportCsv()).path(), 'utf8').trim().split(/\r?\n/).slice(1);
    expect(await rowsOf()).toHaveLength(150);

    await dashboard.filterByName('n1');
    // n1, n10…n19 of each 50: 11 × 3.
    await expect(dashboard.logCount).toHaveText('33 queries match (of 150 held)');
    const matched = await rowsOf();
    expect(matched).toHaveLength(33);
    for (const r of matched) expect(r).toMatch(/,n1\d?\.test,/);

    await dashboard.pauseButton.click();
    lab.digMany(['n1.test', 'n10.test']);
    await expect(dashboard.pausedNote(2)).toBeVisible();
    await expect(dashboard.logCount).toHaveText('33 queries match (of 152 held)');
    expect(await rowsOf()).toHaveLength(33);
  });
});

test.describe('a dashboard that says what it does not know (issue 14)', () => {
  test.describe('on a clock the test moves', () => {
    test.use({ pageClock: true });
    test('when dotstub stops, the banner stops claiming privacy within 3 s, freezes its figures and says how to start it', async ({ lab, dashboard }) => {
      lab.digMany(['n1.test', 'n2.test']);
      await expect(dashboard.banner).toContainText('Your DNS is private');
      await expect(dashboard.tile('Queries')).toContainText(/^Queries2/);
      const uptime = dashboard.tile('SERVFAILs');
      const t0 = Date.now();
      await lab.proxy.stop();
      const left = Math.max(0, 3000 - (Date.now() - t0));
      await expect(dashboard.banner).toContainText(/Can.t reach dotstub — status unknown since \d\d:\d\d:\d\d/, { timeout: left });
      await expect(dashboard.banner).toHaveAttribute('data-state', 'lost');
      await expect(dashboard.banner).not.toContainText('Your DNS is private');
      await expect(dashboard.banner).not.toContainText('Only encrypted DNS');
      await expect(dashboard.banner.getByTestId('banner-action')).toContainText('dotstub command');
      await expect(dashboard.liveIndicator).toHaveText('Not connected');
      await expect(dashboard.content).toHaveClass(/\bstale\b/);
      // Uptime no longer counts up for a proxy that isn't there: two seconds of the page's time, at once.
      const before = await uptime.textContent();
      await dashboard.page.clock.runFor(2200);
      expect(await uptime.textContent()).toBe(before);
    });
  });

  test('opened without its link, or with a stale one: says so and how to get a fresh link, no spinner, no API text', async ({ lab, page }) => {
    const d = new Dashboard(page);
    await page.goto(`${lab.proxy.ready.control}/`);
    await expect(d.banner).toContainText('Not signed in — privacy status unknown');
    await expect(d.banner.getByTestId('banner-detail')).toContainText('opened without its sign-in link');
    await expect(d.banner.getByTestId('banner-action')).toContainText('open its address with #token= and the contents of the token file its start line names');
    await expect(d.banner).not.toHaveAttribute('aria-busy', 'true');
    await expect(d.liveIndicator).toHaveText('Not signed in');
    // Sections show no zeros or "no events yet": nothing is known.
    await expect(d.sectionPlaceholder).toHaveText('Nothing to show until this page is signed in (see above).');
    await d.goTo('Queries');
    await expect(d.sectionPlaceholder).toBeVisible();
    await expect(d.content).not.toContainText('No queries yet');

    // A token of the right shape that this proxy never issued (a link from before the token changed),
    // pasted into the same tab: only the fragment changes, and the page signs in again by itself.
    await page.goto(`${lab.proxy.ready.control}/#token=${'A'.repeat(43)}`);
    await expect(d.banner.getByTestId('banner-detail')).toContainText('did not accept');
    expect(page.url()).not.toContain('AAAA');
    await expect(d.content).not.toContainText('Authorization');
    await expect(d.content).not.toContainText('unauthorized');
  });
});
