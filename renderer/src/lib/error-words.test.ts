import { describe, expect, it } from 'vitest';
import { errorText, errorWords } from './error-words.js';

const CODES = [
  'DOTSTUB_CONNECT_TIMEOUT',
  'DOTSTUB_CONNECT_FAILED',
  'DOTSTUB_CERTIFICATE',
  'DOTSTUB_PIN_MISMATCH',
  'DOTSTUB_CONNECTION_CLOSED',
  'DOTSTUB_QUERY_TIMEOUT',
  'DOTSTUB_IN_FLIGHT_CAP',
  'DOTSTUB_POOL_CLOSED',
  'DOTSTUB_QUARANTINED',
  'DOTSTUB_MALFORMED',
  'DOTSTUB_CAPTIVE_HELD',
  'DOTSTUB_CLEARTEXT_FAILED',
];

describe('errorWords', () => {
  it('says connect failures in words', () => {
    expect(errorWords('DOTSTUB_CONNECT_FAILED')).toBe('couldn’t connect to the resolver');
  });

  it('has words, not the code, for every upstream error code', () => {
    for (const code of CODES) {
      const w = errorWords(code);
      expect(w, code).not.toContain('DOTSTUB');
      expect(w.length, code).toBeGreaterThan(10);
    }
    expect(new Set(CODES.map(errorWords)).size).toBe(CODES.length);
  });

  it('shows an unknown code as itself', () => {
    expect(errorWords('DOTSTUB_FROM_THE_FUTURE')).toBe('DOTSTUB_FROM_THE_FUTURE');
    expect(errorText('DOTSTUB_FROM_THE_FUTURE')).toBe('DOTSTUB_FROM_THE_FUTURE');
  });

  it('keeps the code after the words for a bug report', () => {
    expect(errorText('DOTSTUB_QUERY_TIMEOUT')).toBe('the resolver took too long to answer (DOTSTUB_QUERY_TIMEOUT)');
  });
});
