/**
 * LiveTrayState against a real HTTP server on 127.0.0.1:0 that serves the
 * control API's status, resolvers, metrics and stream from data the test
 * changes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ControlClient } from '../control/client.js';
import { LiveTrayState } from './live-tray-state.js';
import { trayStateFrom } from './tray-state.js';
import type { TrayState } from './types.js';

const TOKEN = 'tok';
interface Fake {
  state: string;
  reason: string;
  active: string;
  p50: number | null;
  networksRevision: number;
  /** The network we're on offers its own encrypted resolver (GET /api/networks). */
  offer: boolean;
  streams: http.ServerResponse[];
  requests: string[];
}

async function fakeControl(): Promise<{ url: string; fake: Fake }> {
  const fake: Fake = { state: 'private', reason: 'authenticated TLS to dns.quad9.net', active: 'quad9', p50: 7, networksRevision: 1, offer: false, streams: [], requests: [] };
  const resolver = (id: string): object => ({ id, label: id === 'quad9' ? 'Quad9' : 'Cloudflare', medianLatencyMs: id === 'quad9' ? 11 : null });
  const server = http.createServer((req, res) => {
    fake.requests.push(req.url ?? '');
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401).end();
      return;
    }
    const send = (body: unknown): void => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    switch (req.url) {
      case '/api/status':
        return send({ state: fake.state, reason: fake.reason, resolver: resolver(fake.active), networksRevision: fake.networksRevision });
      case '/api/networks':
        return send({
          remembering: true,
          max: 64,
          waiting: 0,
          dnsCheck: 'off',
          networks: [{ key: 'a'.repeat(32), label: 'gateway 10.53.1.1', current: true, ...(fake.offer ? { ownResolver: { offer: { name: 'dns.lab.test', verifiedFor: '10.53.1.1' }, inUse: false } } : {}) }],
        });
      case '/api/resolvers':
        return send({ active: fake.active, resolvers: [resolver('quad9'), resolver('cloudflare')] });
      case '/api/metrics':
        return send({ latency: { [fake.active]: { last1m: { count: 1, p50: fake.p50, p95: null, p99: null } } } });
      case '/api/stream':
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write(`event: batch\ndata: ${JSON.stringify({ at: 0, queries: [], skipped: 0, events: [], inFlight: 0 })}\n\n`);
        fake.streams.push(res);
        return;
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, fake };
}

function next(live: LiveTrayState, match: (s: TrayState) => boolean, ms = 5000): Promise<TrayState> {
  if (match(live.current)) return Promise.resolve(live.current);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      live.off('change', on);
      reject(new Error(`no matching tray state within ${ms} ms; last: ${JSON.stringify(live.current)}`));
    }, ms);
    const on = (s: TrayState): void => {
      if (!match(s)) return;
      clearTimeout(timer);
      live.off('change', on);
      resolve(s);
    };
    live.on('change', on);
  });
}

const running = { phase: 'running', since: 0, ready: { dns: [], control: 'http://127.0.0.1:1', token: TOKEN, pid: 1 } } as const;

describe('trayStateFrom', () => {
  it('uses the supervisor’s words while the proxy is down and keeps the resolvers', () => {
    const resolvers = { active: 'quad9', resolvers: [{ id: 'quad9', label: 'Quad9', medianLatencyMs: 3 }] } as never;
    expect(trayStateFrom({ supervisor: { phase: 'restarting', attempt: 1, delayMs: 500, lastExit: 'was killed by SIGKILL' }, resolvers })).toEqual({
      privacy: 'off',
      reason: 'dotstub stopped (was killed by SIGKILL); restarting in 1 s',
      resolvers: [{ id: 'quad9', label: 'Quad9', medianLatencyMs: 3 }],
      activeResolverId: 'quad9',
      proxyRunning: false,
      p50Ms: null,
      captive: null,
    });
    expect(trayStateFrom({ supervisor: { phase: 'starting', attempt: 2 } }).reason).toBe('starting dotstub (attempt 2)');
    expect(trayStateFrom({ supervisor: running })).toMatchObject({ proxyRunning: true, privacy: 'off', reason: 'waiting for dotstub to answer' });
  });
});

