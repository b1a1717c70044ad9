import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../../../proxy/control/api-types.js';
import { lastFailure, recovery, retryText } from './retry.js';

function failed(at: number, retryInMs: number, resolverId = 'lab'): TimelineEvent {
  return {
    kind: 'connection',
    event: { type: 'connect-failed', at, resolverId, address: '127.0.0.1:1', code: 'DOTSTUB_CONNECT_FAILED', message: 'refused', retryInMs, transport: 'dot' as const, afterMs: 1, kind: 'refused' as const, classification: 'NET_REFUSED', sentence: 'This network refuses encrypted DNS connections (port 853).' },
  };
}

describe('retry countdown', () => {
  it('counts down from the event time, then says it is retrying', () => {
    expect(retryText(20_000, 4_000)).toBe('retrying by itself in 16 s, or with the next lookup');
    expect(retryText(20_000, 10_500)).toBe('retrying by itself in 10 s, or with the next lookup');
    // Lookups are starting attempts about once a second: said as that, not as a jumping countdown.
    expect(retryText(40_000, 10_500, [10_000, 9_000])).toBe('retrying with each lookup, about once a second');
    // Idle again: the last attempt is old, or the attempts were far apart.
    expect(retryText(20_000, 14_000, [10_000, 9_000])).toBe('retrying by itself in 6 s, or with the next lookup');
    expect(retryText(20_000, 10_500, [10_000, 5_000])).toBe('retrying by itself in 10 s, or with the next lookup');
    expect(retryText(20_000, 19_400)).toBe('retrying now…');
    expect(retryText(20_000, 25_000)).toBe('retrying now…');
  });

  it('uses the newest failure of that resolver since the given time', () => {
    const events = [failed(1000, 500), failed(3000, 16_000), failed(4000, 1000, 'other')];
    expect(lastFailure(events, 'lab', 0)).toEqual({ at: 3000, code: 'DOTSTUB_CONNECT_FAILED', address: '127.0.0.1:1', retryAt: 19_000 });
    expect(lastFailure(events, 'lab', 3500)).toBeNull();
  });

  it('the banner reason counts down while blocked, and defers to the proxy otherwise', () => {
    const blocked = { state: 'blocked' as const, since: 3000, resolver: { id: 'lab', label: 'Lab', port: 853 } };
    const events = [failed(3000, 16_000)];
    expect(recovery(blocked, events)).toEqual({ reason: 'Couldn’t connect to the resolver: Lab (127.0.0.1:853); queries get SERVFAIL,', retryAt: 19_000, attempts: [3000] });
    expect(retryText(19_000, 12_000)).toBe('retrying by itself in 7 s, or with the next lookup');
    expect(recovery({ ...blocked, state: 'private' }, events)).toBeNull();
    expect(recovery(blocked, [])).toBeNull();
  });
});
