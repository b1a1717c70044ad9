/**
 * Reading why an answer was blocked: RFC 8914 EDEs in the OPT, and the
 * null-address answers of resolvers that block without one.
 */
import dnsPacket, { type Answer } from 'dns-packet';
import { describe, expect, test } from 'vitest';
import { answerSigns, extendedErrorName, MAX_EXTRA_TEXT, nullAddressAnswer, readExtendedErrors } from './extended-error.js';

function ede(code: number, text: string): { code: number; data: Buffer } {
  const t = Buffer.from(text, 'utf8');
  const data = Buffer.alloc(2 + t.length);
  data.writeUInt16BE(code, 0);
  t.copy(data, 2);
  return { code: 15, data };
}

function answer(opts: { rcode?: 'NOERROR' | 'NXDOMAIN'; type?: 'A' | 'AAAA'; answers?: Answer[]; options?: { code: number; data: Buffer }[] }): { raw: Buffer; optStart: number } {
  const raw = dnsPacket.encode({
    type: 'response',
    id: 1,
    flags: dnsPacket.RECURSION_AVAILABLE | (opts.rcode === 'NXDOMAIN' ? 3 : 0),
    questions: [{ type: opts.type ?? 'A', name: 'ads.example' }],
    answers: opts.answers ?? [],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: (opts.options ?? []) as never }],
  });
  // The OPT is the last record: its owner (root, one octet) starts where its fixed 10 octets and options end.
  const optLength = 11 + (opts.options ?? []).reduce((n, o) => n + 4 + o.data.length, 0);
  return { raw, optStart: raw.length - optLength };
}

describe('Extended DNS Errors', () => {
  test('INFO-CODE and EXTRA-TEXT are read in order; other options are skipped', () => {
    const { raw, optStart } = answer({ rcode: 'NXDOMAIN', options: [{ code: 10, data: Buffer.alloc(8, 7) }, ede(15, 'malware: lab list'), ede(3, '')] });
    expect(readExtendedErrors(raw, optStart, raw.length)).toEqual([
      { code: 15, name: 'Blocked', text: 'malware: lab list' },
      { code: 3, name: 'Stale Answer', text: '' },
    ]);
  });

  test('a trailing NUL is dropped, bad UTF-8 is replaced, long text is cut', () => {
    const bad = ede(17, 'x');
    bad.data[2] = 0xff;
    const { raw, optStart } = answer({ options: [ede(16, 'court order\0'), bad, ede(18, 'y'.repeat(1000))] });
    const read = readExtendedErrors(raw, optStart, raw.length);
    expect(read[0]).toEqual({ code: 16, name: 'Censored', text: 'court order' });
    expect(read[1]).toEqual({ code: 17, name: 'Filtered', text: '\ufffd' });
    expect(read[2]?.text.length).toBe(MAX_EXTRA_TEXT);
  });

  test('an EDE shorter than its INFO-CODE is not one; an option past its record ends the walk', () => {
    const { raw, optStart } = answer({ options: [{ code: 15, data: Buffer.from([0]) }, ede(15, 'ok')] });
    expect(readExtendedErrors(raw, optStart, raw.length)).toEqual([{ code: 15, name: 'Blocked', text: 'ok' }]);
    expect(readExtendedErrors(raw.subarray(0, raw.length - 1), optStart, raw.length - 1)).toEqual([]);
    expect(readExtendedErrors(raw, -1, -1)).toEqual([]);
  });

  test('names: the registered ones, and a number for the rest', () => {
    expect([15, 16, 17, 18].map(extendedErrorName)).toEqual(['Blocked', 'Censored', 'Filtered', 'Prohibited']);
    expect(extendedErrorName(6)).toBe('DNSSEC Bogus');
    expect(extendedErrorName(4711)).toBe('code 4711');
  });

  test('a blocking EDE is the block sign; one that is not (Stale Answer) is kept but blocks nothing', () => {
    const blocked = answer({ rcode: 'NXDOMAIN', options: [ede(3, 'old'), ede(15, 'malware: lab list')] });
    expect(answerSigns(blocked.raw, blocked.optStart, blocked.raw.length, true)).toEqual({
      extendedErrors: [
        { code: 3, name: 'Stale Answer', text: 'old' },
        { code: 15, name: 'Blocked', text: 'malware: lab list' },
      ],
      blocked: { kind: 'ede', code: 15, name: 'Blocked', text: 'malware: lab list' },
    });
    const stale = answer({ options: [ede(3, '')], answers: [{ type: 'A', name: 'ads.example', ttl: 30, data: '192.0.2.1' }] });
    expect(answerSigns(stale.raw, stale.optStart, stale.raw.length, true)).toEqual({ extendedErrors: [{ code: 3, name: 'Stale Answer', text: '' }], blocked: null });
  });
});

describe('null-address answers', () => {
  const a = (data: string): Answer => ({ type: 'A', name: 'ads.example', ttl: 60, data });
  const aaaa = (data: string): Answer => ({ type: 'AAAA', name: 'ads.example', ttl: 60, data });

  test('0.0.0.0 and :: read as blocked, behind a CNAME too', () => {
    expect(nullAddressAnswer(answer({ answers: [a('0.0.0.0')] }).raw)).toBe('0.0.0.0');
    expect(nullAddressAnswer(answer({ type: 'AAAA', answers: [aaaa('::')] }).raw)).toBe('::');
    const chain = answer({ answers: [{ type: 'CNAME', name: 'ads.example', ttl: 60, data: 'sink.example' }, { ...a('0.0.0.0'), name: 'sink.example' }] });
    expect(nullAddressAnswer(chain.raw)).toBe('0.0.0.0');
    const signs = answer({ answers: [a('0.0.0.0')] });
    expect(answerSigns(signs.raw, signs.optStart, signs.raw.length, false)).toEqual({ extendedErrors: null, blocked: { kind: 'zero-address', address: '0.0.0.0' } });
  });

  test('a real address, a mix, no address, or NXDOMAIN is not', () => {
    expect(nullAddressAnswer(answer({ answers: [a('192.0.2.1')] }).raw)).toBeNull();
    expect(nullAddressAnswer(answer({ answers: [a('0.0.0.0'), a('192.0.2.1')] }).raw)).toBeNull();
    expect(nullAddressAnswer(answer({}).raw)).toBeNull();
    expect(nullAddressAnswer(answer({ rcode: 'NXDOMAIN' }).raw)).toBeNull();
    expect(nullAddressAnswer(answer({ answers: [a('0.0.0.0')] }).raw.subarray(0, 40))).toBeNull();
    const none = answer({ answers: [a('192.0.2.1')] });
    expect(answerSigns(none.raw, none.optStart, none.raw.length, false)).toEqual({ extendedErrors: null, blocked: null });
  });
});
