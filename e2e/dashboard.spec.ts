import { expect, test } from './support/fixtures.js';

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

    // A row opens its timing breakdown.
    await dashboard.openQuery('n1.test');
    const timing = dashboard.queryDetail.getByRole('table', { name: 'Timing breakdown' });
    await expect(timing.getByRole('row', { name: /Queue wait/ })).toBeVisible();
    await expect(timing.getByRole('row', { name: /Upstream/ })).toContainText(/ms/);
  });
});
