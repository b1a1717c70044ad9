/**
 * The live stream reader against a real HTTP server on 127.0.0.1:0 (Node's
 * fetch is the same WHATWG fetch and ReadableStream the page uses).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { StreamBatch } from '../../../proxy/control/api-types.js';
import { ControlError } from '../../../proxy/control/api-client/errors.js';
import { setToken } from './client.js';
import { openStream, type StreamHandlers } from './stream.js';

const TOKEN = 't'.repeat(43);
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
  setToken(null);
});

interface Seen {
  readonly auth: string | undefined;
  readonly cookie: string | undefined;
  /** When the request came, Date.now(). */
  readonly at: number;
  /** The client closed this request's connection. */
  closed: boolean;
}

async function server(handle: (res: http.ServerResponse, n: number) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const s = http.createServer((req, res) => {
    const one: Seen = { auth: req.headers.authorization, cookie: req.headers.cookie, at: Date.now(), closed: false };
    seen.push(one);
    res.on('close', () => (one.closed = true));
    handle(res, seen.length);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  cleanup.push(
    () =>
      new Promise<void>((r) => {
        s.close(() => r());
        s.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/api/stream`, seen };
}

function recorder(): StreamHandlers & { batches: StreamBatch[]; opens: number; errors: (ControlError | null)[] } {
  const r = {
    batches: [] as StreamBatch[],
    opens: 0,
    errors: [] as (ControlError | null)[],
    onBatch: (b: StreamBatch) => void r.batches.push(b),
    onOpen: () => void r.opens++,
    onError: (e: ControlError | null) => void r.errors.push(e),
  };
  return r;
}

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const sse = (b: Partial<StreamBatch>): string => `event: batch\ndata: ${JSON.stringify({ at: 1, queries: [], skipped: 0, events: [], inFlight: 0, ...b })}\n\n`;

describe('openStream', () => {
  it('sends the token as a Bearer header (and no cookie), reads batches split anywhere, skips pings', async () => {
    const { url, seen } = await server((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const text = `retry: 2000\n\n${sse({ inFlight: 1 })}: ping\n\n${sse({ inFlight: 2 })}`;
      // Byte by byte for the first batch, to cross every boundary.
      for (const ch of text.slice(0, 40)) res.write(ch);
      res.write(text.slice(40));
    });
    setToken(TOKEN);
    const r = recorder();
    const close = openStream(r, { url });
    cleanup.push(close);
    await until(() => r.batches.length === 2);
    expect(r.batches.map((b) => b.inFlight)).toEqual([1, 2]);
    expect(r.opens).toBe(1);
    expect(seen[0]).toMatchObject({ auth: `Bearer ${TOKEN}`, cookie: undefined });
  });

  it('reconnects at once after an open stream ends, then keeps delivering', async () => {
    const { url, seen } = await server((res, n) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse({ inFlight: n }));
    });
    setToken(TOKEN);
    const r = recorder();
    const t0 = Date.now();
    cleanup.push(openStream(r, { url }));
    await until(() => r.batches.length >= 2);
    // The first retry after an open stream is quick (not the 2 s EventSource default).
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(r.errors[0]).toBeNull();
    expect(seen.length).toBeGreaterThanOrEqual(2);
  });

  it('a 401 is reported once and never retried', async () => {
    const { url, seen } = await server((res) => {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"code":"unauthorized","message":"x"}}');
    });
    setToken(TOKEN);
    const r = recorder();
    cleanup.push(openStream(r, { url }));
    await until(() => r.errors.length === 1);
    // Kept: a retry would be seen by the real server behind a socket, not at once; 600 ms is past any retry delay.
    await new Promise((res) => setTimeout(res, 600));
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]?.status).toBe(401);
    expect(seen).toHaveLength(1);
    expect(r.opens).toBe(0);
  });

  it('no token: reports signed_out without a request', async () => {
    const { url, seen } = await server((res) => res.end());
    const r = recorder();
    cleanup.push(openStream(r, { url }));
    await until(() => r.errors.length === 1);
    expect(r.errors[0]?.code).toBe('signed_out');
    expect(seen).toHaveLength(0);
  });

  it('a stream gone silent is dropped and reopened; close() stops everything', async () => {
    const { url, seen } = await server((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse({}));
      // …then nothing: no batch, no ping, socket still open.
    });
    setToken(TOKEN);
    const r = recorder();
    const close = openStream(r, { url, silenceMs: 200 });
    await until(() => seen.length >= 2);
    expect(r.errors.length).toBeGreaterThanOrEqual(1);
    close();
    const n = seen.length;
    // Kept: as above, a reopen shows only at the server; 700 ms is several silence periods (200 ms).
    await new Promise((res) => setTimeout(res, 700));
    expect(seen.length).toBe(n);
  });

  it("waits the server's retry: before trying again after a failed attempt", async () => {
    const { url, seen } = await server((res, n) => {
      if (n === 1) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`retry: 400\n\n${sse({})}`);
      } else res.writeHead(503).end();
    });
    setToken(TOKEN);
    const r = recorder();
    cleanup.push(openStream(r, { url }));
    await until(() => seen.length >= 3);
    // 1 → 2: the quick first retry after an open stream; 2 → 3: the server's 400 ms, not the 2 s default.
    const gap = (seen[2] as Seen).at - (seen[1] as Seen).at;
    expect(gap).toBeGreaterThanOrEqual(380);
    expect(gap).toBeLessThan(1500);
  });

  it('an event over the bound ends that stream, its connection closed, and a new one is opened', async () => {
    const { url, seen } = await server((res, n) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // The first answer starts an event it never ends, and keeps the connection open.
      if (n === 1) res.write(`data: ${'x'.repeat(5000)}`);
      else res.write(sse({ inFlight: n }));
    });
    setToken(TOKEN);
    const r = recorder();
    cleanup.push(openStream(r, { url, maxEventChars: 1000 }));
    await until(() => r.batches.length === 1);
    expect(r.errors).toEqual([null]);
    await until(() => (seen[0] as Seen).closed);
  });
});
