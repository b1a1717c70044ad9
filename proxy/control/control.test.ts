/**
 * The control API against the real server, a real proxy and real DoT
 * upstreams (unbound): switching under load, settings applied and
 * persisted, the stream, the query log and metrics.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectedA, firstA, UdpClient, type Answer } from '../../test-support/dns-client.js';
import { apiClient, openStream, startControl, tempConfigDir, type ControlHarness } from '../../test-support/control-harness.js';
import { waitFor, waitForEvent, waitForState } from '../../test-support/proxy-harness.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import type { ApiError, MetricsView, QueryPage, ValidationView, ResolversView, ResolverView, Settings, StatusView, StreamBatch, TimelineEvent, ConnectionView } from './api-types.js';
import { EXPORT_COLUMNS } from './api-client/query-export.js';

let a: UnboundServer;
let b: UnboundServer;

beforeAll(async () => {
  // Two upstreams told apart by which.test.
  a = await startUnbound({ names: 1000, extra: { 'which.test.': '198.51.100.1' } });
  b = await startUnbound({ names: 1000, extra: { 'which.test.': '198.51.100.2' } });
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
});

/**
 * Sends `total` UDP queries at a steady `perTick` every 10 ms (bounded in
 * count and, through each query's timeout, in time); `during` runs once
 * `atQuery` queries were sent.
 */
async function steadyLoad(port: number, total: number, perTick: number, atQuery: number, during: () => Promise<void>): Promise<Answer[]> {
  const client = await UdpClient.open(port);
  try {
    const pending: Promise<Answer>[] = [];
    let fired: Promise<void> | undefined;
    for (let i = 0; i < total; i++) {
      pending.push(client.query(`n${i % 1000}.test`, { timeoutMs: 8000 }));
      if (i + 1 === atQuery) fired = during();
      if ((i + 1) % perTick === 0) await new Promise((r) => setTimeout(r, 10));
    }
    const answers = await Promise.all(pending);
    await fired;
    return answers;
  } finally {
    client.close();
  }
}

