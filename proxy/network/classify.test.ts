import { describe, expect, test } from 'vitest';
import { CertificateError, ConnectFailedError, ConnectTimeoutError, PinMismatchError, QueryTimeoutError } from '../errors.js';
import { classifyFailure } from './classify.js';

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(code), { code });

describe('classifying what a network did to encrypted DNS', () => {
  test.each([
    [new ConnectTimeoutError('x', 'connect'), 'dropped', /Port 853 gets no answer/],
    [new ConnectTimeoutError('x', 'handshake'), 'handshake-stall', /stalls/],
    [new ConnectFailedError('x', { cause: errno('ECONNREFUSED') }), 'refused', /refuses/],
    [new ConnectFailedError('x', { cause: errno('EHOSTUNREACH') }), 'unreachable', /no route/],
    [new ConnectFailedError('x', { cause: errno('ECONNRESET') }, 'handshake'), 'reset-after-hello', /cuts encrypted DNS/],
    [new ConnectFailedError('x', { cause: errno('ERR_SSL_WRONG_VERSION_NUMBER') }, 'handshake'), 'not-tls', /not as an encrypted DNS server/],
  ] as const)('%s → %s', (err, kind, sentence) => {
    const c = classifyFailure(err, 853, 'Quad9');
    expect(c.kind).toBe(kind);
    expect(c.sentence).toMatch(sentence);
    expect(c.interception).toBe(false);
    expect(c.code).toBe(`NET_${kind.toUpperCase().replace(/-/g, '_')}`);
  });

  test('interception names the issuer and is never a reason to fall back', () => {
    const c = classifyFailure(new CertificateError('x', 'SELF_SIGNED_CERT_IN_CHAIN', { issuer: 'Hotel WiFi Gateway CA' }), 853, 'Quad9');
    expect(c).toMatchObject({ kind: 'intercepted', interception: true });
    expect(c.sentence).toContain('issued by Hotel WiFi Gateway CA');
    expect(classifyFailure(new CertificateError('x', 'ERR_TLS_CERT_ALTNAME_INVALID'), 853, 'Quad9').kind).toBe('name-mismatch');
  });

  test('a pin mismatch under a trusted root is a re-signing product, under an unknown one interception', () => {
    expect(classifyFailure(new PinMismatchError('x', { issuer: 'Contoso AV Root', trustedChain: true }), 853, 'Quad9')).toMatchObject({ kind: 'resigned', interception: true });
    expect(classifyFailure(new PinMismatchError('x', { trustedChain: false }), 853, 'Quad9').kind).toBe('intercepted');
  });

  test('anything else is "other", with the error’s own words', () => {
    expect(classifyFailure(new QueryTimeoutError('no answer from 192.0.2.1'), 853, 'Quad9')).toMatchObject({ kind: 'other', sentence: 'no answer from 192.0.2.1' });
  });
});
