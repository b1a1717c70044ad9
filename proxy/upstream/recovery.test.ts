/**
 * Recovery in seconds (issue 8): the resolver goes away (connections
 * refused) long enough for the back-off to grow, then comes back. With
 * queries flowing, a correct answer must follow within 2 s of its return —
 * not when the back-off timer happens to fire.
 */
import { expect, onTestFinished, test } from 'vitest';
import { firstA, UdpClient } from '../../test-support/dns-client.js';
import { startFaultServer, type FaultServer } from '../../test-support/fault-server.js';
import { startProxy, waitForState } from '../../test-support/proxy-harness.js';

test('after an 8 s outage the first correct answer comes within 2 s of the resolver’s return', async () => {
  let server: FaultServer = await startFaultServer();
  const port = server.port;
  onTestFinished(() => server.stop());
  const h = await startProxy({ resolverArg: server.resolverArg, cache: false });
  onTestFinished(() => h.stop());
  await waitForState(h.proxy, 'private', 5000);
  const c = await UdpClient.open(h.port);
  onTestFinished(() => c.close());
  await server.stop();
  let backAt = 0;
  let firstAnswerAt = 0;
  let servfails = 0;
  const start = performance.now();
  const log: string[] = [];
  // One query every 200 ms (bounded: at most 120), as a machine in use sends them.
  for (let i = 0; i < 120 && firstAnswerAt === 0; i++) {
    const elapsed = performance.now() - start;
    if (elapsed >= 8000 && backAt === 0) {
      server = await startFaultServer({ port });
      backAt = performance.now();
    }
    const a = await c.query(`n${i}.test`, { timeoutMs: 4000 }).catch(() => null);
    if (a?.rcode === 'SERVFAIL') servfails++;
    log.push(`${Math.round(performance.now() - start)} ${a?.rcode ?? 'timeout'}`);
    if (backAt > 0 && a && firstA(a) === `192.0.2.${(i % 254) + 1}`) firstAnswerAt = performance.now();
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(servfails, log.join(', ')).toBeGreaterThan(10); // the outage was real
  expect(firstAnswerAt).toBeGreaterThan(0);
  console.log(`recovery: first correct answer ${Math.round(firstAnswerAt - backAt)} ms after the resolver came back (${servfails} SERVFAILs during the outage)`);
  expect(firstAnswerAt - backAt).toBeLessThan(2000);
}, 60_000);
