import { describe, expect, it } from 'vitest';
import type { ConnectionView, TimelineEvent } from '../../../proxy/control/api-types.js';
import { status } from './fixtures.test-helpers.js';
import { nameWithPort, switchBackTo, switchOutcome, type SwitchAttempt } from './resolver-switch.js';

const attempt: SwitchAttempt = { to: { id: 'dead', label: 'Dead lab' }, from: { id: 'quad9', label: 'Quad9' }, at: 10_000 };

function conn(over: Partial<ConnectionView> = {}): ConnectionView {
  return {
    id: 7,
    resolverId: 'dead',
    address: '127.0.0.1:1',
    state: 'open',
    ageMs: 10,
    queriesCarried: 1,
    inFlight: 0,
    resumed: false,
    verified: true,
    tlsVersion: 'TLSv1.3',
    cipher: null,
    keyGroup: null,
    classicalOnly: null,
    keepaliveMs: null,
    idleTimeoutMs: 60_000,
    burst: false,
    ...over,
  };
}

function failed(at: number, resolverId = 'dead'): TimelineEvent {
  return {
    kind: 'connection',
    event: { type: 'connect-failed', at, resolverId, address: '127.0.0.1:1', code: 'DOTSTUB_CONNECT_FAILED', message: 'connect ECONNREFUSED 127.0.0.1:1', retryInMs: 2000, transport: 'dot' as const, afterMs: 1, kind: 'refused' as const, classification: 'NET_REFUSED', sentence: 'This network refuses encrypted DNS connections (port 853).' },
  };
}

describe('switchOutcome', () => {
  it('is pending until the new resolver connects or fails', () => {
    expect(switchOutcome(attempt, [], [], status())).toEqual({ kind: 'pending' });
  });

  it('is connected once a connection to the new resolver is open', () => {
    expect(switchOutcome(attempt, [conn({ resolverId: 'quad9' }), conn()], [], status()).kind).toBe('connected');
    expect(switchOutcome(attempt, [conn({ state: 'connecting' })], [], status()).kind).toBe('pending');
  });

  it('fails on a connect failure to the new resolver after the switch, in words, with when it retries', () => {
    expect(switchOutcome(attempt, [], [failed(11_000)], status())).toEqual({
      kind: 'failed',
      reason: 'couldn’t connect to the resolver',
      address: '127.0.0.1:1',
      retryAt: 13_000,
    });
  });

  it('ignores failures of other resolvers and failures from before the switch', () => {
    expect(switchOutcome(attempt, [], [failed(11_000, 'quad9'), failed(5_000)], status()).kind).toBe('pending');
  });

  it('a later open connection wins over an earlier failure; an earlier one does not', () => {
    const opened: TimelineEvent = {
      kind: 'connection',
      event: { type: 'open', at: 12_000, resolverId: 'dead', connectionId: 7, address: '127.0.0.1:1', transport: 'dot', resumed: false, verified: true, authError: null, tlsVersion: 'TLSv1.3', cipher: 'TLS_AES_128_GCM_SHA256', keyGroup: 'X25519', classicalOnly: null, handshakeMs: 2, burst: false },
    };
    expect(switchOutcome(attempt, [conn()], [failed(11_000), opened], status()).kind).toBe('connected');
    expect(switchOutcome(attempt, [conn()], [failed(13_000), opened], status()).kind).toBe('failed');
  });

  it('fails when the proxy says the new resolver is blocked, even before an event arrives', () => {
    const s = status({ state: 'blocked', since: 10_200, reason: 'port 853 timed out', resolver: { ...status().resolver, id: 'dead' } });
    expect(switchOutcome(attempt, [], [], s)).toEqual({ kind: 'failed', reason: 'port 853 timed out', address: null, retryAt: null });
  });

  it('a blocked state left over from before the switch is not its failure (switching back from a dead resolver)', () => {
    const s = status({ state: 'blocked', since: 2_000, reason: 'port 853 timed out', resolver: { ...status().resolver, id: 'dead' } });
    expect(switchOutcome(attempt, [], [], s)).toEqual({ kind: 'pending' });
  });
});

describe('nameWithPort', () => {
  it('says the name and where, never a bare address', () => {
    expect(nameWithPort('Dead end', '127.0.0.1', 40123)).toBe('Dead end (127.0.0.1:40123)');
    expect(nameWithPort('dns.test (127.0.0.1)', '127.0.0.1:853', 853)).toBe('dns.test (127.0.0.1:853)');
    expect(nameWithPort('v6', '::1', 853)).toBe('v6 ([::1]:853)');
    expect(nameWithPort('v6', '[::1]:853', 853)).toBe('v6 ([::1]:853)');
    expect(nameWithPort('Quad9', null, 853)).toBe('Quad9 (port 853)');
  });
});

describe('switchBackTo', () => {
  const quad9 = status().resolver;
  const dead = { ...quad9, id: 'dead', label: 'Dead lab', preset: false };
  it('offers the one in use before the last switch, from the server, whoever switched', () => {
    expect(switchBackTo({ previous: 'quad9', resolvers: [quad9, dead] }, 'dead')).toBe(quad9);
  });
  it('offers nothing before any switch, for a resolver no longer listed, or the active one itself', () => {
    expect(switchBackTo({ previous: null, resolvers: [quad9, dead] }, 'dead')).toBeNull();
    expect(switchBackTo({ previous: 'gone', resolvers: [quad9, dead] }, 'dead')).toBeNull();
    expect(switchBackTo({ previous: 'dead', resolvers: [quad9, dead] }, 'dead')).toBeNull();
    expect(switchBackTo(null, 'dead')).toBeNull();
  });
});
