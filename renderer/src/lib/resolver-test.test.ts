import { describe, expect, it } from 'vitest';
import type { ResolverMeasurement, ResolverTestResult, TransportMeasurement } from '../../../proxy/control/api-types.js';
import { cardMeasures, cardOrder, cardScale, testModel } from './resolver-test.js';

const t = (transport: 'dot' | 'doh', warmMs: number | null, freshMs: number | null, error: string | null = null): TransportMeasurement => ({
  transport,
  ok: error === null,
  warmMs,
  freshMs,
  samples: { fresh: [], warm: [] },
  kind: error === null ? null : 'refused',
  error,
});

const m = (id: string, rank: number | null, transports: TransportMeasurement[], measured = true): ResolverMeasurement => ({
  id,
  label: id.toUpperCase(),
  measured,
  skipped: measured ? null : 'not on this machine',
  transports,
  bestMs: rank === null ? null : Math.min(...transports.filter((x) => x.ok).map((x) => x.warmMs as number)),
  rank,
});

const result: ResolverTestResult = {
  startedAt: 0,
  tookMs: 900,
  activeId: 'b',
  resolvers: [
    m('a', 1, [t('dot', 4, 60), t('doh', 14, 26)]),
    m('b', 2, [t('dot', 82, 203)]),
    m('dead', null, [t('dot', null, null, 'This network refuses encrypted DNS connections to DEAD (port 1).')]),
    m('quad9', null, [], false),
  ],
};

describe('cardScale', () => {
  it('one figure per card, on one scale: the test’s best open-connection figure after a test, else the 5-minute medians', () => {
    expect(cardScale(result, [300, null])).toEqual({ source: 'test', scale: { maxMs: 100, label: '100 ms' } });
    expect(cardScale(null, [300, null])).toEqual({ source: 'median', scale: { maxMs: 500, label: '500 ms' } });
    const bars = cardMeasures(testModel(result, 'b'), result, () => '23:05');
    expect(bars.get('b')).toMatchObject({ kind: 'ranked', bestMs: 82, best: '82.0 ms' });
  });
});

describe('testModel', () => {
  it('ranks with bars on one scale, says why failures failed, and offers the fastest', () => {
    const model = testModel(result, 'b');
    expect(model.scale?.label).toBe('100 ms');
    expect(model.ranked.map((r) => [r.label, r.rank, r.best, r.versus])).toEqual([
      ['A', 1, '4.00 ms', null],
      ['B', 2, '82.0 ms', '21× the fastest'],
    ]);
    expect(model.ranked[0]?.bars.map((b) => [b.name, b.share, b.text])).toEqual([
      ['DoT', 0.04, '4.00 ms on an open connection · 60.0 ms new'],
      ['DoH', 0.14, '14.0 ms on an open connection · 26.0 ms new'],
    ]);
    expect(model.failed).toEqual([{ id: 'dead', label: 'DEAD', active: false, why: 'DoT: This network refuses encrypted DNS connections to DEAD (port 1).' }]);
    expect(model.skipped).toEqual({ labels: ['QUAD9'], why: 'not on this machine' });
    expect(model.suggestion).toEqual({ id: 'a', label: 'A', gain: '4.00 ms instead of 82.0 ms per query on an open connection' });
  });

  it('a lead within the noise is a tie, not "the fastest": 0.07 ms apart offers nothing and says so; 2 ms apart still offers the switch', () => {
    const close: ResolverTestResult = { ...result, resolvers: [m('a', 1, [t('dot', 4.02, 60)]), m('b', 2, [t('dot', 4.09, 61)])] };
    const model = testModel(close, 'b');
    expect(model.suggestion).toBeNull();
    expect(model.tie).toEqual({ fastest: 'A', active: 'B', apart: '0.07 ms' });
    const clear: ResolverTestResult = { ...result, resolvers: [m('a', 1, [t('dot', 4, 60)]), m('b', 2, [t('dot', 6, 61)])] };
    expect(testModel(clear, 'b').suggestion?.id).toBe('a');
    expect(testModel(clear, 'b').tie).toBeNull();
  });

  it('no suggestion when the one in use is the fastest', () => {
    expect(testModel(result, 'a').suggestion).toBeNull();
  });
});

describe('on the cards (issue 24 item 10)', () => {
  it('each resolver gets its rank and bars, unreachable with when, or not measured', () => {
    const cards = cardMeasures(testModel(result, 'b'), result, () => '23:05');
    expect(cards.get('a')).toMatchObject({ kind: 'ranked', rank: 1, fastest: true });
    expect(cards.get('b')).toMatchObject({ kind: 'ranked', rank: 2, fastest: false, versus: '21× the fastest' });
    expect(cards.get('dead')).toMatchObject({ kind: 'failed', text: 'unreachable: connection refused at 23:05' });
    expect(cards.get('quad9')).toEqual({ kind: 'skipped', why: 'not on this machine' });
  });

  it('the one in use first, then fastest first; as listed before any test', () => {
    const items = [{ id: 'quad9' }, { id: 'dead' }, { id: 'b' }, { id: 'a' }, { id: 'new' }];
    expect(cardOrder(items, 'b', result).map((x) => x.id)).toEqual(['b', 'a', 'dead', 'quad9', 'new']);
    expect(cardOrder(items, 'dead', null).map((x) => x.id)).toEqual(['dead', 'quad9', 'b', 'a', 'new']);
  });

  it("the user's own resolvers before the presets, where no test orders them", () => {
    const items = [{ id: 'quad9', preset: true }, { id: 'cloudflare', preset: true }, { id: 'mine', preset: false }, { id: 'office', preset: false }];
    expect(cardOrder(items, 'cloudflare', null).map((x) => x.id)).toEqual(['cloudflare', 'mine', 'office', 'quad9']);
  });
});
