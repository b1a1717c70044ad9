/**
 * A query sent again after its connection went silent (issue 32, the
 * hedge): the log says so on the row, on hover and in the query's detail,
 * so a person looking at a slow lookup sees why it took that long and
 * which connection answered. The resolver is a DoT server of our own (the
 * fault server) whose first connection loses its path (nothing on it is
 * answered or acknowledged) while a new one answers: a NAT that forgot one
 * connection, with no RST. Needs root and the sockopt addon (dropPath).
 */
import path from 'node:path';
import { testPki } from '../test-support/certs.js';
import { startFaultServer } from '../test-support/fault-server.js';
import { expect, test } from './support/fixtures.js';
import { painted } from './support/painted.js';

const SHOTS = path.join(import.meta.dirname, 'screenshots');

test('a query sent again after silence says so in the log row, on hover and in its detail', async ({ lab, dashboard, page }) => {
  test.setTimeout(60_000);
  const fault = await startFaultServer();
  lab.onCleanup(() => fault.stop());
  await lab.proxy.stop();
  await lab.proxy.start({ resolverArg: fault.resolverArg, pki: testPki() }, ['--cache-size', '0']);
  await dashboard.open(lab.proxy.dashboardUrl);
  await page.setViewportSize({ width: 1440, height: 900 });

  // A healthy connection first: the pool learns its round trip. Nothing is sent twice on it.
  // (dig runs beside the test: the fault server answers in this process.)
  expect((await lab.digManyAsync(Array.from({ length: 10 }, (_, i) => `q${i}.warm.test`))).trim().split('\n')).toHaveLength(10);
  await dashboard.goTo('Queries');
  await expect(dashboard.logCount).toHaveText('10 queries held');
  await expect(page.getByText('sent again')).toHaveCount(0);

  // The path forgets connection 1: the next query is sent again on a second one, which answers.
  fault.dropPath(1);
  expect((await lab.digManyAsync(['q77.silent.test'])).trim()).toBe('192.0.2.78');
  // The path lost the first copy: only the second reached the server.
  expect(fault.seen.filter((q) => q.name === 'q77.silent.test').map((q) => q.connection)).toEqual([2]);

  const row = dashboard.row('q77.silent.test');
  await expect(row).toHaveCount(1);
  const cell = row.getByRole('gridcell').filter({ hasText: 'sent again' });
  await expect(cell).toHaveText('#2 · sent again');
  await expect(cell).toHaveAttribute('title', /^Sent again on #2 after its connection was silent for \d+ ms; the answer came from #2$/);
  // Only that row: the others went once.
  await expect(page.getByText('sent again')).toHaveCount(1);

  await dashboard.openQuery('q77.silent.test');
  await expect(dashboard.queryDetail).toContainText(/Sent again\s*on #2 after its connection was silent for \d+ ms; the answer came from #2/);
  // Where the time went: the silence first, apart from the copy's own handshake and round trip, not "in the proxy".
  const silence = dashboard.timingRow(/First connection silent, sent again on #2/);
  await expect(silence).toHaveCount(1);
  const ms = (text: string | null): number => Number(/([\d.]+) ms/.exec(text ?? '')?.[1] ?? Number.NaN);
  const silentMs = ms(await silence.textContent());
  const proxyMs = ms(await dashboard.timingRow(/In the proxy/).textContent());
  expect(silentMs, 'the wait on the silent connection: at least the hedge’s 100 ms ACK wait').toBeGreaterThanOrEqual(95);
  expect(proxyMs, 'what is left for the proxy itself is small').toBeLessThan(silentMs / 2);
  await painted(page);
  await page.screenshot({ path: path.join(SHOTS, 'queries-hedge-1440-light.png') });

  // After a reload the page reads the proxy's log, not the live stream: the same row, the same story.
  await page.reload();
  await expect(dashboard.row('q77.silent.test')).toHaveCount(1);
  await dashboard.openQuery('q77.silent.test');
  await expect(dashboard.timingRow(/First connection silent, sent again on #2/)).toHaveCount(1);
  expect(ms(await dashboard.timingRow(/In the proxy/).textContent())).toBeLessThan(silentMs / 2);
});
