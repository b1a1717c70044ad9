import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../../../proxy/control/api-types.js';
import { formatDateTime } from './format.js';
import { storyline } from './storyline.js';

const at = (s: number): number => new Date(2026, 10, 22, 7, 45, s).getTime();

function failed(s: number, resolverId = 'lab', code = 'DOTSTUB_CONNECT_FAILED'): TimelineEvent {
  return { kind: 'connection', event: { type: 'connect-failed', at: at(s), resolverId, address: '127.0.0.1:1', code, message: 'refused', retryInMs: 2000, transport: 'dot' as const, afterMs: 1, kind: 'refused' as const, classification: 'NET_REFUSED', sentence: 'This network refuses encrypted DNS connections (port 853).' } };
}
function closed(s: number, connectionId: number, queriesCarried = 0): TimelineEvent {
  return { kind: 'connection', event: { type: 'close', at: at(s), connectionId, resolverId: 'lab', reason: 'error', failed: 0, queriesCarried, error: 'refused' } };
}
function state(s: number, previous: 'private' | 'blocked', now: 'private' | 'blocked'): TimelineEvent {
  return { kind: 'state', event: { state: now, previous, reason: 'r', at: at(s), resolverId: 'lab' } };
}
const names = (id: string): string => (id === 'lab' ? 'Lab' : id);
const all = { kind: 'all', hideKeepalive: true } as const;

describe('storyline', () => {
  it('private DNS turned back on after a crash is a line even while the state has not moved yet (the first connection still opening): its reason says why', () => {
    const resumed: TimelineEvent = {
      kind: 'state',
      event: { state: 'off', previous: 'off', reason: 'private DNS was turned back on at 07:45: dotstub (process 7) stopped unexpectedly at 07:44, and the old DNS had been given back meanwhile', at: at(1), resolverId: 'lab' },
      takeover: { action: 'turned-back-on' },
    };
    const lines = storyline([resumed, state(2, 'blocked', 'private')], names, all);
    expect(lines.map((l) => l.line.title)).toEqual(['Privacy: Stopped → Private', 'Turned back on']);
    expect(lines[1]!.line.detail).toContain('Privacy: still Off. Private DNS was turned back on at 07:45: dotstub (process 7) stopped unexpectedly');
  });

  it('one line per retry cycle, counting its attempts, and no "still blocked" non-changes', () => {
    const events = [
      state(0, 'private', 'blocked'),
      failed(1),
      closed(1, 2),
      state(1, 'blocked', 'blocked'),
      failed(3),
      closed(3, 3),
      state(3, 'blocked', 'blocked'),
      failed(7),
      closed(7, 4),
    ];
    const lines = storyline(events, names, all);
    expect(lines.map((l) => [l.line.kind, l.count])).toEqual([
      ['connection', 3],
      ['state', 1],
    ]);
    expect(lines[0]!.line.title).toBe('Could not connect to Lab at 127.0.0.1:1: couldn’t connect to the resolver');
    expect(lines[0]!.line.detail).toBe('Refused. 3 attempts since 07:45:01, the last at 07:45:07: backing off while idle (at most 10 s apart), retrying by itself by 07:45:09, or with the next lookup.');
    // Attempts about a second apart were lookups': said so, with no "next at" that lookups overtake.
    const busy = storyline([failed(1), failed(2), failed(3)], names, all);
    expect(busy[0]!.line.detail).toBe('Refused. 3 attempts since 07:45:01, the last at 07:45:03: retrying with each lookup, about once a second.');
    expect(lines[1]!.line.title).toBe('Privacy: Private → Stopped');
  });

  it('an outage under lookups is one line, keyed by its first attempt: the closes of connections that never opened carried lookups, and fold in too', () => {
    // The first attempt, then the state change it caused, then more attempts: the cycle is one line, above the change.
    const events = [failed(1), state(1, 'private', 'blocked'), closed(1, 2, 1), failed(2), closed(2, 3, 1)];
    const before = storyline(events, names, all);
    expect(before.map((l) => [l.line.kind, l.count])).toEqual([
      ['connection', 2],
      ['state', 1],
    ]);
    const after = storyline([...events, failed(3), closed(3, 4, 1)], names, all);
    expect(after.map((l) => [l.key, l.count])).toEqual([
      [before[0]!.key, 3],
      [before[1]!.key, 1],
    ]);
    expect(after[0]!.line.detail).toBe('Refused. 3 attempts since 07:45:01, the last at 07:45:03: retrying with each lookup, about once a second.');
  });

  it('a connection that opened and closed is a line of its own', () => {
    const open: TimelineEvent = {
      kind: 'connection',
      event: { type: 'open', at: at(0), connectionId: 1, resolverId: 'lab', address: 'a', transport: 'dot', resumed: false, verified: true, authError: null, tlsVersion: 'TLSv1.3', cipher: 'c', keyGroup: 'X25519', classicalOnly: null, handshakeMs: 2, burst: false },
    };
    expect(storyline([open, closed(1, 1, 0), failed(2)], names, all).map((l) => l.line.title)).toEqual([
      'Could not connect to Lab at 127.0.0.1:1: couldn’t connect to the resolver',
      'Connection #1 to Lab closed: it failed',
      expect.stringMatching(/^Connection #1 opened/) as unknown,
    ]);
  });

  it('a different resolver or reason starts a new line', () => {
    const lines = storyline([failed(1), failed(2, 'other'), failed(3, 'other', 'DOTSTUB_CONNECT_TIMEOUT'), failed(4, 'other', 'DOTSTUB_CONNECT_TIMEOUT')], names, all);
    expect(lines.map((l) => l.count)).toEqual([2, 1, 1]);
  });

  it('the limit counts lines, not events; the kind filter applies', () => {
    const events = [state(0, 'private', 'blocked'), failed(1), failed(2), failed(3)];
    expect(storyline(events, names, { ...all, limit: 1 }).map((l) => l.count)).toEqual([3]);
    expect(storyline(events, names, { ...all, kind: 'state' }).map((l) => l.line.kind)).toEqual(['state']);
  });

  it('times carry their date', () => {
    expect(formatDateTime(at(19) + 180)).toBe('22 Nov 07:45:19.180');
  });
});