describe('control API with a real proxy and unbound', () => {
  let h: ControlHarness;
  let api: ReturnType<typeof apiClient>;
  let bId: string;

  beforeAll(async () => {
    h = await startControl({ resolverArg: a.resolverArg });
    api = apiClient(h);
    await waitForState(h.proxy, 'private', 5000);
  });
  afterAll(async () => {
    await h?.stop();
  });

  test('status reports state, resolver, listen addresses and counters', async () => {
    const r = await api.get('/api/status');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    const s = r.json<StatusView>();
    expect(s.state).toBe('private');
    expect(s.reason).toMatch(/verified/);
    expect(s.leaves).toMatch(/encrypted DNS/);
    expect(s.resolver.id).toBe(`custom:127.0.0.1:${a.port}`);
    expect(s.listen).toEqual([`127.0.0.1:${h.dnsPort}`]);
    expect(s.mode).toBe('strict');
    expect(s.problems).toBeUndefined();
    // The counter counts what this proxy was asked: three lookups move it by exactly three.
    const client = await UdpClient.open(h.dnsPort);
    try {
      for (const i of [1, 2, 3]) expect(firstA(await client.query(`n${i}.test`, { timeoutMs: 5000 }))).toBe(expectedA(i));
    } finally {
      client.close();
    }
    const after = (await api.get('/api/status')).json<StatusView>();
    expect(after.counters.queries - s.counters.queries).toBe(3);
  });

  test('custom resolvers: validate with per-field messages, add, list, refuse duplicates and presets', async () => {
    const bad = await api.post('/api/resolvers/validate', { address: 'dns.example', port: 70000, authName: 'bad name!', pins: ['nope'] });
    expect(bad.status).toBe(200);
    const v = bad.json<ValidationView>();
    expect(v.ok).toBe(false);
    // Each field at fault has a sentence for the form and a code for programs.
    expect(Object.keys(v.fields)).toEqual(expect.arrayContaining(['address', 'port', 'authName', 'pins']));
    expect(v.fieldCodes).toMatchObject({ address: 'bad_value', port: 'bad_value', authName: 'bad_value', pins: 'bad_value' });

    const rejected = await api.post('/api/resolvers', { address: 'dns.example' });
    expect(rejected.status).toBe(400);
    expect(rejected.json<ApiError>().error).toMatchObject({ code: 'validation', field: 'address', fieldCodes: { address: 'bad_value' } });
    const missing = await api.post('/api/resolvers', { port: 853 });
    expect(missing.json<ApiError>().error).toMatchObject({ code: 'validation', field: 'address', fieldCodes: { address: 'required' }, hint: expect.any(String) as unknown });

    const ok = await api.post('/api/resolvers/validate', { address: '127.0.0.1', port: b.port, authName: 'dns.test' });
    expect(ok.json()).toEqual({ ok: true, fields: {}, fieldCodes: {} });

    const added = await api.post('/api/resolvers', { label: 'Lab B', address: '127.0.0.1', port: b.port, authName: 'dns.test' });
    expect(added.status).toBe(201);
    const view = added.json<ResolverView>();
    bId = view.id;
    expect(view).toMatchObject({ label: 'Lab B', addresses: ['127.0.0.1'], port: b.port, authName: 'dns.test', preset: false });

    // The same address and port again, or the command line's resolver (in use): refused beside the address, nothing renamed.
    const dup = await api.post('/api/resolvers', { address: '127.0.0.1', port: b.port, authName: 'dns.test' });
    expect(dup.status).toBe(400);
    expect(dup.json<ApiError>().error.fieldCodes).toEqual({ address: 'taken' });
    // The sentence names the resolver that has it.
    expect(dup.json<ApiError>().error.fields?.address).toBe(
      `127.0.0.1:${b.port} is already “Lab B”: use that one, or give a different address or port`,
    );
    const onActive = await api.post('/api/resolvers', { label: 'Lab C', address: '127.0.0.1', port: a.port, authName: 'dns.test' });
    expect(onActive.status).toBe(400);
    expect(onActive.json<ApiError>().error.fieldCodes).toEqual({ address: 'taken' });
    expect(onActive.json<ApiError>().error.fields?.address).toMatch(/, the resolver in use: use that one/);
    const again = await api.post('/api/resolvers/validate', { label: 'Lab C', address: '127.0.0.1', port: a.port, authName: 'dns.test' });
    expect(again.json<ValidationView>().fieldCodes).toEqual({ address: 'taken' });

    const list = (await api.get('/api/resolvers')).json<ResolversView>();
    expect(list.active).toBe(`custom:127.0.0.1:${a.port}`);
    expect(list.previous).toBeNull();
    expect(list.resolvers.map((r) => r.id)).toEqual(expect.arrayContaining(['quad9', 'cloudflare', bId, list.active]));
    expect(list.resolvers.find((r) => r.id === 'quad9')?.preset).toBe(true);

    const code = async (r: Promise<{ status: number; json<T>(): T }>): Promise<[number, string]> => {
      const res = await r;
      return [res.status, res.json<ApiError>().error.code];
    };
    expect(await code(api.del('/api/resolvers/quad9'))).toEqual([409, 'resolver_is_preset']);
    expect(await code(api.del(`/api/resolvers/${encodeURIComponent(list.active)}`))).toEqual([409, 'resolver_in_use']);
    expect(await code(api.del('/api/resolvers/custom%3Anope'))).toEqual([404, 'unknown_resolver']);
    // Persisted.
    const saved = JSON.parse(fs.readFileSync(path.join(h.configDir, 'resolvers.json'), 'utf8')) as { custom: { id: string }[] };
    expect(saved.custom.map((c) => c.id)).toContain(bId);
  });

  test('switching resolvers under steady load loses nothing; new queries go to the new resolver', async () => {
    const before = h.proxy.counters.servfails;
    let switched: StatusView | undefined;
    const answers = await steadyLoad(h.dnsPort, 3000, 10, 1500, async () => {
      const r = await api.put('/api/resolvers/active', { id: bId });
      expect(r.status).toBe(200);
      switched = r.json<StatusView>();
    });
    // Every query answered, correctly, none with SERVFAIL.
    expect(answers).toHaveLength(3000);
    for (const [i, ans] of answers.entries()) {
      expect(ans.rcode).toBe('NOERROR');
      expect(firstA(ans)).toBe(expectedA(i % 1000));
    }
    expect(h.proxy.counters.servfails).toBe(before);
    expect(switched?.resolver.id).toBe(bId);
    // Both upstreams carried part of the load.
    const page = (await api.get('/api/queries?limit=1000')).json<QueryPage>();
    const resolversSeen = new Set(page.records.map((r) => r.resolverId));
    expect(resolversSeen.has(bId)).toBe(true);
    const c = await UdpClient.open(h.dnsPort);
    try {
      expect(firstA(await c.query('which.test'))).toBe('198.51.100.2');
    } finally {
      c.close();
    }
    // The old pool drains and closes.
    await waitForEvent(h.proxy, 'connection', () => h.proxy.connections().every((conn) => conn.resolverId === bId), 5000, 'old pool closed');
    const events = (await api.get('/api/events/recent')).json<TimelineEvent[]>();
    expect(events).toContainEqual(expect.objectContaining({ kind: 'resolver', from: `custom:127.0.0.1:${a.port}`, to: bId }));
    const saved = JSON.parse(fs.readFileSync(path.join(h.configDir, 'resolvers.json'), 'utf8')) as { active: string };
    expect(saved.active).toBe(bId);
    // Every client learns the way back from the server, not only the one that switched.
    expect((await api.get('/api/resolvers')).json<ResolversView>().previous).toBe(`custom:127.0.0.1:${a.port}`);
  });

  test('a settings change that rebuilds the pool, under load, loses nothing and takes effect', async () => {
    let updated: Settings | undefined;
    const answers = await steadyLoad(h.dnsPort, 2000, 10, 1000, async () => {
      const r = await api.put('/api/settings', { poolSize: 2, idleTimeoutSec: 30, maxInFlight: 500 });
      expect(r.status).toBe(200);
      updated = r.json<Settings>();
    });
    expect(answers.every((x) => x.rcode === 'NOERROR')).toBe(true);
    expect(answers).toHaveLength(2000);
    expect(updated).toMatchObject({ poolSize: 2, idleTimeoutSec: 30, maxInFlight: 500 });
    await waitForEvent(h.proxy, 'connection', () => h.proxy.connections().filter((c) => c.state === 'open').length === 2, 5000, 'two open connections');
    const conns = (await api.get('/api/connections')).json<ConnectionView[]>();
    expect(conns.length).toBe(2);
    for (const c of conns) {
      expect(c).toMatchObject({ resolverId: bId, idleTimeoutMs: 30_000, tlsVersion: 'TLSv1.3', verified: true });
      expect(typeof c.cipher).toBe('string');
      expect(typeof c.ageMs).toBe('number');
    }
    const events = (await api.get('/api/events/recent')).json<TimelineEvent[]>();
    expect(events).toContainEqual(expect.objectContaining({ kind: 'settings', changed: ['idleTimeoutSec', 'poolSize', 'maxInFlight'] }));
    const saved = JSON.parse(fs.readFileSync(path.join(h.configDir, 'settings.json'), 'utf8')) as Settings;
    expect(saved).toMatchObject({ poolSize: 2, idleTimeoutSec: 30, maxInFlight: 500 });
  });

  test('invalid settings get per-field messages and change nothing', async () => {
    const before = fs.readFileSync(path.join(h.configDir, 'settings.json'), 'utf8');
    const r = await api.put('/api/settings', { poolSize: 0, padding: 'yes', bogus: 1 });
    expect(r.status).toBe(400);
    const e = r.json<ApiError>().error;
    expect(e.code).toBe('validation');
    expect(e.fieldCodes).toEqual({ poolSize: 'out_of_range', padding: 'wrong_type', bogus: 'unknown_field' });
    expect(Object.keys(e.fields ?? {}).sort()).toEqual(['bogus', 'padding', 'poolSize']);
    expect(fs.readFileSync(path.join(h.configDir, 'settings.json'), 'utf8')).toBe(before);
    expect((await api.get('/api/settings')).json<Settings>().poolSize).toBe(2);
  });

  test('padding and name recording apply to the next query; the log forgets names when asked', async () => {
    const c = await UdpClient.open(h.dnsPort);
    try {
      await c.query('n7.test');
      let page = (await api.get('/api/queries?name=n7.test&limit=5')).json<QueryPage>();
      expect(page.records[0]?.name).toBe('n7.test');
      const padBefore = h.proxy.counters.paddingBytes;
      expect((await api.put('/api/settings', { padding: false, recordNames: false })).status).toBe(200);
      await c.query('n8.test');
      expect(h.proxy.counters.paddingBytes).toBe(padBefore);
      page = (await api.get('/api/queries?limit=5')).json<QueryPage>();
      expect(page.records[0]?.name).toBeNull();
      // Older records were scrubbed too.
      expect((await api.get('/api/queries?name=n7&limit=5')).json<QueryPage>().total).toBe(0);
      expect(page.records[0]?.latencyUs).toBeGreaterThan(0);
    } finally {
      c.close();
      await api.put('/api/settings', { padding: true, recordNames: true });
    }
  });

  test('query log: filters, paging newest first, CSV and JSON export', async () => {
    const c = await UdpClient.open(h.dnsPort);
    try {
      for (let i = 0; i < 5; i++) await c.query(`n${900 + i}.test`, { type: 'AAAA' });
      await c.query('nothing-here.test');
    } finally {
      c.close();
    }
    const aaaa = (await api.get('/api/queries?name=N90&type=aaaa&limit=2')).json<QueryPage>();
    expect(aaaa.total).toBe(5);
    expect(aaaa.records.map((r) => r.name)).toEqual(['n904.test', 'n903.test']);
    const next = (await api.get('/api/queries?name=n90&type=AAAA&limit=2&offset=2')).json<QueryPage>();
    expect(next.records.map((r) => r.name)).toEqual(['n902.test', 'n901.test']);
    const nx = (await api.get('/api/queries?rcode=NXDOMAIN')).json<QueryPage>();
    expect(nx.records[0]?.name).toBe('nothing-here.test');
    expect((await api.get(`/api/queries?resolver=${encodeURIComponent(bId)}&minLatencyMs=0&limit=1`)).json<QueryPage>().total).toBeGreaterThan(0);
    expect((await api.get('/api/queries?minLatencyMs=600000')).json<QueryPage>().total).toBe(0);
    const badPage = await api.get('/api/queries?limit=0&minLatencyMs=-1');
    expect(badPage.status).toBe(400);
    expect(badPage.json<ApiError>().error.fieldCodes).toEqual({ minLatencyMs: 'bad_value', limit: 'bad_value' });
    expect(badPage.json<ApiError>().error.field).toBe('minLatencyMs');

    const csv = await api.get('/api/queries/export?format=csv&name=n90&type=AAAA');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toMatch(/attachment; filename="dotstub-queries-.*\.csv"/);
    const lines = csv.text.trim().split('\r\n');
    // The dashboard's download has the same columns (api-client/query-export.ts).
    expect(lines[0]).toBe(EXPORT_COLUMNS.join(','));
    expect(lines).toHaveLength(6);
    expect(lines[1]).toMatch(/^[^,]+,n904\.test,AAAA,NOERROR,[\d.]+,/);
    const js = await api.get('/api/queries/export?format=json&rcode=NXDOMAIN');
    expect(js.json<{ name: string }[]>()[0]?.name).toBe('nothing-here.test');
    expect((await api.get('/api/queries/export?format=xml')).status).toBe(400);
  });

  test("dotstub's own checks: left out of /api/queries and both exports unless asked (internal=1)", async () => {
    const probe = 'liveness.dotstub.resolver.arpa';
    const c = await UdpClient.open(h.dnsPort);
    try {
      for (let i = 0; i < 4; i++) await c.query(probe, { timeoutMs: 5000 });
      await c.query('n950.test', { timeoutMs: 5000 });
    } finally {
      c.close();
    }
    const names = (p: QueryPage): (string | null)[] => p.records.map((r) => r.name);
    const plain = (await api.get('/api/queries?limit=1000')).json<QueryPage>();
    expect(names(plain)).not.toContain(probe);
    expect(names(plain)[0]).toBe('n950.test');
    const asked = (await api.get('/api/queries?internal=1&limit=1000')).json<QueryPage>();
    expect(asked.total).toBe(plain.total + 4);
    expect(asked.records.filter((r) => r.name === probe).every((r) => r.internal === true)).toBe(true);
    expect((await api.get(`/api/queries?internal=1&name=${probe}`)).json<QueryPage>().total).toBe(4);
    expect((await api.get(`/api/queries?name=${probe}`)).json<QueryPage>().total).toBe(0);

    const csv = await api.get('/api/queries/export?format=csv');
    expect(csv.text).not.toContain(probe);
    const csvOwn = (await api.get('/api/queries/export?format=csv&internal=1')).text.trim().split('\r\n');
    expect(csvOwn[0]?.split(',').at(-1)).toBe('internal');
    expect(csvOwn.filter((l) => l.includes(probe)).map((l) => l.split(',').at(-1))).toEqual(['true', 'true', 'true', 'true']);
    expect((await api.get('/api/queries/export?format=json')).json<{ name: string }[]>().map((r) => r.name)).not.toContain(probe);
    expect((await api.get('/api/queries/export?format=json&internal=true')).json<{ name: string }[]>().filter((r) => r.name === probe)).toHaveLength(4);
    const bad = await api.get('/api/queries?internal=yes');
    expect(bad.status).toBe(400);
    expect(bad.json<ApiError>().error.fieldCodes).toEqual({ internal: 'bad_value' });
  });

  test('metrics: hit fraction, handshakes, per-resolver percentiles, series', async () => {
    const m = (await api.get('/api/metrics')).json<MetricsView>();
    expect(m.hitFraction.sinceStart).toBeGreaterThan(0.9);
    expect(m.hitFraction.last5m).toBeGreaterThan(0.9);
    expect(m.handshakes.full + m.handshakes.resumed).toBeGreaterThanOrEqual(2);
    const lb = m.latency[bId];
    expect(lb?.last5m.count).toBeGreaterThan(1000);
    expect(lb?.last1m.p50).toBeGreaterThan(0);
    expect(lb?.last5m.p50).toBeLessThanOrEqual(lb?.last5m.p95 ?? 0);
    expect(lb?.last5m.p95).toBeLessThanOrEqual(lb?.last5m.p99 ?? 0);
    expect(m.latency[`custom:127.0.0.1:${a.port}`]?.last5m.count).toBeGreaterThan(0);
    expect(m.series).toHaveLength(300);
    expect(m.series.reduce((s, p) => s + p.queries, 0)).toBeGreaterThan(5000);
    expect(m.padding.paddingBytes).toBeGreaterThan(0);
    expect(m.padding.overhead).toBeGreaterThan(0);
    expect(m.padding.overhead).toBeLessThan(1);
    expect(m.servfails).toBe(0);
    const rv = (await api.get('/api/resolvers')).json<ResolversView>().resolvers.find((r) => r.id === bId);
    expect(rv?.medianLatencyMs).toBeGreaterThan(0);
  });

  test('the stream delivers batches of query records, counters and events', async () => {
    const s = await openStream(h);
    try {
      expect(s.status).toBe(200);
      await waitFor(() => s.events.length >= 1, 2000, 'first batch');
      const first = JSON.parse(s.events[0]?.data ?? '{}') as StreamBatch;
      expect(first.queries).toEqual([]);
      expect(first.counters.queries).toBeGreaterThan(0);
      // Every view at once, so a client has everything before anything happens.
      expect(Object.keys(first.views ?? {}).sort()).toEqual(['connections', 'metrics', 'resolvers', 'settings', 'status']);
      expect(first.views?.status?.resolver.id).toBe(h.proxy.resolver.id);
      const c = await UdpClient.open(h.dnsPort);
      try {
        await Promise.all(Array.from({ length: 50 }, (_, i) => c.query(`n${500 + i}.test`)));
      } finally {
        c.close();
      }
      const names = (): Set<string> => {
        const out = new Set<string>();
        for (const e of s.events) for (const q of (JSON.parse(e.data) as StreamBatch).queries) if (q.name) out.add(q.name);
        return out;
      };
      await waitFor(() => names().size >= 50, 3000, '50 query records on the stream');
      // Batched: 50 queries arrive in a few messages, not 50.
      expect(s.events.length).toBeLessThan(20);
      expect((await api.put('/api/settings', { logSize: 5000 })).status).toBe(200);
      // Queries bring the views they change (metrics, connections, resolvers' medians), within the 2 s cadence.
      await waitFor(() => s.events.slice(1).some((e) => (JSON.parse(e.data) as StreamBatch).views?.metrics !== undefined), 3000, 'metrics after queries');
      const queried = s.events.slice(1).map((e) => JSON.parse(e.data) as StreamBatch).find((b) => b.views?.metrics);
      expect(Object.keys(queried?.views ?? {})).toEqual(expect.arrayContaining(['connections', 'metrics', 'resolvers']));
      await waitFor(
        () => s.events.some((e) => (JSON.parse(e.data) as StreamBatch).events.some((ev) => ev.kind === 'settings')),
        3000,
        'settings event on the stream',
      );
      // The batch with the event carries the new settings and the status with them.
      const withEvent = s.events.map((e) => JSON.parse(e.data) as StreamBatch).find((b) => b.events.some((ev) => ev.kind === 'settings'));
      expect(withEvent?.views?.settings?.logSize).toBe(5000);
      expect(withEvent?.views?.status).toBeDefined();
      for (const e of s.events) expect(e.event).toBe('batch');
    } finally {
      s.close();
    }
  });

  test('strict mode refuses to add a resolver it cannot verify, and to switch to one added in opportunistic mode', async () => {
    const strictAdd = await api.post('/api/resolvers', { address: '127.0.0.1', port: 9 });
    expect(strictAdd.status).toBe(400);
    expect(strictAdd.json<ApiError>().error.fieldCodes).toEqual({ authName: 'not_allowed' });
    expect((await api.put('/api/settings', { mode: 'opportunistic' })).status).toBe(200);
    const added = await api.post('/api/resolvers', { address: '127.0.0.1', port: 9 });
    expect(added.status).toBe(201);
    expect((await api.put('/api/settings', { mode: 'strict' })).status).toBe(200);
    const id = added.json<ResolverView>().id;
    const r = await api.put('/api/resolvers/active', { id });
    expect(r.status).toBe(409);
    expect(r.json<ApiError>().error.code).toBe('resolver_unverifiable');
    expect(h.proxy.resolver.id).toBe(bId);
    const unknown = await api.put('/api/resolvers/active', { id: 'nope' });
    expect([unknown.status, unknown.json<ApiError>().error.code]).toEqual([404, 'unknown_resolver']);
    // A body that isn't { id } changes nothing and says which field.
    const wrongBody = await api.put('/api/resolvers/active', { id: 5, extra: true });
    expect(wrongBody.json<ApiError>().error.fieldCodes).toEqual({ id: 'wrong_type', extra: 'unknown_field' });
    const noId = await api.put('/api/resolvers/active', {});
    expect(noId.json<ApiError>().error.fieldCodes).toEqual({ id: 'required' });
    expect(h.proxy.resolver.id).toBe(bId);
    expect((await api.del(`/api/resolvers/${encodeURIComponent(id)}`)).status).toBe(204);
  });
});

