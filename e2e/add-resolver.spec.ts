/**
 * Adding a resolver says what is wrong, beside the field, and changes
 * nothing: at the address of the one in use (which used to rename it while
 * saying "Added"), a second try, and one strict mode can't verify.
 */
import { expect, test } from './support/fixtures.js';

test('adding a resolver at an address in use, or one strict mode cannot verify, is refused beside the field and renames nothing', async ({ lab, dashboard, page }) => {
  await dashboard.goTo('Resolvers');
  const form = page.getByRole('form', { name: 'Add a custom resolver' });
  const active = dashboard.resolverList.getByRole('listitem').filter({ has: page.getByText('in use', { exact: true }) });
  await expect(active).toContainText('dns.test (127.0.0.1)');

  for (let attempt = 0; attempt < 2; attempt++) {
    await dashboard.addResolver({ label: 'Lab B', address: '127.0.0.1', port: lab.upstream.port, authName: 'dns.test' });
    await expect(form.getByRole('alert')).toHaveText('Not added: one field needs a change (marked below).');
    await expect(form.getByRole('textbox', { name: 'Address', exact: true })).toHaveAccessibleDescription(
      `127.0.0.1:${lab.upstream.port} is already “dns.test (127.0.0.1)”, the resolver in use: use that one, or give a different address or port`,
    );
    await expect(form).not.toContainText('Added');
    await expect(active).toContainText('dns.test (127.0.0.1)');
    await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'Lab B' })).toHaveCount(0);
  }

  // Strict mode (the default): no authentication name and no pin.
  await form.getByRole('textbox', { name: 'Address', exact: true }).fill('127.0.0.9');
  await form.getByRole('textbox', { name: 'Authentication name' }).fill('');
  await form.getByRole('button', { name: 'Add resolver' }).click();
  await expect(form.getByRole('textbox', { name: 'Authentication name' })).toHaveAccessibleDescription(/^strict mode only uses resolvers it can verify/);
  await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: '127.0.0.9' })).toHaveCount(0);

  // Fixed: added, and said so.
  await form.getByRole('textbox', { name: 'Authentication name' }).fill('dns.test');
  await form.getByRole('button', { name: 'Add resolver' }).click();
  await expect(form.getByText('Added Lab B. Use it from the list above.')).toBeVisible();
  await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'Lab B' })).toContainText('127.0.0.9');
  await expect(active).toContainText('dns.test (127.0.0.1)');
});

test('the next resolver typed while the last one is still being added is kept: the list shows the new one (the stream) before the add answers, and the answer empties nothing typed since', async ({ dashboard, page }) => {
  await dashboard.goTo('Resolvers');
  const form = page.getByRole('form', { name: 'Add a custom resolver' });
  // The add's answer comes a second late (a loaded machine: CI saw the stream win this race and the typing wiped).
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  await page.route('**/api/resolvers', async (route) => {
    if (route.request().method() !== 'POST') return route.continue();
    const response = await route.fetch();
    await held;
    await route.fulfill({ response });
  });
  await dashboard.addResolver({ label: 'First lab', address: '127.0.0.21', port: 853, authName: 'dns.test' });
  await expect(dashboard.resolverList.getByRole('listitem').filter({ hasText: 'First lab' })).toBeVisible();
  // The next one, typed now.
  await form.getByRole('textbox', { name: 'Name', exact: true }).fill('Second lab');
  await form.getByRole('textbox', { name: 'Address', exact: true }).fill('127.0.0.22');
  release();
  await expect(form.getByText('Added First lab. Use it from the list above.')).toBeVisible();
  await expect(form.getByRole('textbox', { name: 'Name', exact: true })).toHaveValue('Second lab');
  await expect(form.getByRole('textbox', { name: 'Address', exact: true })).toHaveValue('127.0.0.22');
  await page.unroute('**/api/resolvers');
});
