import { describe, expect, test } from 'vitest';
import * as resolvers from './resolvers.js';
import { customResolver, describeResolver, dohEndpoint, parseResolverArg, PRESETS, validateDohUrl, validatePin } from './resolvers.js';

describe('resolver presets', () => {
  test('each preset has v4 and v6 addresses, port 853 and an authentication name', () => {
    for (const id of ['cloudflare', 'quad9', 'google', 'adguard']) {
      const p = PRESETS[id];
      expect(p, id).toBeDefined();
      expect(p?.addresses.some((a) => a.includes('.'))).toBe(true);
      expect(p?.addresses.some((a) => a.includes(':'))).toBe(true);
      expect(p?.port).toBe(853);
      expect(p?.authName).toMatch(/\./);
    }
    expect(parseResolverArg('Quad9')).toBe(PRESETS.quad9);
  });

  test('each preset says who runs it and where they document it', () => {
    for (const p of Object.values(PRESETS)) {
      const operator = (p as { operator?: { name: string; docs: string } }).operator;
      expect(operator?.name, p.id).toMatch(/\w/);
      expect(operator?.docs, p.id).toMatch(/^https:\/\/[a-z0-9.-]+\//);
    }
  });
});

describe('what the presets block, in words (issue 46)', () => {
  test('each preset says what it blocks and how a blocked name looks; the API shows it beside the resolver, and nothing for your own', async () => {
    expect(PRESETS.quad9?.blocking).toMatch(/malware.*phishing.*NXDOMAIN/);
    expect(PRESETS.adguard?.blocking).toMatch(/ads, trackers.*0\.0\.0\.0/);
    expect(PRESETS.cloudflare?.blocking).toMatch(/^Blocks nothing.*1\.1\.1\.2.*malware.*1\.1\.1\.3.*adult/);
    expect(PRESETS.google?.blocking).toMatch(/no blocklist/);
    const { resolverView } = await import('../control/resolver-view.js');
    expect(resolverView(PRESETS.quad9 as resolvers.PresetSpec, true, null).blocking).toBe(PRESETS.quad9?.blocking);
    expect(resolverView(customResolver({ address: '192.0.2.1', authName: 'dns.example' }), false, null).blocking).toBeNull();
  });
});

describe('retired presets (issue 29: Mullvad closed its public encrypted DNS on 2 Nov 2026)', () => {
  test('Mullvad is no preset any more: not offered, not in the hint', () => {
    expect(PRESETS.mullvad).toBeUndefined();
    expect(() => parseResolverArg('dns.example.com')).toThrow(/use a preset \(cloudflare, quad9, google, adguard\)/);
  });

  test('--resolver mullvad is refused, saying it was retired, when, and what to use instead', () => {
    expect(() => parseResolverArg('mullvad')).toThrow(
      '"mullvad" was retired: Mullvad DNS closed on 2 Nov 2026 (Mullvad: "Shutting down our public encrypted DNS servers and sponsoring Quad9 instead"); use --resolver quad9 instead',
    );
    expect(() => parseResolverArg('Mullvad')).toThrow(/was retired/);
  });

  test('the table: each retired id is no preset, its replacement is one, its date is a real day', () => {
    const table = (resolvers as { RETIRED_PRESETS?: readonly { id: string; label: string; closed: string; words: string; replacement: string }[] }).RETIRED_PRESETS;
    expect(table?.map((r) => r.id)).toContain('mullvad');
    for (const r of table ?? []) {
      expect(PRESETS[r.id], r.id).toBeUndefined();
      expect(PRESETS[r.replacement], r.replacement).toBeDefined();
      expect(new Date(`${r.closed}T00:00:00Z`).toISOString().slice(0, 10)).toBe(r.closed);
      expect(r.words).toMatch(/\w/);
    }
  });
});

describe('parseResolverArg', () => {
  test('address, port and auth name in the stubby/Android form', () => {
    expect(parseResolverArg('127.0.0.1:8853#dns.test')).toMatchObject({ addresses: ['127.0.0.1'], port: 8853, authName: 'dns.test' });
    expect(parseResolverArg('9.9.9.9#dns.quad9.net')).toMatchObject({ port: 853, authName: 'dns.quad9.net' });
    expect(parseResolverArg('[2620:fe::fe]:853#dns.quad9.net')).toMatchObject({ addresses: ['2620:fe::fe'], port: 853 });
    expect(parseResolverArg('2620:fe::fe')).toMatchObject({ addresses: ['2620:fe::fe'], port: 853, authName: undefined });
    expect(describeResolver(parseResolverArg('127.0.0.1:8853#dns.test'))).toBe('127.0.0.1:8853#dns.test');
  });

  test('bad input gets an error that says what to use instead', () => {
    expect(() => parseResolverArg('dns.example.com')).toThrow(/use a preset \(cloudflare, quad9, google, adguard\)/);
    expect(() => parseResolverArg('1.2.3.4:99999')).toThrow(/port must be a number from 1 to 65535/);
    expect(() => parseResolverArg('1.2.3.4#bad_name!')).toThrow(/not a valid authentication name/);
    expect(() => parseResolverArg('1.2.3.4#a#b')).toThrow(/only one "#authname"/);
    expect(() => parseResolverArg('1.2.3.4:853,[2001:db8::1]:8853#dns.test')).toThrow(/share one port/);
    expect(() => parseResolverArg('1.2.3.4,dns.test#dns.test')).toThrow(/use a preset/);
  });

  test('several addresses of one resolver, comma-separated, share its port (raced IPv6 first)', () => {
    expect(parseResolverArg('10.53.2.2,[fd53:2::2]:853#dns.test')).toMatchObject({ addresses: ['10.53.2.2', 'fd53:2::2'], port: 853, authName: 'dns.test' });
    expect(parseResolverArg('9.9.9.9:8853,2620:fe::fe#dns.quad9.net')).toMatchObject({ addresses: ['9.9.9.9', '2620:fe::fe'], port: 8853 });
  });

  test('the label names every address (a race may connect to any; the banner must not name one it isn\'t using)', () => {
    expect(parseResolverArg('[::1]:853,127.0.0.1#dns.test').label).toBe('dns.test ([::1], 127.0.0.1)');
    expect(parseResolverArg('10.53.2.2').label).toBe('10.53.2.2');
    expect(parseResolverArg('10.53.2.2#dns.test').label).toBe('dns.test (10.53.2.2)');
  });
});

describe('custom resolvers and pins', () => {
  test('validates addresses, port and pins', () => {
    const pin = Buffer.alloc(32, 1).toString('base64');
    const r = customResolver({ address: ['192.0.2.1', '2001:db8::1'], port: 8853, authName: 'DNS.Example.', pins: [`sha256/${pin}`] });
    expect(r).toMatchObject({ addresses: ['192.0.2.1', '2001:db8::1'], port: 8853, authName: 'dns.example', pins: [pin] });
    expect(() => customResolver({ address: 'resolver.example' })).toThrow(/not an IP address/);
    expect(() => customResolver({ address: [] })).toThrow(/at least one IP address/);
    expect(() => customResolver({ address: '192.0.2.1', port: 0 })).toThrow(/out of range/);
  });

  test('a malformed SPKI pin is refused with how to compute one', () => {
    expect(() => validatePin('abc')).toThrow(/not an SPKI pin: expected base64 of a SHA-256 digest/);
    expect(() => validatePin(Buffer.alloc(20).toString('base64'))).toThrow(/SHA-256/);
    expect(validatePin(` ${Buffer.alloc(32, 2).toString('base64')} `)).toBe(Buffer.alloc(32, 2).toString('base64'));
  });
});

describe('DoH endpoints', () => {
  test("each preset has its operator's DoH URL, on the same host as its DoT name", () => {
    expect(Object.fromEntries(Object.values(PRESETS).map((p) => [p.id, p.dohUrl]))).toEqual({
      cloudflare: 'https://cloudflare-dns.com/dns-query',
      quad9: 'https://dns.quad9.net/dns-query',
      google: 'https://dns.google/dns-query',
      adguard: 'https://dns.adguard-dns.com/dns-query',
    });
    for (const p of Object.values(PRESETS)) expect(dohEndpoint(p.dohUrl as string)).toMatchObject({ host: p.authName, port: 443, path: '/dns-query' });
  });

  test('a custom resolver takes a DoH URL beside its address: reached at that address, authenticated by the URL host', () => {
    const r = parseResolverArg('127.0.0.1:8853#dns.test', [], 'https://DNS.test:8443/dns-query');
    expect(r).toMatchObject({ addresses: ['127.0.0.1'], port: 8853, dohUrl: 'https://dns.test:8443/dns-query' });
    expect(dohEndpoint(r.dohUrl as string)).toEqual({ host: 'dns.test', port: 8443, path: '/dns-query', authority: 'dns.test:8443' });
    expect(parseResolverArg('quad9', [], 'https://doh.example/q')).toMatchObject({ id: 'quad9', dohUrl: 'https://doh.example/q' });
    expect(parseResolverArg('127.0.0.1#dns.test').dohUrl).toBeUndefined();
    expect(dohEndpoint(validateDohUrl('https://[2620:fe::fe]/dns-query'))).toMatchObject({ host: '2620:fe::fe', port: 443 });
  });

  test('a bad DoH URL is refused with what to write instead', () => {
    expect(() => validateDohUrl('dns.quad9.net/dns-query')).toThrow(/not a URL.*e\.g\. https:\/\/dns\.quad9\.net\/dns-query/);
    expect(() => validateDohUrl('http://dns.quad9.net/dns-query')).toThrow(/must start with https:\/\//);
    expect(() => validateDohUrl('https://user:pw@dns.quad9.net/dns-query')).toThrow(/remove the user name and password/);
    expect(() => validateDohUrl('https://dns.quad9.net/dns-query{?dns}')).toThrow(/without its \{\?dns\} template/);
    expect(() => validateDohUrl('https://dns.quad9.net/')).toThrow(/add the path .* \/dns-query/);
    expect(() => validateDohUrl('https://bad_host!/dns-query')).toThrow();
    expect(() => customResolver({ address: '192.0.2.1', dohUrl: 'ftp://x/y' })).toThrow(/must start with https/);
  });
});
