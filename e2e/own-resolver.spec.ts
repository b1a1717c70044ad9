/**
 * The network's own encrypted resolver, offered in the Network view (issue
 * 33, item 5; RFC 9462, DDR), as a user sees it, against the real proxy and
 * two real unbounds on loopback: the user's own resolver (dns.test), and the
 * network's designated one (dns.lab.test, a certificate from the test CA).
 * The network's memory holds, from before this run, what the check wrote
 * when it asked this network's resolver (its gateway here; the namespace lab,
 * proxy/network/ddr-lab.test.ts, runs the check itself): a designation
 * verified for that address. The card offers it; nothing switches until the
 * user clicks "Use it on this network"; then it is the resolver in use; a
 * resolver picked on the Resolvers page runs instead and the network's
 * choice is kept (the page says a rejoin goes back to it); "Stop using it
 * here" forgets it. Screenshots of the offer and of it in use.
 */
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { test as base } from '@playwright/test';
import { gatewayAddress, networkKey } from '../proxy/network/network-key.js';
import { leafFrom, testPki } from '../test-support/certs.js';
import { startUnbound, type UnboundServer } from '../test-support/unbound.js';
import { Dashboard } from './support/dashboard.js';
import { expect } from './support/fixtures.js';
import { ProxyProcess, tempDir } from './support/lab.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).options({ rules: { 'label-content-name-mismatch': { enabled: true } } }).analyze();
  return result.violations.map((v) => `${v.impact ?? '?'} ${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

interface Rig {
  readonly proxy: ProxyProcess;
  readonly file: string;
  readonly here: string | null;
  readonly own: UnboundServer;
  readonly asked: string;
}

const test = base.extend<{ rig: Rig }>({
  // eslint-disable-next-line no-empty-pattern
  rig: async ({}, use) => {
    const here = networkKey();
    // The network's resolver as on a home network: its gateway (the check asked it; the lab test runs the check itself).
    const asked = gatewayAddress() ?? '192.168.1.1';
    const upstream: UnboundServer = await startUnbound({ names: 20 });
    const cert = leafFrom(testPki(), 'e2e-network-resolver', ['dns.lab.test'], ['127.0.0.1', asked]);
    const own: UnboundServer = await startUnbound({ names: 0, tls: { ...cert, name: 'dns.lab.test' }, extra: { 'only-here.lab.test.': '10.53.1.77' } });
    const configDir = tempDir('dotstub-e2e-own-resolver-');
    const file = path.join(configDir, 'networks.json');
    const at = new Date(Date.UTC(2026, 11, 1, 9, 30)).toISOString();
    if (here) {
      fs.writeFileSync(
        file,
        JSON.stringify({
          version: 1,
          networks: {
            [here]: {
              // The proxy labels it as it is on this machine (its gateway, or the Wi-Fi's name).
              label: 'Home Wi-Fi', worked: 'dot', firstSeenAt: at, seenAt: at,
              ddr: {
                checkedAt: at, asked, detail: `dns.lab.test verified for ${asked}`,
                offer: { name: 'dns.lab.test', protocol: 'dot', port: own.port, addresses: ['127.0.0.1'], verifiedFor: asked },
              },
            },
          },
        }),
        { mode: 0o600 },
      );
    }
    const proxy = new ProxyProcess(configDir);
    try {
      await proxy.start(upstream);
      await use({ proxy, file, here, own, asked });
    } finally {
      await proxy.stop();
      await own.stop();
      await upstream.stop();
      fs.rmSync(configDir, { recursive: true, force: true });
    }
  },
});

test("this network's own encrypted resolver: offered on its card, verified for the network resolver's address; used only once the user clicks; a pick on the Resolvers page keeps the choice; left again", async ({ rig, page }) => {
  const { proxy, file, here, asked } = rig;
  test.skip(here === null, 'this machine has no default gateway: no network to be on');
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.setViewportSize({ width: 1280, height: 900 });
  const dashboard = new Dashboard(page);
  await dashboard.open(proxy.dashboardUrl);
  await expect(dashboard.banner).toHaveAttribute('data-state', 'private');
  await dashboard.goTo('Network');

  const card = page.getByTestId('network-memory').locator('[data-testid="remembered-network"][aria-current="true"]');
  const fact = card.getByTestId('own-resolver');
  await expect(fact).toHaveAttribute('data-kind', 'offer');
  await expect(card).toContainText('Offers encrypted DNS');
  await expect(fact).toContainText(`This network offers its own encrypted resolver: dns.lab.test (DNS-over-TLS, verified for ${asked})`);
  await expect(fact).toContainText(`Its certificate names ${asked}, the address of this network’s resolver, and dns.lab.test`);
  // An offer only: the user's own resolver carries the lookups.
  const status = (): Promise<{ resolver: { id: string; label: string } }> => proxy.api('GET', '/api/status');
  const own = (await status()).resolver;
  expect(own.id).toMatch(/^custom:127\.0\.0\.1:/);
  await card.screenshot({ path: path.join(SHOTS, 'network-own-resolver-offer-card-1280-light.png') });
  await page.screenshot({ path: path.join(SHOTS, 'network-own-resolver-offer-1280-light.png'), fullPage: true });
  expect(await violations(page)).toEqual([]);

  // "Use it on this network": remembered for it, and the lookups go there at once.
  await card.getByRole('button', { name: 'Use it on this network' }).click();
  await expect(fact).toHaveAttribute('data-kind', 'in-use');
  await expect(fact).toContainText('Using this network’s own encrypted resolver: dns.lab.test');
  await expect.poll(async () => (await status()).resolver.label).toBe("dns.lab.test (this network's own)");
  const memory = (): { ownResolver?: string } => (JSON.parse(fs.readFileSync(file, 'utf8')) as { networks: Record<string, { ownResolver?: string }> }).networks[here as string] ?? {};
  expect(memory().ownResolver).toBe('use');
  await card.screenshot({ path: path.join(SHOTS, 'network-own-resolver-in-use-card-1280-light.png') });
  // The Resolvers page says what carries the lookups here (it is not one of its cards), and where the user's own choice applies.
  await dashboard.goTo('Resolvers');
  const inUse = page.getByTestId('network-own-in-use');
  await expect(inUse).toContainText("In use on this network: dns.lab.test (this network's own), its own encrypted resolver, as you chose for it.");
  await expect(inUse).toContainText('is your choice on every other network');
  await expect(page.getByRole('listitem').filter({ has: page.getByTestId('chosen-elsewhere') })).toHaveCount(1);
  await expect(page.locator('.resolver-card[aria-current="true"]')).toHaveCount(0);
  await page.screenshot({ path: path.join(SHOTS, 'resolvers-network-own-in-use-1280-light.png'), fullPage: true });
  // Picking a resolver there uses it now and, as the line says, keeps the network's choice for the next join.
  await dashboard.switchResolver(own.label);
  await expect.poll(async () => (await status()).resolver.id).toBe(own.id);
  await expect(inUse).toHaveCount(0);
  expect(memory().ownResolver).toBe('use');
  await dashboard.goTo('Network');
  await expect(fact).toHaveAttribute('data-kind', 'chosen');
  await expect(fact).toContainText('This network’s own encrypted resolver is your choice here: dns.lab.test');

  // "Stop using it here": the choice forgotten, the user's own stays.
  await card.getByRole('button', { name: 'Stop using it here' }).click();
  await expect(fact).toHaveAttribute('data-kind', 'offer');
  await expect.poll(async () => (await status()).resolver.id).toBe(own.id);
  expect(memory().ownResolver).toBeUndefined();
  expect(errors).toEqual([]);
});
