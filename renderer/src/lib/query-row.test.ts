import { describe, expect, it } from 'vitest';
import { record } from './fixtures.test-helpers.js';
import { blockedWords, connectionText, detailFacts, extendedErrorText, hedgeText, resolverLabel, rowFlags } from './query-row.js';

const resolvers = [{ id: 'quad9', label: 'Quad9' }];

describe('query row facts', () => {
  it('resolver by name; the id only for a resolver no longer configured; a dash when never sent', () => {
    expect(resolverLabel(resolvers, 'quad9')).toBe('Quad9');
    expect(resolverLabel(resolvers, 'custom:10.0.0.1:853')).toBe('custom:10.0.0.1:853');
    expect(resolverLabel(resolvers, null)).toBe('—');
  });

  it('connection in words', () => {
    expect(connectionText(record({ connectionId: 3, reused: true }))).toBe('#3 reused');
    expect(connectionText(record({ connectionId: 4, reused: false, handshake: 'resumed' }))).toBe('#4 new (resumed)');
    expect(connectionText(record({ connectionId: null, reused: null }))).toBe('not sent');
  });

  it('flags: slow at the threshold, bad for anything but NOERROR, new connection', () => {
    expect(rowFlags(record({ latencyUs: 100_000 }), 100_000)).toEqual({ slow: true, bad: false, newConnection: false });
    expect(rowFlags(record({ latencyUs: 99_999, rcode: 'NXDOMAIN', reused: false }), 100_000)).toEqual({ slow: false, bad: true, newConnection: true });
  });

  it('detail facts say who answered, retries, truncation and errors', () => {
    const f = Object.fromEntries(detailFacts(record({ source: 'servfail', rcode: 'SERVFAIL', attempts: 2, truncated: true, error: 'DOTSTUB_CONNECT_TIMEOUT', depth: 3 }), 'Quad9'));
    expect(f['Answer from']).toBe('the proxy (SERVFAIL)');
    expect(f['Resolver']).toBe('Quad9');
    expect(f['Attempts']).toBe('2 (retried)');
    expect(f['Pipelined with']).toBe('2 other queries in flight');
    expect(f['Truncated']).toMatch(/TCP/);
    expect(f['Error']).toBe('the resolver didn’t answer the connection in time (DOTSTUB_CONNECT_TIMEOUT)');
    expect(Object.keys(Object.fromEntries(detailFacts(record(), 'Quad9')))).not.toContain('Error');
  });

  it('a query sent again after silence says on which connection, after how long, and whose answer counted', () => {
    const second = record({ connectionId: 7, reused: false, handshake: 'resumed', hedge: { connectionId: 7, afterMs: 190 } });
    expect(hedgeText(second)).toBe('on #7 after its connection was silent for 190 ms; the answer came from #7');
    expect(Object.fromEntries(detailFacts(second, 'Quad9'))['Sent again']).toBe(hedgeText(second));
    const first = record({ connectionId: 3, reused: true, hedge: { connectionId: 7, afterMs: 60 } });
    expect(hedgeText(first)).toBe('on #7 after its connection was silent for 60 ms; the answer came from #3');
    expect(hedgeText(record({ connectionId: null, reused: null, rcode: 'SERVFAIL', source: 'servfail', hedge: { connectionId: 7, afterMs: 60 } }))).toBe('on #7 after its connection was silent for 60 ms; no answer came');
    expect(hedgeText(record())).toBeNull();
    expect(Object.keys(Object.fromEntries(detailFacts(record(), 'Quad9')))).not.toContain('Sent again');
  });

  it('a query no resolver answered says why instead of a dash', () => {
    const failed = Object.fromEntries(
      detailFacts(record({ resolverId: null, connectionId: null, reused: null, source: 'servfail', rcode: 'SERVFAIL', error: 'DOTSTUB_CONNECT_FAILED' }), '—'),
    );
    expect(failed['Resolver']).toBe('none reached: couldn’t connect to the resolver');
    expect(failed['Error']).toBe('couldn’t connect to the resolver (DOTSTUB_CONNECT_FAILED)');
    const cached = Object.fromEntries(detailFacts(record({ resolverId: null, connectionId: null, reused: null, source: 'cache' }), '—'));
    expect(cached['Resolver']).toBe('none needed (answer cache)');
  });
});

