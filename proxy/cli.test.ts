/** The command line's --doh flag: parsed beside --resolver, validated, documented. */
import { describe, expect, test } from 'vitest';
import { HELP, parseCli } from './cli.js';

describe('--doh', () => {
  test('gives the resolver its DNS-over-HTTPS URL for this run', () => {
    const p = parseCli(['--resolver', '127.0.0.1:8853#dns.test', '--doh', 'https://dns.test:8443/dns-query'], {});
    expect(p.resolver).toMatchObject({ addresses: ['127.0.0.1'], port: 8853, authName: 'dns.test', dohUrl: 'https://dns.test:8443/dns-query' });
    expect(parseCli(['--resolver', 'quad9'], {}).resolver?.dohUrl).toBe('https://dns.quad9.net/dns-query');
    expect(HELP).toMatch(/--doh URL/);
  });

  test('is refused without --resolver, or when it is not an https URL with a path', () => {
    expect(() => parseCli(['--doh', 'https://dns.test/dns-query'], {})).toThrow(/--doh needs --resolver/);
    expect(() => parseCli(['--resolver', '127.0.0.1#dns.test', '--doh', 'http://dns.test/dns-query'], {})).toThrow(/must start with https:\/\//);
    expect(() => parseCli(['--resolver', '127.0.0.1#dns.test', '--doh', 'https://dns.test'], {})).toThrow(/add the path/);
  });
});
