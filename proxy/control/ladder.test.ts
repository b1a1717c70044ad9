import { describe, expect, test } from 'vitest';
import type { ConnectionEvent } from '../dotstub.js';
import { NetworkLadder } from './ladder.js';

const failed = (at: number, transport: 'dot' | 'doh', address: string, resolverId = 'q'): ConnectionEvent => ({
  type: 'connect-failed',
  at,
  resolverId,
  address,
  code: 'DOTSTUB_CONNECT_TIMEOUT',
  message: 'timed out',
  retryInMs: 250,
  transport,
  afterMs: 2500,
  kind: 'dropped',
  classification: 'NET_DROPPED',
  sentence: 'Port 853 gets no answer here.',
});

const opened = (at: number, transport: 'dot' | 'doh', address: string): ConnectionEvent => ({
  type: 'open',
  at,
  connectionId: at,
  resolverId: 'q',
  address,
  transport,
  resumed: false,
  verified: true,
  authError: null,
  tlsVersion: 'TLSv1.3',
  cipher: 'c',
  keyGroup: 'X25519',
  classicalOnly: null,
  handshakeMs: 142,
  burst: false,
});

describe('NetworkLadder', () => {
  test('one step per transport and address, DoT first, latest outcome with attempts in a row', () => {
    const l = new NetworkLadder('q');
    l.record(opened(1, 'doh', '9.9.9.9'));
    l.record(failed(2, 'dot', '9.9.9.9'));
    l.record(failed(3, 'dot', '9.9.9.9'));
    l.record(failed(4, 'dot', '149.112.112.112'));
    l.record(failed(5, 'dot', '9.9.9.9', 'other'));
    const steps = l.steps();
    expect(steps.map((s) => [s.transport, s.address, s.ok, s.attempts])).toEqual([
      ['dot', '9.9.9.9', false, 2],
      ['dot', '149.112.112.112', false, 1],
      ['doh', '9.9.9.9', true, 1],
    ]);
    expect(steps[0]).toMatchObject({ ms: 2500, kind: 'dropped', sentence: 'Port 853 gets no answer here.', at: 3 });
    expect(steps[2]).toMatchObject({ ms: 142, kind: null, resumed: false });
    l.record(opened(6, 'dot', '9.9.9.9'));
    expect(l.steps()[0]).toMatchObject({ ok: true, attempts: 1, ms: 142 });
  });

  test('reset starts over for the new resolver', () => {
    const l = new NetworkLadder('q');
    l.record(failed(1, 'dot', '9.9.9.9'));
    l.reset('other');
    expect(l.steps()).toEqual([]);
    l.record(failed(2, 'dot', '1.1.1.1', 'other'));
    expect(l.steps()).toHaveLength(1);
  });
});