describe('a query answered in cleartext (Wi-Fi sign-in)', () => {
  it('says so in the row and the detail, never "not sent"', () => {
    const r = record({ source: 'cleartext', connectionId: null, reused: false, resolverId: null });
    expect(connectionText(r)).toBe('unencrypted, network’s resolver');
    expect(detailFacts(r, '—').find(([k]) => k === 'Answer from')?.[1]).toMatch(/unencrypted.*never cached/);
  });
});

describe('why an answer was blocked, in the row’s words', () => {
  const ede = { kind: 'ede', code: 15, name: 'Blocked', text: 'malware: lab list' } as const;

  it('the resolver said so: its name, the code’s name and its text', () => {
    const r = record({ rcode: 'NXDOMAIN', extendedErrors: [{ code: 15, name: 'Blocked', text: 'malware: lab list' }], blocked: ede });
    expect(blockedWords(r, 'Quad9')).toMatchObject({ kind: 'ede', by: 'Quad9', sentence: 'Blocked by Quad9: malware: lab list', badge: 'Blocked by Quad9: malware: lab list' });
    expect(blockedWords(record({ blocked: { ...ede, code: 16, name: 'Censored', text: '' } }), 'Quad9')?.sentence).toBe('Censored by Quad9');
    expect(blockedWords(record({ blocked: { ...ede, code: 17, name: 'Filtered', text: '  ' } }), 'AdGuard DNS')?.sentence).toBe('Filtered by AdGuard DNS');
    // From the cache: the record names no resolver.
    expect(blockedWords(record({ blocked: ede, resolverId: null, connectionId: null }), '—')?.sentence).toBe('Blocked by your resolver: malware: lab list');
  });

  it('0.0.0.0 or :: without a word: said to be the usual way to block', () => {
    const sink = blockedWords(record({ blocked: { kind: 'zero-address', address: '0.0.0.0' } }), 'AdGuard DNS');
    expect(sink?.sentence).toBe('AdGuard DNS answered 0.0.0.0: the usual way to block');
    // On the row, beside the Resolver column: the address first, so a cut badge still says it.
    expect(sink?.badge).toBe('Answered 0.0.0.0: the usual way to block');
    expect(blockedWords(record({ blocked: { kind: 'zero-address', address: '::' }, resolverId: null }), '—')?.sentence).toBe('Your resolver answered ::: the usual way to block');
  });

  it('not blocked: nothing to say', () => {
    expect(blockedWords(record(), 'Quad9')).toBeNull();
    expect(blockedWords(record({ extendedErrors: [{ code: 3, name: 'Stale Answer', text: '' }] }), 'Quad9')).toBeNull();
  });

  it('the detail says why, and lists every EDE the answer carried', () => {
    const r = record({
      rcode: 'NXDOMAIN',
      extendedErrors: [
        { code: 15, name: 'Blocked', text: 'malware: lab list' },
        { code: 3, name: 'Stale Answer', text: '' },
      ],
      blocked: ede,
    });
    const facts = Object.fromEntries(detailFacts(r, 'Quad9'));
    expect(facts.Blocked).toBe('Quad9 refused the name and said why: EDE 15 (Blocked): ‘malware: lab list’ (an Extended DNS Error, RFC 8914), passed on to the program unchanged');
    expect(facts['Extended DNS Error']).toBe('EDE 15 (Blocked): ‘malware: lab list’; EDE 3 (Stale Answer)');
    expect(extendedErrorText({ code: 6, name: 'DNSSEC Bogus', text: '' })).toBe('EDE 6 (DNSSEC Bogus)');
    expect(Object.fromEntries(detailFacts(record(), 'Quad9')).Blocked).toBeUndefined();
  });
});
