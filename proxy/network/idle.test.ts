/**
 * Honest when idle, warm when in use (issues 8 and 11), with a server that
 * closes idle connections after 300 ms (as resolvers do, sooner or later):
 * - nobody asking: the state stops claiming a live connection and says when
 *   the resolver was last verified;
 * - queries flowing: the closed connection is re-opened at once, so the next
 *   query finds it open (a connection hit, no handshake to wait for).
 */
import { expect, onTestFinished, test } from 'vitest';
import { UdpClient } from '../../test-support/dns-client.js';
import { startFaultServer, type FaultServer } from '../../test-support/fault-server.js';
import { startProxy, waitFor, waitForEvent, waitForState, type Harness } from '../../test-support/proxy-harness.js';
import type { ConnectionEvent } from '../dotstub.js';
import type { QueryRecord } from '../engine/query-record.js';

async function lab(): Promise<{ s: FaultServer; h: Harness }> {
  const s = await startFaultServer();
  onTestFinished(() => s.stop());
  s.behaviour.idleCloseMs = 300;
  const h = await startProxy({ resolverArg: s.resolverArg, cache: false });
  onTestFinished(() => h.stop());
  await waitForState(h.proxy, 'private', 5000);
  return { s, h };
}

test('nobody asking: when the server closes the connection, the state says idle and since when, not "private now"', async () => {
  const { h } = await lab();
  await waitForEvent(h.proxy, 'state', () => /^idle since \d\d:\d\d:\d\d/.test(h.proxy.privacy.state.reason), 3000, 'idle reason');
  expect(h.proxy.privacy.state.state).toBe('private');
  expect(h.proxy.connections()).toHaveLength(0);
  expect(h.proxy.privacy.lastVerifiedAt).toBeGreaterThan(Date.now() - 3000);
});

test('queries flowing: the closed connection is re-opened at once and the next query is a connection hit', async () => {
  const { s, h } = await lab();
  const c = await UdpClient.open(h.port);
  onTestFinished(() => c.close());
  const records: QueryRecord[] = [];
  h.proxy.on('query', (r) => records.push(r));
  const events: ConnectionEvent[] = [];
  h.proxy.on('connection', (e: ConnectionEvent) => events.push(e));
  // Past one server close (after 300 ms idle): awaited, not slept.
  await waitForEvent(h.proxy, 'connection', () => events.some((e) => e.type === 'close'), 5000, 'the server closing the idle connection');
  await c.query('n1.test');
  const used = records.at(-1)?.connectionId;
  const connectionsBefore = s.connections;
  // The server closes that connection after 300 ms; in use, dotstub opens another at once, before anyone asks.
  const closedAt = (): number => events.findIndex((e) => e.type === 'close' && e.connectionId === used);
  await waitForEvent(
    h.proxy,
    'connection',
    () => closedAt() !== -1 && events.slice(closedAt()).some((e) => e.type === 'open' && e.connectionId !== used),
    5000,
    'the used connection closed and another opened',
  );
  // The server saw the new connection too (it counts once its side of the handshake ends).
  await waitFor(() => s.connections > connectionsBefore, 2000, 'the server counting the new connection');
  await c.query('n2.test');
  expect(records.at(-1)).toMatchObject({ reused: true, handshake: null });
  expect(h.proxy.privacy.state.reason).not.toMatch(/^idle/);
});

test('a network change drops the connection, reconnects at once, and queries in flight are answered', async () => {
  const s = await startFaultServer();
  onTestFinished(() => s.stop());
  for (let i = 0; i < 5; i++) s.behaviour.delays.set(`n${i}.test`, 150);
  const h = await startProxy({ resolverArg: s.resolverArg, cache: false });
  onTestFinished(() => h.stop());
  await waitForState(h.proxy, 'private', 5000);
  const c = await UdpClient.open(h.port);
  onTestFinished(() => c.close());
  const closes: string[] = [];
  h.proxy.on('connection', (e) => e.type === 'close' && closes.push(e.reason));
  const inFlight = Array.from({ length: 5 }, (_, i) => c.query(`n${i}.test`));
  await s.whenSeen((q) => /^n[0-4]\.test$/.test(q.name), 5); // all five at the resolver, none answered yet
  const before = s.connections;
  h.proxy.networkChanged({ reason: 'route', sentence: 'the default route changed' });
  const answers = await Promise.all(inFlight);
  expect(answers.map((a) => a.rcode)).toEqual(['NOERROR', 'NOERROR', 'NOERROR', 'NOERROR', 'NOERROR']);
  expect(closes).toContain('network-change');
  expect(s.connections).toBeGreaterThan(before);
});
