/**
 * Local names in the dashboard (issue 21 items 2 and 4), against the real
 * proxy with routing by name owner on, reading a copy of the system files
 * (a temp root: this machine's resolver is never asked, nor its resolved or
 * NetworkManager): the copy's resolv.conf names a stand-in LAN resolver of
 * the test's own (unbound on loopback, owning `lan`). Before private DNS is
 * on, the banner says lookups can go around dotstub and names where; once
 * on, "0 leaked since HH:MM across N network changes". Local names are
 * marked in the query log, counted on the banner, and the banner's link
 * opens the log filtered to them.
 */
import { AxeBuilder } from '@axe-core/playwright';
import fs from 'node:fs';
import path from 'node:path';
import { startUnbound } from '../test-support/unbound.js';
import { expect, test } from './support/fixtures.js';
import { tempDir } from './support/lab.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

test('local names: marked in the log, counted on the banner, filtered by its link; the leak line says what was measured', async ({ lab, dashboard, page }) => {
  const lan = await startUnbound({ names: 0, extra: { 'printer.lan.': '10.99.0.7', 'nas.lan.': '10.99.0.8' } });
  lab.onCleanup(() => lan.stop());
  const root = tempDir('dotstub-e2e-local-');
  lab.onCleanup(async () => fs.rmSync(root, { recursive: true, force: true }));
  fs.mkdirSync(path.join(root, 'etc'));
  fs.writeFileSync(path.join(root, 'etc', 'resolv.conf'), `# from DHCP\nnameserver 127.0.0.1:${lan.port}\nsearch lan\n`);

  // Routing on for this proxy only (the rig sets DOTSTUB_NAME_ROUTING=off): it reads the temp root, never this machine's network.
  await lab.proxy.stop();
  const before = process.env.DOTSTUB_NAME_ROUTING;
  process.env.DOTSTUB_NAME_ROUTING = 'on';
  try {
    await lab.proxy.start(lab.upstream, ['--system-dns', '--system-dns-root', root, '--system-dns-state-dir', lab.proxy.configDir]);
  } finally {
    process.env.DOTSTUB_NAME_ROUTING = before;
  }
  await dashboard.open(lab.proxy.dashboardUrl);

  // Not taken over yet: the copy's resolv.conf sends programs to the LAN's resolver, and the banner says so instead of a figure.
  const leaks = page.getByTestId('banner-leaks');
  await expect(leaks).toHaveText(
    `bypass possible: ${path.join(root, 'etc', 'resolv.conf')} names 127.0.0.1:${lan.port}, a local forwarder dotstub doesn't control (NetworkManager's dnsmasq, or another stub), and not dotstub: lookups sent there go around dotstub. To fix: turn private DNS on for this machine (System DNS).`,
  );
  await expect(page.getByTestId('banner-local')).toHaveCount(0);
  await page.setViewportSize({ width: 1280, height: 900 });
  await dashboard.banner.screenshot({ path: path.join(SHOTS, 'local-names-banner-bypass-1280-light.png') });

  const origin = new URL(lab.proxy.dashboardUrl).origin;
  const headers = { Authorization: `Bearer ${lab.proxy.ready.token}` };
  await dashboard.goTo('System DNS');
  const enabledAt = Date.now();
  await dashboard.enablePrivateDns();
  // The reading the takeover caused (its own timestamp), then the line on screen: within 2 s of it, never a 15 s refresh.
  const checkedAt = async (): Promise<number> => ((await (await fetch(`${origin}/api/status`, { headers })).json()) as { leaks: { checkedAt: number | null } }).leaks.checkedAt ?? 0;
  await expect.poll(checkedAt, { timeout: 5_000 }).toBeGreaterThanOrEqual(enabledAt);
  await expect(leaks).toHaveText(/^0 leaked since \d\d:\d\d across 0 network changes$/, { timeout: 2_000 });

  // Strict mode sends local names nowhere until they are allowed for this network (the Network view's choice; here through the API).
  const allowed = await fetch(`${origin}/api/network/local-names`, { method: 'PUT', headers: { ...headers, Origin: origin, 'Content-Type': 'application/json' }, body: JSON.stringify({ allow: true }) });
  expect(allowed.status).toBe(200);
  // The journal keeps the LAN's resolver: printer.lan goes there (unencrypted, as the OS did), which.test to the chosen resolver.
  await expect.poll(() => lab.dig('printer.lan').answers, { timeout: 10_000 }).toEqual(['10.99.0.7']);
  expect(lab.dig('nas.lan').answers).toEqual(['10.99.0.8']);
  expect(lab.dig('printer.lan').answers).toEqual(['10.99.0.7']);
  expect(lab.dig('which.test').answers).toEqual(['10.0.0.1']);
  expect(lab.dig('tv.local').status).toBe('NXDOMAIN');
  expect(lab.dig('www.public.test.lan').status).toBe('NXDOMAIN');

  const local = page.getByTestId('banner-local');
  await expect(local).toHaveText('3 lookups answered by your network’s own resolver, unencrypted Show them →');

  await dashboard.goTo('Queries');
  await expect(dashboard.row('which.test')).toHaveCount(1);
  const printer = dashboard.row('printer.lan').first();
  await expect(printer.getByTestId('route-badge')).toHaveText('local · your network’s resolver, unencrypted');
  await expect(printer.getByRole('gridcell').nth(1)).toHaveAttribute('title', `printer.lan: local · your network’s resolver, unencrypted (the network · 127.0.0.1:${lan.port})`);
  await expect(printer).toContainText('unencrypted');
  await expect(printer).toContainText('your network’s resolver');
  await expect(dashboard.row('tv.local').getByTestId('route-badge')).toContainText('answered here');
  await expect(dashboard.row('which.test').getByTestId('route-badge')).toHaveCount(0);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.screenshot({ path: path.join(SHOTS, 'local-names-log-1280-light.png'), fullPage: true });

  await dashboard.openQuery('tv.local');
  await expect(page.getByTestId('route-notice')).toContainText('answered here, never sent: ');
  await dashboard.openQuery('printer.lan');
  await expect(page.getByTestId('route-notice')).toHaveText(`local · your network’s resolver, unencrypted (the network · 127.0.0.1:${lan.port})`);
  await expect(dashboard.queryDetail).toContainText('a name under lan, which the network owns');
  await page.screenshot({ path: path.join(SHOTS, 'local-names-detail-1280-light.png'), fullPage: true });
  await page.getByRole('button', { name: 'Close query details' }).click();

  // The banner's link: the log, filtered to the names your network's resolver answered.
  await dashboard.goTo('Overview');
  await local.getByRole('link', { name: 'Show them →' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Query log');
  await expect(page.getByRole('combobox', { name: 'Filter by where it was sent' })).toHaveValue('link');
  await expect(dashboard.logRows).toHaveCount(3);
  await expect(dashboard.row('which.test')).toHaveCount(0);

  await page.setViewportSize({ width: 420, height: 900 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect(dashboard.row('printer.lan').first().getByTestId('route-badge')).toBeVisible();
  await page.screenshot({ path: path.join(SHOTS, 'local-names-log-420-dark.png'), fullPage: true });
  // The marks, the banner's lines and the filter pass axe, dark and light, the detail open too.
  const axe = async (): Promise<string[]> => (await new AxeBuilder({ page }).analyze()).violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(await axe()).toEqual([]);
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole('combobox', { name: 'Filter by where it was sent' }).selectOption('');
  await dashboard.openQuery('printer.lan');
  expect(await axe()).toEqual([]);
  await page.emulateMedia({ colorScheme: 'dark' });
  expect(await axe()).toEqual([]);
  await page.emulateMedia({ colorScheme: 'light' });

  // The API carries the route, and the proxy's CSV export too.
  const api = `${origin}/api`;
  const pageJson = (await (await fetch(`${api}/queries?route=link`, { headers })).json()) as { total: number; records: { name: string; route?: { kind: string; servers: string } }[] };
  expect(pageJson.total).toBe(3);
  expect(pageJson.records[0]?.route).toMatchObject({ kind: 'link', servers: `127.0.0.1:${lan.port}` });
  const csv = await (await fetch(`${api}/queries/export?format=csv&route=local`, { headers })).text();
  expect(csv.split('\r\n')[0]).toMatch(/,route,routeLink,routeServers,routeSuffix,routeSource,routeWhy,internal$/);
  expect(csv).toContain(`,link,the network,127.0.0.1:${lan.port},lan,`);
});
