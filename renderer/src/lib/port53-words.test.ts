import { describe, expect, test } from 'vitest';
import { port53Words } from './port53-words.js';

const at = (d: number, h: number): string => new Date(new Date().getFullYear(), 10, d, h, 5).toISOString();

describe('a network card’s words on plain DNS (port 53)', () => {
  test('an answer at the last check is the verdict, with what it rests on and what it means', () => {
    const w = port53Words({ rewritesDns: { seenAt: at(26, 14), answeredWith: 'NXDOMAIN', asked: '192.0.2.1' }, dnsCheckedAt: at(26, 14) }, 'every-network');
    expect(w.kind).toBe('rewrites');
    expect(w.text).toBe('This network answers DNS for every address: it intercepts port 53');
    expect(w.detail).toBe(
      '192.0.2.1, where no DNS server can be, answered NXDOMAIN (26 Nov 14:05). dotstub’s encrypted DNS is not affected; plain DNS here (local names, programs that go around dotstub) is answered by the network, whatever server it was sent to.',
    );
  });

  test('a sighting the last check did not repeat keeps its date, and says the last check saw nothing', () => {
    const w = port53Words({ rewritesDns: { seenAt: at(26, 14), answeredWith: 'NOERROR with 10.0.0.1', asked: '192.0.2.1' }, dnsCheckedAt: at(27, 9) }, 'every-network');
    expect(w.kind).toBe('was-seen');
    expect(w.text).toBe('Answered DNS for every address on 26 Nov 14:05 (port 53 intercepted); not seen at the last check, 27 Nov 09:05');
  });

  test('no answer is "not seen" at that check, never "clean"; no check says why', () => {
    const seen = port53Words({ rewritesDns: null, dnsCheckedAt: at(26, 14) }, 'every-network');
    expect(seen).toEqual({ kind: 'not-seen', text: 'Not seen answering DNS for other addresses (checked 26 Nov 14:05)', detail: null });
    expect(seen.text).not.toMatch(/clean|safe|no interception/i);
    expect(port53Words({ rewritesDns: null, dnsCheckedAt: null }, 'every-network').text).toBe('Not checked here yet');
    expect(port53Words({ rewritesDns: null, dnsCheckedAt: null }, 'where-local-names-allowed').text).toBe(
      'Not checked: in strict mode dotstub checks only where you allowed local names (the check is one plain DNS packet)',
    );
    expect(port53Words({ rewritesDns: null, dnsCheckedAt: null }, 'off').kind).toBe('unchecked');
  });
});

describe('what the check could not look at', () => {
  test('an IPv4-only network: checked over IPv4, and the card says IPv6 was not checked and why', () => {
    const w = port53Words({ rewritesDns: null, dnsCheckedAt: '2026-12-08T10:00:00.000Z', dnsCheckNote: 'IPv6 not checked: no route to it from this network (ENETUNREACH)' }, 'every-network');
    expect(w.kind).toBe('not-seen');
    expect(w.detail).toBe('IPv6 not checked: no route to it from this network (ENETUNREACH)');
  });
  test('offline: nothing could be asked, and that is "not checked", never "not seen"', () => {
    const note = 'IPv4 not checked: no route to it from this network (ENETUNREACH); IPv6 not checked: no route to it from this network (ENETUNREACH)';
    const w = port53Words({ rewritesDns: null, dnsCheckedAt: null, dnsCheckNote: note }, 'every-network');
    expect(w).toEqual({ kind: 'unchecked', text: 'Not checked: no address could be asked from this network', detail: note });
  });
});
