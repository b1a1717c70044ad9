import { describe, expect, it } from 'vitest';
import { describeEvent } from './events.js';

const names = (id: string): string => ({ quad9: 'Quad9', lab: 'Lab resolver' })[id] ?? id;

describe('describeEvent', () => {
  it('connection open says full or resumed, and verification', () => {
    const l = describeEvent(
      {
        kind: 'connection',
        event: {
          type: 'open',
          at: 1,
          connectionId: 3,
          resolverId: 'quad9',
          address: '9.9.9.9:853',
          transport: 'dot',
          resumed: true,
          verified: true,
          authError: null,
          tlsVersion: 'TLSv1.3',
          cipher: 'TLS_AES_256_GCM_SHA384',
          keyGroup: 'X25519MLKEM768',
          classicalOnly: null,
          handshakeMs: 4.2,
          burst: false,
        },
      },
      names,
    );
    expect(l.title).toBe('Connection #3 opened to Quad9 (session resumed)');
    expect(l.icon).toBe('resume');
    expect(l.detail).toContain('certificate verified');
    expect(l.detail).toContain('4.20 ms');
    expect(l.detail).toContain('key agreement X25519MLKEM768 (post-quantum hybrid)');
  });

  it('a connection that fell back to classical key agreement says why', () => {
    const l = describeEvent({
      kind: 'connection',
      event: {
        type: 'open',
        at: 1,
        connectionId: 4,
        resolverId: 'lab',
        address: '10.0.0.1',
        transport: 'dot',
        resumed: false,
        verified: true,
        authError: null,
        tlsVersion: 'TLSv1.3',
        cipher: 'TLS_AES_256_GCM_SHA384',
        keyGroup: 'X25519',
        classicalOnly: 'retried',
        handshakeMs: 1600,
        burst: false,
      },
    });
    expect(l.detail).toContain('key agreement X25519 (classical) · the post-quantum ClientHello got no answer on this network; classical key agreement');
  });

  it('a close with failures is a reset', () => {
    const l = describeEvent(
      {
        kind: 'connection',
        event: { type: 'close', at: 2, connectionId: 3, resolverId: 'lab', reason: 'reset', failed: 2, queriesCarried: 40, error: 'ECONNRESET' },
      },
      names,
    );
    expect(l.tone).toBe('warning');
    expect(l.title).toBe('Connection #3 to Lab resolver closed: reset (by the resolver or the network)');
    expect(l.detail).toContain('carried 40 queries');
    expect(l.detail).toContain('2 in flight');
  });

  it('privacy changes carry their reason', () => {
    const l = describeEvent({
      kind: 'state',
      event: { state: 'blocked', previous: 'private', reason: 'port 853 timed out from this network', at: 3, resolverId: 'quad9' },
    });
    expect(l.title).toBe('Privacy: Private → Stopped');
    expect(l.detail).toBe('Port 853 timed out from this network.');
    expect(l.tone).toBe('danger');
  });

  it('a pause and a turn-off read apart: the choice is the title, the state change follows', () => {
    const at = new Date(2026, 10, 22, 19, 15, 0).getTime();
    const off = { state: 'off' as const, previous: 'private' as const, reason: 'r', at, resolverId: 'q' };
    const paused = describeEvent({ kind: 'state', event: off, takeover: { action: 'paused', forMs: 300_000, until: at + 300_000 } });
    expect(paused.title).toBe('Paused for 5 min (until 19:20)');
    expect(paused.detail).toBe('Privacy: Private → Off. R.');
    expect(describeEvent({ kind: 'state', event: off, takeover: { action: 'turned-off' } }).title).toBe('Turned off');
    expect(describeEvent({ kind: 'state', event: { ...off, state: 'private', previous: 'off' }, takeover: { action: 'resumed', early: true } }).title).toBe('Resumed before the pause ended');
    expect(describeEvent({ kind: 'state', event: off }).title).toBe('Privacy: Private → Off');
  });

  it('connect failures, resolver switches and settings', () => {
    expect(
      describeEvent(
        { kind: 'connection', event: { type: 'connect-failed', at: 1, resolverId: 'lab', address: '127.0.0.1:1', code: 'DOTSTUB_CONNECT_FAILED', message: 'refused', retryInMs: 2000, transport: 'dot' as const, afterMs: 1, kind: 'refused' as const, classification: 'NET_REFUSED', sentence: 'This network refuses encrypted DNS connections to Lab (port 853).' } },
        names,
      ).title,
    ).toBe('Could not connect to Lab resolver at 127.0.0.1:1: couldn’t connect to the resolver');
    expect(
      describeEvent({ kind: 'connection', event: { type: 'connect-failed', at: new Date(2026, 10, 22, 7, 45, 1).getTime(), resolverId: 'lab', address: 'a', code: 'X', message: 'refused', retryInMs: 10_000, transport: 'dot' as const, afterMs: 1, kind: 'refused' as const, classification: 'NET_REFUSED', sentence: 'This network refuses encrypted DNS connections to Lab (port 853).' } })
        .detail,
    ).toBe('Refused. Retrying with the next lookup, or by itself by 07:45:11.');
    expect(
      describeEvent({ kind: 'state', event: { state: 'blocked', previous: 'blocked', reason: 'r', at: 1, resolverId: 'q' } }).title,
    ).toBe('Privacy: still Stopped');
    expect(describeEvent({ kind: 'resolver', at: 1, from: 'quad9', to: 'lab' }, names).title).toBe('Resolver switched from Quad9 to Lab resolver');
    // A move dotstub made itself (a retired preset, issue 29) says why, and names the preset that is no longer listed.
    const moved = describeEvent(
      { kind: 'resolver', at: 1, from: 'mullvad', to: 'quad9', reason: 'Mullvad DNS closed on 2 Nov 2026; dotstub moved your choice to Quad9', fromLabel: 'Mullvad DNS' },
      names,
    );
    expect([moved.title, moved.detail]).toEqual([
      'Mullvad DNS closed on 2 Nov 2026; dotstub moved your choice to Quad9',
      'Your saved resolver, Mullvad DNS, was moved to Quad9 once; pick another on the Resolvers page.',
    ]);
    // The user's choice for this network (its own encrypted resolver, issue 33 item 5): the reason, and where it is undone.
    const own = describeEvent(
      { kind: 'resolver', at: 1, from: 'quad9', to: 'network:dns.lab.test', reason: "Now using dns.lab.test (this network's own), as you chose for this network", fromLabel: 'Quad9', toLabel: "dns.lab.test (this network's own)", networkChoice: true },
      names,
    );
    expect([own.title, own.tone, own.detail]).toEqual([
      "Now using dns.lab.test (this network's own), as you chose for this network",
      'neutral',
      "From Quad9 to dns.lab.test (this network's own): your choice for this network, in the Network view (“Stop using it here” goes back).",
    ]);
    expect(describeEvent({ kind: 'settings', at: 1, changed: ['padding', 'recordNames'] }).detail).toBe('padding, recordNames');
  });
});
