/** RFC 6052's placement of IPv4 in IPv6, and RFC 7050's prefix from ipv4only.arpa (nat64-address.ts), with the RFCs' own examples. */
import { expect, test } from 'vitest';
import { nat64PrefixesFrom, synthesizeNat64, WELL_KNOWN_NAT64 } from './nat64-address.js';

test('RFC 6052 §2.4: 192.0.2.33 in each prefix length, the u octet skipped', () => {
  expect(synthesizeNat64('2001:db8::/32', '192.0.2.33')).toBe('2001:db8:c000:221::');
  expect(synthesizeNat64('2001:db8:100::/40', '192.0.2.33')).toBe('2001:db8:1c0:2:21::');
  expect(synthesizeNat64('2001:db8:122::/48', '192.0.2.33')).toBe('2001:db8:122:c000:2:2100::');
  expect(synthesizeNat64('2001:db8:122:300::/56', '192.0.2.33')).toBe('2001:db8:122:3c0:0:221::');
  expect(synthesizeNat64('2001:db8:122:344::/64', '192.0.2.33')).toBe('2001:db8:122:344:c0:2:2100:0');
  expect(synthesizeNat64('2001:db8:122:344::/96', '192.0.2.33')).toBe('2001:db8:122:344::c000:221');
  expect(synthesizeNat64(WELL_KNOWN_NAT64, '192.0.2.33')).toBe('64:ff9b::c000:221');
});

test('not a prefix RFC 6052 allows, or not IPv4: null', () => {
  expect(synthesizeNat64('2001:db8::/80', '192.0.2.33')).toBeNull();
  expect(synthesizeNat64('2001:db8::/96', '2001:db8::1')).toBeNull();
  expect(synthesizeNat64('not-an-address/96', '192.0.2.33')).toBeNull();
});

test('RFC 7050: the prefix from a DNS64 answer for ipv4only.arpa, whatever its length; answers without the well-known addresses give none', () => {
  expect(nat64PrefixesFrom(['2001:db8:64::c000:aa', '2001:db8:64::c000:ab'])).toEqual(['2001:db8:64::/96']);
  expect(nat64PrefixesFrom(['64:ff9b::c000:aa'])).toEqual(['64:ff9b::/96']);
  expect(nat64PrefixesFrom([synthesizeNat64('2001:db8:122::/48', '192.0.0.170') as string])).toEqual(['2001:db8:122::/48']);
  expect(nat64PrefixesFrom([synthesizeNat64('2001:db8::/32', '192.0.0.171') as string])).toEqual(['2001:db8::/32']);
  expect(nat64PrefixesFrom(['2001:db8::1', 'garbage'])).toEqual([]);
});
