/**
 * Reading resolved's global servers from `resolvectl dns` in every shape a
 * version prints: status says "on" exactly when resolved lists dotstub.
 */
import { expect, test } from 'vitest';
import { globalServers, normalizeServer } from './resolved-backend.js';

// Recorded from systemd 252.38 (Debian 12) in the lab, with DNS=127.0.0.1:53 and with :5300.
const V252_PORT_53 = 'Global: 127.0.0.1\nLink 2 (veth0): 10.99.0.1\nLink 3 (veth1):\n';
const V252_PORT_5300 = 'Global: 127.0.0.1:5300\nLink 2 (veth0): 10.99.0.1\nLink 3 (veth1):\n';
// The shape of later versions: the port always, an interface and a server name where configured.
const LATER = 'Global: 127.0.0.1:53 [::1]:53%lo#dns.example\nLink 2 (veth0): 10.99.0.1 fe80::1%2\n';

test('port 53 printed or not, it is the same server', () => {
  expect(globalServers(V252_PORT_53)).toEqual(['127.0.0.1:53']);
  expect(globalServers(V252_PORT_5300)).toEqual(['127.0.0.1:5300']);
  expect(globalServers(LATER)).toEqual(['127.0.0.1:53', '[::1]:53']);
  expect(globalServers('Global:\nLink 2 (veth0): 10.99.0.1\n')).toEqual([]);
});

test('servers in each notation', () => {
  expect(normalizeServer('127.0.0.1')).toBe('127.0.0.1:53');
  expect(normalizeServer('127.0.0.1:5300')).toBe('127.0.0.1:5300');
  expect(normalizeServer('127.0.0.1%3#dns.example')).toBe('127.0.0.1:53');
  expect(normalizeServer('127.0.0.1:853#dns.example')).toBe('127.0.0.1:853');
  expect(normalizeServer('::1')).toBe('[::1]:53');
  expect(normalizeServer('[::1]:5300')).toBe('[::1]:5300');
  expect(normalizeServer('FE80::1%2')).toBe('[fe80::1]:53');
  expect(normalizeServer('dns.example')).toBeNull();
});
