/**
 * "Test resolvers" (POST /api/resolvers/test) against real unbound servers
 * on loopback, two of them behind relays that add 2 ms and 40 ms each way:
 * ranked fastest first, DoT and DoH both measured, a resolver that refuses
 * reported with the reason, presets (which point at the Internet) listed as
 * not measured with nothing sent to them (--measure-only-local), and the
 * active upstream untouched (no new handshake, same connection).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiClient, startControl, type ControlHarness } from '../../test-support/control-harness.js';
import { startDelayRelay, type DelayRelay } from '../../test-support/delay-relay.js';
import { waitForState } from '../../test-support/proxy-harness.js';
import { freePort, startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import type { ResolverTestResult, ResolverView, ConnectionView, SwitchProbeView } from './api-types.js';
import { PRESETS } from '../config/resolvers.js';

let active: UnboundServer;
let far: UnboundServer;
let near: UnboundServer;
const relays: DelayRelay[] = [];
let h: ControlHarness;

beforeAll(async () => {
  [active, far, near] = await Promise.all([startUnbound({ names: 5 }), startUnbound({ names: 5, dohPort: 0 }), startUnbound({ names: 5, dohPort: 0 })]);
  h = await startControl({ resolverArg: active.resolverArg, overrides: { mode: 'strict' } });
  await waitForState(h.proxy, 'private', 5000);
}, 30_000);
afterAll(async () => {
  await h?.stop();
  for (const r of relays) await r.close();
  await Promise.all([active?.stop(), far?.stop(), near?.stop()]);
});

async function relay(port: number, oneWayMs: number): Promise<number> {
  const r = await startDelayRelay(port, oneWayMs);
  relays.push(r);
  return r.port;
}

describe('POST /api/resolvers/test', () => {
  test('ranks by measured latency, DoT and DoH, says why one failed, sends nothing to presets, leaves the active upstream alone', async () => {
    const api = apiClient({ ...h, origin: h.origin });
    const add = async (label: string, port: number, dohPort?: number): Promise<ResolverView> => {
      const res = await api.post('/api/resolvers', {
        label,
        address: '127.0.0.1',
        port,
        authName: 'dns.test',
        ...(dohPort ? { dohUrl: `https://dns.test:${dohPort}/dns-query` } : {}),
      });
      expect(res.status, res.text).toBe(201);
      return res.json<ResolverView>();
    };
    await add('Far lab', await relay(far.port, 40), await relay(far.dohPort as number, 40));
    await add('Near lab', await relay(near.port, 2), await relay(near.dohPort as number, 2));
    await add('Dead lab', await freePort());
    const before = (await api.get('/api/connections')).json<ConnectionView[]>();
    const handshakes = h.proxy.counters.handshakesFull + h.proxy.counters.handshakesResumed;

    const res = await api.post('/api/resolvers/test');
    expect(res.status, res.text).toBe(200);
    const r = res.json<ResolverTestResult>();
    const byLabel = new Map(r.resolvers.map((m) => [m.label, m]));
    const ranked = r.resolvers.filter((m) => m.rank !== null).map((m) => m.label);
    // The active one (no delay) and Near (2 ms each way) ahead of Far (40 ms each way).
    expect(ranked.at(-1)).toBe('Far lab');
    expect(ranked.indexOf('Near lab')).toBeLessThan(ranked.indexOf('Far lab'));
    expect(ranked).toHaveLength(3);
    const farM = byLabel.get('Far lab');
    expect(farM?.transports.map((t) => [t.transport, t.ok])).toEqual([['dot', true], ['doh', true]]);
    // A warm query costs one round trip (≥ 80 ms here); a fresh one, the handshake's round trips more.
    for (const t of farM?.transports ?? []) {
      expect(t.warmMs).toBeGreaterThanOrEqual(80);
      expect(t.freshMs).toBeGreaterThan(t.warmMs as number);
      expect(t.samples.warm).toHaveLength(5);
      expect(t.samples.fresh).toHaveLength(2);
    }
    expect(byLabel.get('Near lab')?.bestMs).toBeLessThan(40);
    const dead = byLabel.get('Dead lab');
    expect(dead).toMatchObject({ measured: true, rank: null, bestMs: null });
    expect(dead?.transports[0]).toMatchObject({ ok: false, kind: 'refused' });
    expect(dead?.transports[0]?.error).toMatch(/refuses encrypted DNS connections/);
    // Presets: listed, not measured, nothing sent.
    for (const p of Object.values(PRESETS)) {
      expect(byLabel.get(p.label)).toMatchObject({ measured: false, transports: [], rank: null });
      expect(byLabel.get(p.label)?.skipped).toMatch(/not on this machine/);
    }
    // Failed ones after the ranked, then the ones not measured.
    expect(r.resolvers.map((m) => (m.rank !== null ? 'ranked' : m.measured ? 'failed' : 'skipped'))).toEqual([
      'ranked', 'ranked', 'ranked', 'failed', ...Object.values(PRESETS).map(() => 'skipped'),
    ]);
    // The active upstream: the same connection, no handshake of the test's counted as the proxy's.
    const after = (await api.get('/api/connections')).json<ConnectionView[]>();
    expect(after.map((c) => c.id)).toEqual(before.map((c) => c.id));
    expect(h.proxy.counters.handshakesFull + h.proxy.counters.handshakesResumed).toBe(handshakes);
    expect(r.activeId).toBe(h.proxy.resolver.id);
    expect(r.tookMs).toBeLessThan(20_000);
  }, 40_000);
});

describe('GET /api/resolvers/test (issue 29: results were lost on restart)', () => {
  test('the last test is kept in the config dir and read back after a restart; a broken file is left unused', async () => {
    const first = await startControl({ resolverArg: active.resolverArg, overrides: { mode: 'strict' } });
    const file = path.join(first.configDir, 'last-resolver-test.json');
    let ran: ResolverTestResult;
    try {
      const api = apiClient({ ...first, origin: first.origin });
      expect((await api.get('/api/resolvers/test')).json()).toBeNull();
      ran = (await api.post('/api/resolvers/test')).json<ResolverTestResult>();
      expect((await api.get('/api/resolvers/test')).json<ResolverTestResult>().startedAt).toBe(ran.startedAt);
      await expect.poll(() => fs.existsSync(file)).toBe(true);
    } finally {
      await first.stop();
    }
    const again = await startControl({ resolverArg: active.resolverArg, overrides: { mode: 'strict' }, configDir: first.configDir });
    try {
      expect((await apiClient({ ...again, origin: again.origin }).get('/api/resolvers/test')).json<ResolverTestResult>()).toEqual(ran);
    } finally {
      await again.stop();
    }
    fs.writeFileSync(file, '{"startedAt": "yesterday"}');
    const broken = await startControl({ resolverArg: active.resolverArg, overrides: { mode: 'strict' }, configDir: first.configDir });
    try {
      expect((await apiClient({ ...broken, origin: broken.origin }).get('/api/resolvers/test')).json()).toBeNull();
    } finally {
      await broken.stop();
    }
  });
});

describe('POST /api/resolvers/probe (before a switch, issue 24 item 3)', () => {
  test('a live resolver answers; a refused one says why within about a second; a preset is not probed; nothing is switched', async () => {
    const api = apiClient({ ...h, origin: h.origin });
    const resolvers = (await api.get('/api/resolvers')).json<{ active: string; resolvers: ResolverView[] }>();
    const added = async (label: string, port: number): Promise<ResolverView> => {
      const existing = resolvers.resolvers.find((r) => r.label === label);
      if (existing) return existing;
      const res = await api.post('/api/resolvers', { label, address: '127.0.0.1', port, authName: 'dns.test' });
      expect(res.status, res.text).toBe(201);
      return res.json<ResolverView>();
    };
    const live = await added('Probe live', near.port);
    const dead = await added('Probe dead', await freePort());

    const ok = (await api.post('/api/resolvers/probe', { id: live.id })).json<SwitchProbeView>();
    expect(ok).toMatchObject({ id: live.id, probed: true, ok: true, why: null });
    expect(ok.ms).toBeGreaterThan(0);

    const t0 = performance.now();
    const refused = (await api.post('/api/resolvers/probe', { id: dead.id })).json<SwitchProbeView>();
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(refused).toMatchObject({ id: dead.id, label: 'Probe dead', probed: true, ok: false, why: 'connection refused' });

    const preset = (await api.post('/api/resolvers/probe', { id: PRESETS.quad9!.id })).json<SwitchProbeView>();
    expect(preset).toMatchObject({ probed: false, ok: true });

    expect((await api.post('/api/resolvers/probe', { id: 'nope' })).status).toBe(404);
    expect((await api.get('/api/resolvers')).json<{ active: string }>().active).toBe(resolvers.active);
  });
});
