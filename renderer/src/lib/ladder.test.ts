import { describe, expect, it } from 'vitest';
import type { LadderStep } from '../../../proxy/control/api-types.js';
import { status } from './fixtures.test-helpers.js';
import { formatDuration, ladderLines, raceModel, transportModel } from './ladder.js';

const step = (over: Partial<LadderStep>): LadderStep => ({
  transport: 'dot',
  address: '9.9.9.9',
  at: 0,
  ok: false,
  ms: 2500,
  resumed: null,
  kind: 'dropped',
  classification: 'NET_DROPPED',
  sentence: 'Port 853 gets no answer here: this network probably blocks encrypted DNS to Quad9.',
  attempts: 1,
  ...over,
});

const quad9 = status().resolver;
const withDoh = { ...quad9, dohUrl: 'https://dns.quad9.net/dns-query' };

describe('ladderLines', () => {
  it('says what each try met, in order, with timings', () => {
    const lines = ladderLines(
      status({
        resolver: withDoh,
        ladder: [
          step({ attempts: 3 }),
          step({ address: '2620:fe::fe', kind: 'unreachable', ms: 3 }),
          step({ transport: 'doh', ok: true, ms: 142, kind: null, sentence: null }),
        ],
      }),
    );
    expect(lines.map((l) => `${l.target}: ${l.outcome}`)).toEqual([
      'DNS-over-TLS (port 853) to 9.9.9.9: no answer after 2.5 s — probably blocked',
      'DNS-over-TLS (port 853) to 2620:fe::fe: no route to it',
      'DNS-over-HTTPS (port 443) to dns.quad9.net (9.9.9.9): OK in 142 ms',
    ]);
    expect(lines[0]).toMatchObject({ tone: 'danger', attempts: '3 attempts in a row', detail: expect.stringContaining('probably blocks') });
    expect(lines[2]).toMatchObject({ tone: 'good', detail: null, attempts: null });
  });

  it('durations read at a glance', () => {
    expect(formatDuration(142.4)).toBe('142 ms');
    expect(formatDuration(2500)).toBe('2.5 s');
    expect(formatDuration(3000)).toBe('3 s');
  });
});

describe('transportModel', () => {
  it('DoT: the first choice works', () => {
    expect(transportModel(status({ resolver: withDoh, transport: 'dot' }))).toMatchObject({ carrier: 'DNS-over-TLS (port 853)', why: expect.stringContaining('port 853 works here') });
  });

  it('DoH: says the fallback’s reason', () => {
    const m = transportModel(status({ resolver: withDoh, transport: 'doh', transportReason: 'port 853 is blocked here; using DNS-over-HTTPS on 443' }));
    expect(m).toEqual({ transport: 'doh', carrier: 'DNS-over-HTTPS (port 443)', why: 'Port 853 is blocked here; using DNS-over-HTTPS on 443.' });
  });

  it('none: and no fallback for a resolver without a DoH URL', () => {
    const m = transportModel(status({ state: 'blocked', transport: null }));
    expect(m.carrier).toBe('None connected');
    expect(m.why).toContain('Quad9 has no DNS-over-HTTPS address');
  });
});

describe('raceModel', () => {
  it('is null when no connection raced more than one address', () => {
    expect(raceModel(null)).toBeNull();
  });

  it('says which family won and what each address met, in the order tried', () => {
    const m = raceModel({
      at: 1_000,
      transport: 'dot',
      winner: '9.9.9.9',
      afterMs: 291,
      attempts: [
        { address: '2620:fe::fe', startMs: 0, afterMs: 3, outcome: 'failed', kind: 'unreachable', classification: 'NET_UNREACHABLE', sentence: 'no route' },
        { address: '9.9.9.9', startMs: 3, afterMs: 288, outcome: 'won', kind: null, classification: null, sentence: null },
      ],
    });
    expect(m?.summary).toBe('IPv4 9.9.9.9 won after 291 ms, over DNS-over-TLS');
    expect(m?.lines.map((l) => [l.tone, l.family, l.outcome])).toEqual([
      ['danger', 'IPv6 2620:fe::fe', 'tried at 0 ms, no route to it'],
      ['good', 'IPv4 9.9.9.9', 'tried at 3 ms, won after 288 ms'],
    ]);
  });

  it('an address still connecting when another won is "not needed", not a failure', () => {
    const m = raceModel({
      at: 1_000,
      transport: 'doh',
      winner: '2620:fe::fe',
      afterMs: 120,
      attempts: [
        { address: '2620:fe::fe', startMs: 0, afterMs: 120, outcome: 'won', kind: null, classification: null, sentence: null },
        { address: '9.9.9.9', startMs: 250, afterMs: null, outcome: 'abandoned', kind: null, classification: null, sentence: null },
      ],
    });
    expect(m?.summary).toBe('IPv6 2620:fe::fe won after 120 ms, over DNS-over-HTTPS');
    expect(m?.lines[1]).toMatchObject({ tone: 'neutral', outcome: 'tried at 250 ms, not needed: another address won first' });
  });
});