describe('persistence across restarts', () => {
  test('settings, custom resolvers and the active choice survive a restart', async () => {
    const dir = tempConfigDir();
    const first = await startControl({ resolverArg: a.resolverArg, configDir: dir });
    let id: string;
    try {
      const api = apiClient(first);
      id = (await api.post('/api/resolvers', { label: 'B', address: '127.0.0.1', port: b.port, authName: 'dns.test' })).json<ResolverView>().id;
      expect((await api.put('/api/resolvers/active', { id })).status).toBe(200);
      expect((await api.put('/api/settings', { padding: false, logSize: 2000, idleTimeoutSec: 42 })).status).toBe(200);
    } finally {
      await first.stop();
    }
    const second = await startControl({ configDir: dir });
    try {
      const api = apiClient(second);
      expect(second.token).toBe(first.token);
      expect((await api.get('/api/settings')).json<Settings>()).toMatchObject({ padding: false, logSize: 2000, idleTimeoutSec: 42, poolSize: 1 });
      const rs = (await api.get('/api/resolvers')).json<ResolversView>();
      expect(rs.active).toBe(id);
      expect(rs.resolvers.find((r) => r.id === id)?.label).toBe('B');
      expect(second.service.log.capacity).toBe(2000);
      expect(second.proxy.engine.options.padding).toBe(false);
      const c = await UdpClient.open(second.dnsPort);
      try {
        expect(firstA(await c.query('which.test'))).toBe('198.51.100.2');
      } finally {
        c.close();
      }
      expect(fs.statSync(path.join(dir, 'token')).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.join(dir, 'settings.json')).mode & 0o777).toBe(0o600);
    } finally {
      await second.stop();
    }
  });

  test('a corrupt settings file is reported, the last good settings are used, and the file is kept', async () => {
    const dir = tempConfigDir();
    const first = await startControl({ resolverArg: a.resolverArg, configDir: dir });
    try {
      expect((await apiClient(first).put('/api/settings', { poolSize: 3, recordNames: false })).status).toBe(200);
    } finally {
      await first.stop();
    }
    const file = path.join(dir, 'settings.json');
    const corrupt = '{ "poolSize": 3, "recordNames": false,, oops';
    fs.writeFileSync(file, corrupt);
    const second = await startControl({ resolverArg: a.resolverArg, configDir: dir });
    try {
      const api = apiClient(second);
      const status = (await api.get('/api/status')).json<StatusView>();
      expect(status.problems).toHaveLength(1);
      expect(status.problems?.[0]?.file).toBe(file);
      expect(status.problems?.[0]?.message).toMatch(/not valid JSON/);
      expect(status.problems?.[0]?.using).toMatch(/last good copy/);
      // Nothing lost: the saved values, not defaults.
      expect((await api.get('/api/settings')).json<Settings>()).toMatchObject({ poolSize: 3, recordNames: false });
      expect(fs.readFileSync(file, 'utf8')).toBe(corrupt);
      // A save from the dashboard moves the bad file aside, never deletes it.
      expect((await api.put('/api/settings', { padding: false })).status).toBe(200);
      const rejected = fs.readdirSync(dir).filter((f) => f.startsWith('settings.json.rejected-'));
      expect(rejected).toHaveLength(1);
      expect(fs.readFileSync(path.join(dir, rejected[0] as string), 'utf8')).toBe(corrupt);
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ poolSize: 3, recordNames: false, padding: false });
      expect((await api.get('/api/status')).json<StatusView>().problems).toBeUndefined();
    } finally {
      await second.stop();
    }
  });

  test('a hand-edited settings file with bad values is reported field by field; a bad resolvers file too', async () => {
    const dir = tempConfigDir();
    fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ poolSize: 99, mode: 'paranoid', padding: true }));
    fs.writeFileSync(path.join(dir, 'resolvers.json'), JSON.stringify({ active: 'x', custom: [{ id: 'x', label: 'x', addresses: ['not-an-ip'], port: 853, authName: null, pins: [] }] }));
    const h = await startControl({ resolverArg: a.resolverArg, configDir: dir });
    try {
      const status = (await apiClient(h).get('/api/status')).json<StatusView>();
      const [sp, rp] = status.problems ?? [];
      expect(sp?.fields.poolSize).toMatch(/at most 16/);
      expect(sp?.fields.mode).toMatch(/strict/);
      expect(sp?.using).toMatch(/defaults/);
      expect(rp?.file).toMatch(/resolvers\.json$/);
      expect(rp?.fields['custom.0']).toMatch(/not an IP address/);
      expect(status.resolver.id).toBe(`custom:127.0.0.1:${a.port}`);
    } finally {
      await h.stop();
    }
  });
});
