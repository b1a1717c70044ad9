import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { StreamBatch } from '../../../proxy/control/api-types.js';
import { record, status } from '../lib/fixtures.test-helpers.js';
import { ControlError } from '../../../proxy/control/api-client/errors.js';
import { DashboardStore, type StoreEnv } from './store.js';
import { DEFAULT_SETTINGS } from '../../../proxy/run/settings.js';

function fakeEnv(): StoreEnv & { scheduled: (() => void)[] } {
  const scheduled: (() => void)[] = [];
  // Rejects, as the real client's calls do (they are async): a synchronous throw would leave a sibling call's rejection unhandled.
  const unused = (): Promise<never> => Promise.reject(new Error('not used'));
  return {
    scheduled,
    api: {
      status: async () => status(),
      resolvers: unused,
      connections: unused,
      metrics: unused,
      settings: unused,
      queries: unused,
      recentEvents: unused,
      clearQueries: unused,
    },
    openStream: () => () => {},
    schedule: (fn) => void scheduled.push(fn),
    now: () => 0,
  };
}

const batch = (over: Partial<StreamBatch>): StreamBatch => ({
  at: 0,
  queries: [],
  skipped: 0,
  events: [],
  counters: status().counters,
  inFlight: 0,
  ...over,
});

describe('DashboardStore', () => {
  it('coalesces batches into one notification per frame', () => {
    const env = fakeEnv();
    const store = new DashboardStore(env);
    let notified = 0;
    store.subscribe(() => notified++);
    for (let i = 1; i <= 10; i++) store.ingestBatch(batch({ queries: [record({ seq: i })] }));
    expect(env.scheduled.length).toBe(1);
    expect(notified).toBe(0);
    env.scheduled[0]!();
    expect(notified).toBe(1);
    expect(store.queries.size).toBe(10);
    expect(store.getSnapshot().link).toBe('live');
  });

  it('drops duplicates by seq and learns types and rcodes', () => {
    const env = fakeEnv();
    const store = new DashboardStore(env);
    store.ingestBatch(batch({ queries: [record({ seq: 1 }), record({ seq: 2, type: 'AAAA', rcode: 'NXDOMAIN' })] }));
    store.ingestBatch(batch({ queries: [record({ seq: 2 }), record({ seq: 3 })] }));
    store.flush();
    expect(store.queries.toArray().map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(store.getSnapshot().types).toEqual(['A', 'AAAA']);
    expect(store.getSnapshot().rcodes).toEqual(['NOERROR', 'NXDOMAIN']);
  });

  it('adds up skipped queries and remembers handshake times', () => {
    const env = fakeEnv();
    const store = new DashboardStore(env);
    store.ingestBatch(batch({ skipped: 5 }));
    store.ingestBatch(
      batch({
        skipped: 7,
        events: [
          {
            kind: 'connection',
            event: {
              type: 'open',
              at: 0,
              connectionId: 9,
              resolverId: 'q',
              address: 'a',
              transport: 'dot',
              resumed: false,
              verified: true,
              authError: null,
              tlsVersion: 'TLSv1.3',
              cipher: 'c',
              keyGroup: 'X25519',
              classicalOnly: null,
              handshakeMs: 2.5,
              burst: false,
            },
          },
        ],
      }),
    );
    store.flush();
    expect(store.getSnapshot().skipped).toBe(12);
    expect(store.getSnapshot().events.length).toBe(1);
    expect(store.handshakeMs(9)).toBe(2.5);
    expect(store.handshakeMs(null)).toBeNull();
  });

  it('caps the log at 100,000 records', () => {
    const store = new DashboardStore(fakeEnv());
    for (let b = 0; b < 12; b++) {
      const queries = [];
      for (let i = 0; i < 10_000; i++) queries.push(record({ seq: b * 10_000 + i + 1 }));
      store.ingestBatch(batch({ queries }));
    }
    expect(store.queries.size).toBe(100_000);
    expect(store.queries.at(0)?.seq).toBe(20_001);
  });

  it('stamps when the live link was lost, keeps it while down, clears it when live again', async () => {
    let now = 1000;
    let fail: Error | null = null;
    const env = fakeEnv();
    const store = new DashboardStore({
      ...env,
      now: () => now,
      api: {
        ...env.api,
        resolvers: async () => {
          if (fail) throw fail;
          return { active: 'quad9', chosen: 'quad9', previous: null, resolvers: [] };
        },
      },
    });
    store.ingestBatch(batch({}));
    store.flush();
    expect(store.getSnapshot()).toMatchObject({ link: 'live', lostAt: null });
    now = 5000;
    fail = new ControlError(0, 'unreachable', 'The dotstub proxy is not answering.');
    await store.refresh('resolvers');
    store.flush();
    expect(store.getSnapshot()).toMatchObject({ link: 'reconnecting', lostAt: 5000 });
    // Still down a second later: the moment it was lost doesn't move.
    now = 6000;
    await store.refresh('resolvers');
    store.flush();
    expect(store.getSnapshot().lostAt).toBe(5000);
    store.ingestBatch(batch({}));
    store.flush();
    expect(store.getSnapshot()).toMatchObject({ link: 'live', lostAt: null });
  });

  it('a refused token says "rejected", no token says "missing", and a later network error does not hide it', async () => {
    let err: Error = new ControlError(401, 'unauthorized', 'the proxy did not accept the token');
    const env = fakeEnv();
    const store = new DashboardStore({
      ...env,
      api: {
        ...env.api,
        resolvers: async () => {
          throw err;
        },
      },
    });
    await store.refresh('resolvers');
    store.flush();
    expect(store.getSnapshot()).toMatchObject({ link: 'unauthorized', authProblem: 'rejected' });
    err = new ControlError(0, 'unreachable', 'down');
    await store.refresh('resolvers');
    store.flush();
    expect(store.getSnapshot().link).toBe('unauthorized');
    err = new ControlError(401, 'signed_out', 'no token');
    await store.refresh('resolvers');
    store.flush();
    expect(store.getSnapshot().authProblem).toBe('missing');

    const other = new DashboardStore(fakeEnv());
    other.signedOut('malformed');
    other.flush();
    expect(other.getSnapshot()).toMatchObject({ link: 'unauthorized', authProblem: 'malformed' });
  });

  it('takes status, resolvers, connections, metrics and settings from the stream, and asks the API nothing for an event', async () => {
    // On a fake clock: a refresh the events set off (one came 150 ms later) would be asked at once below.
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval'] });
    onTestFinished(() => void vi.useRealTimers());
    const env = fakeEnv();
    let calls = 0;
    const counted = (): never => {
      calls++;
      throw new Error('not expected');
    };
    const api = { ...env.api, status: counted, resolvers: counted, connections: counted, metrics: counted, settings: counted };
    const store = new DashboardStore({ ...env, api });
    const s = status({ state: 'degraded', reason: 'port 853 timed out' });
    const resolvers = { active: s.resolver.id, chosen: s.resolver.id, previous: null, resolvers: [s.resolver] };
    store.ingestBatch(
      batch({
        events: [{ kind: 'state', event: { state: 'degraded', previous: 'private', reason: 'port 853 timed out', at: 0, resolverId: s.resolver.id } }],
        views: { status: s, resolvers, connections: [], settings: { ...DEFAULT_SETTINGS, padding: false } },
      }),
    );
    store.flush();
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toBe(0);
    expect(store.getSnapshot()).toMatchObject({ status: { state: 'degraded' }, resolvers, connections: [], settings: { padding: false } });
  });

  it("a switch's answer is shown at once: the status and the active resolver, without a GET", () => {
    const env = fakeEnv();
    const store = new DashboardStore(env);
    const before = status();
    store.ingestBatch(batch({ views: { status: before, resolvers: { active: before.resolver.id, chosen: before.resolver.id, previous: null, resolvers: [before.resolver, { ...before.resolver, id: 'b', label: 'B' }] } } }));
    store.applyStatus(status({ resolver: { ...before.resolver, id: 'b', label: 'B' } }));
    store.flush();
    expect(store.getSnapshot().status?.resolver.id).toBe('b');
    expect(store.getSnapshot().resolvers?.active).toBe('b');
    expect(store.getSnapshot().resolvers?.previous).toBe(before.resolver.id);
  });

  it('runs its 1 s poll only while the stream is down: none while it is up, again when it drops, none after stop()', async () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const env = fakeEnv();
    let polls = 0;
    const down = async (): Promise<never> => {
      polls++;
      throw new Error('unreachable');
    };
    let stream: { onOpen: () => void; onError: (err: null) => void } | undefined;
    const store = new DashboardStore({
      ...env,
      api: { ...env.api, metrics: down, connections: down, resolvers: down },
      openStream: (_onBatch, onOpen, onError) => {
        stream = { onOpen, onError };
        return () => {};
      },
    });
    store.start();
    // Down at start: the poll runs.
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(2000);
    expect(polls).toBeGreaterThan(0);
    stream?.onOpen();
    expect(vi.getTimerCount()).toBe(0);
    polls = 0;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(polls).toBe(0);
    stream?.onError(null);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(2000);
    expect(polls).toBeGreaterThan(0);
    store.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
