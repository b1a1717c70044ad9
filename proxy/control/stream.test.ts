/**
 * The stream's views (stream.ts) on a real HTTP server and a real socket:
 * what a connected dashboard gets instead of polling. Cadences are shortened;
 * the bounds below follow from them (at most one query-driven snapshot per
 * liveMs), never from how fast this machine is.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, onTestFinished, test } from 'vitest';
import { openStream } from '../../test-support/control-harness.js';
import type { Counters, QueryRecord } from '../engine/query-record.js';
import type { StreamBatch, StreamViews } from './api-types.js';
import { StreamHub } from './stream.js';
import { waitFor } from '../../test-support/proxy-harness.js';

const LIVE_MS = 300;
const REFRESH_MS = 1500;

async function hubOnServer(refreshMs = REFRESH_MS): Promise<{ hub: StreamHub; url: string; built: () => number }> {
  let built = 0;
  const views = (): Required<StreamViews> => {
    built++;
    return { status: {} as never, resolvers: { active: 'a', chosen: 'a', previous: null, resolvers: [] }, connections: [], metrics: {} as never, settings: {} as never };
  };
  const hub = new StreamHub({ intervalMs: 20, pingMs: 60_000, liveMs: LIVE_MS, refreshMs, snapshot: () => ({ counters: {} as Counters, inFlight: 0 }), views });
  const server = http.createServer((_req, res) => hub.add(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        hub.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { hub, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, built: () => built };
}

const batches = (events: { data: string }[]): StreamBatch[] => events.map((e) => JSON.parse(e.data) as StreamBatch);
const kinds = (b: StreamBatch): string[] => Object.keys(b.views ?? {}).sort();

test('every view in the first batch and after an event; queries bring theirs at most every liveMs; idle, nothing but the slow refresh', async () => {
  const { hub, url, built } = await hubOnServer();
  const s = await openStream({ url, token: '' });
  onTestFinished(() => s.close());
  await waitFor(() => s.events.length >= 1, 2000, 'first batch');
  expect(kinds(batches(s.events)[0] as StreamBatch)).toEqual(['connections', 'metrics', 'resolvers', 'settings', 'status']);

  // Queries for 1.2 s, one every 10 ms: their batches carry connections, metrics and resolvers, not status.
  const started = Date.now();
  const from = s.events.length;
  let last = 0;
  for (let i = 0; Date.now() - started < 1200; i++) {
    last = i + 1;
    hub.pushQuery({ seq: last } as QueryRecord);
    await new Promise((r) => setTimeout(r, 10));
  }
  const elapsed = Date.now() - started;
  await waitFor(() => batches(s.events).some((b) => b.queries.some((q) => q.seq === last)), 2000, 'the batch with the last query');
  const during = batches(s.events.slice(from));
  const live = during.filter((b) => b.views !== undefined);
  expect(live.length).toBeGreaterThanOrEqual(1);
  expect(live.length).toBeLessThanOrEqual(Math.ceil(elapsed / LIVE_MS) + 1);
  for (const b of live) expect(['connections,metrics,resolvers', 'connections,metrics,resolvers,settings,status']).toContain(kinds(b).join());

  // An event: all of the views in the batch that carries it.
  hub.pushEvent({ kind: 'settings', at: Date.now(), changed: ['padding'] });
  await waitFor(() => batches(s.events).some((b) => b.events.length > 0), 2000, 'the event');
  expect(kinds(batches(s.events).find((b) => b.events.length > 0) as StreamBatch)).toEqual(['connections', 'metrics', 'resolvers', 'settings', 'status']);

  // Idle: no batch and no view is built until the refresh is due.
  const idleFrom = s.events.length;
  const builtBefore = built();
  await new Promise((r) => setTimeout(r, REFRESH_MS / 2));
  expect(s.events.length).toBe(idleFrom);
  expect(built()).toBe(builtBefore);
  await waitFor(() => s.events.length > idleFrom, REFRESH_MS * 2, 'the slow refresh');
  expect(kinds(batches(s.events)[idleFrom] as StreamBatch)).toEqual(['connections', 'metrics', 'resolvers', 'settings', 'status']);
});

test('when queries stop, one more snapshot follows liveMs later (the charts see the traffic end), then nothing until the slow refresh', async () => {
  const { hub, url } = await hubOnServer(60_000); // no slow refresh inside this test
  const s = await openStream({ url, token: '' });
  onTestFinished(() => s.close());
  await waitFor(() => s.events.length >= 1, 2000, 'first batch');
  const started = Date.now();
  let lastQueryAt = 0;
  for (let i = 0; Date.now() - started < 500; i++) {
    hub.pushQuery({ seq: i + 1 } as QueryRecord);
    lastQueryAt = Date.now();
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => setTimeout(r, LIVE_MS * 3));
  // The last query's snapshot (due within liveMs of it), and the settling one liveMs after that, built with no query in the meantime.
  const after = batches(s.events).filter((b) => b.at >= lastQueryAt && b.views !== undefined);
  expect(after.length).toBe(2);
  expect((after[1] as StreamBatch).at - (after[0] as StreamBatch).at).toBeGreaterThanOrEqual(LIVE_MS);
  expect(kinds(after[1] as StreamBatch)).toEqual(['connections', 'metrics', 'resolvers']);
  const quietFrom = s.events.length;
  await new Promise((r) => setTimeout(r, LIVE_MS * 4));
  expect(s.events.length).toBe(quietFrom);
});