describe('LiveTrayState', () => {
  it('follows the proxy: first fetch, then a state event on the stream, then detaches', async () => {
    const { url, fake } = await fakeControl();
    const client = new ControlClient({ baseUrl: url, token: TOKEN });
    onTestFinished(() => client.close());
    const live = new LiveTrayState({ refreshMs: 60_000, eventDelayMs: 10 });
    onTestFinished(() => live.detach());
    live.setSupervisor(running);
    live.attach(client);
    const first = await next(live, (s) => s.privacy === 'private');
    expect(first).toEqual({
      privacy: 'private',
      reason: 'authenticated TLS to dns.quad9.net',
      resolvers: [
        { id: 'quad9', label: 'Quad9', medianLatencyMs: 11 },
        { id: 'cloudflare', label: 'Cloudflare', medianLatencyMs: null },
      ],
      activeResolverId: 'quad9',
      proxyRunning: true,
      p50Ms: 7,
      captive: null,
    });

    // The proxy loses TLS: the stream says so, the tray follows without polling (refreshMs is a minute).
    await new Promise<void>((resolve) => {
      const wait = (): void => (fake.streams.length > 0 ? resolve() : void setTimeout(wait, 10));
      wait();
    });
    fake.state = 'blocked';
    fake.reason = 'port 853 timed out from this network';
    const event = { kind: 'state', event: { state: 'blocked', previous: 'private', reason: fake.reason, at: 1, resolverId: 'quad9' } };
    for (const res of fake.streams) res.write(`event: batch\ndata: ${JSON.stringify({ at: 1, queries: [], skipped: 0, events: [event], inFlight: 0 })}\n\n`);
    const blocked = await next(live, (s) => s.privacy === 'blocked');
    expect(blocked.reason).toBe('port 853 timed out from this network');

    live.setSupervisor({ phase: 'stopped', reason: 'paused' });
    expect(live.current).toMatchObject({ privacy: 'off', proxyRunning: false, reason: 'paused', activeResolverId: 'quad9' });
    const before = fake.requests.length;
    // Kept: a request would reach the fake server over a socket, after any fake clock had moved; 100 ms lets one arrive.
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.requests.length).toBe(before);
  });

  it('polls while the stream is unavailable', async () => {
    const { url, fake } = await fakeControl();
    const client = new ControlClient({ baseUrl: url, token: TOKEN });
    onTestFinished(() => client.close());
    // End every stream at once: the model falls back to polling.
    const live = new LiveTrayState({ refreshMs: 100, streamRetryMs: 10_000 });
    onTestFinished(() => live.detach());
    live.setSupervisor(running);
    live.attach(client);
    await next(live, (s) => s.privacy === 'private');
    for (const res of fake.streams) res.end();
    fake.p50 = 42;
    const later = await next(live, (s) => s.p50Ms === 42);
    expect(later.privacy).toBe('private');
    expect(fake.requests.filter((u) => u === '/api/stream')).toHaveLength(1);
  });

  it('an offer of the network’s own resolver shows at once: a pushed status whose networks revision moved refreshes the tray, not the minute’s timer', async () => {
    const { url, fake } = await fakeControl();
    const client = new ControlClient({ baseUrl: url, token: TOKEN });
    onTestFinished(() => client.close());
    const live = new LiveTrayState({ refreshMs: 60_000, eventDelayMs: 10 });
    onTestFinished(() => live.detach());
    live.setSupervisor(running);
    live.attach(client);
    await next(live, (s) => s.privacy === 'private');
    expect(live.current.ownResolver).toBeUndefined();
    await new Promise<void>((resolve) => {
      const wait = (): void => (fake.streams.length > 0 ? resolve() : void setTimeout(wait, 10));
      wait();
    });
    // The proxy verified the network's designation: its memory moved, and the status it pushes says so (no event on the timeline).
    fake.offer = true;
    fake.networksRevision = 2;
    const status = { state: 'private', reason: fake.reason, resolver: { id: 'quad9', label: 'Quad9', medianLatencyMs: 11 }, networksRevision: 2 };
    for (const res of fake.streams) res.write(`event: batch\ndata: ${JSON.stringify({ at: 2, queries: [], skipped: 0, events: [], inFlight: 0, views: { status } })}\n\n`);
    const offered = await next(live, (s) => s.ownResolver !== undefined, 2000);
    expect(offered.ownResolver).toMatchObject({ name: 'dns.lab.test', verifiedFor: '10.53.1.1', inUse: false });
  });
});
