/** The kernel's route tables as they read on an IPv4-only network, offline, and dual stack (default-route.ts). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { removeOnExit } from '../../test-support/temp.js';
import { hasDefaultRoute } from './default-route.js';

const V4_HEAD = 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT';
const V4_DEFAULT = 'eth0\t00000000\t01350A0A\t0003\t0\t0\t0\t00000000\t0\t0\t0';
const V4_LAN = 'eth0\t00350A0A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0';
const V6_LO_UNREACHABLE = '00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo';
const V6_LINK_LOCAL = 'fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0';
const V6_DEFAULT = '00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd530001000000000000000000000001 00000400 00000001 00000000 00000003     eth0';

function tables(v4: string[], v6: string[]): { v4: string; v6: string } {
  const dir = removeOnExit(fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-routes-')));
  fs.writeFileSync(path.join(dir, 'route'), [V4_HEAD, ...v4, ''].join('\n'));
  fs.writeFileSync(path.join(dir, 'ipv6_route'), [...v6, ''].join('\n'));
  return { v4: path.join(dir, 'route'), v6: path.join(dir, 'ipv6_route') };
}

test('IPv4-only: a default route of IPv4, none of IPv6 (the kernel\'s unreachable ::/0 on lo is none)', () => {
  const t = tables([V4_LAN, V4_DEFAULT], [V6_LINK_LOCAL, V6_LO_UNREACHABLE]);
  expect(hasDefaultRoute(4, t)).toBe(true);
  expect(hasDefaultRoute(6, t)).toBe(false);
});

test('offline: the LAN only, no default route of either family; dual stack: both', () => {
  const off = tables([V4_LAN], [V6_LINK_LOCAL, V6_LO_UNREACHABLE]);
  expect([hasDefaultRoute(4, off), hasDefaultRoute(6, off)]).toEqual([false, false]);
  const dual = tables([V4_LAN, V4_DEFAULT], [V6_LINK_LOCAL, V6_DEFAULT, V6_LO_UNREACHABLE]);
  expect([hasDefaultRoute(4, dual), hasDefaultRoute(6, dual)]).toEqual([true, true]);
});

test('tables that cannot be read claim nothing: a route is assumed', () => {
  expect(hasDefaultRoute(4, { v4: '/nonexistent/route', v6: '/nonexistent/ipv6_route' })).toBe(true);
  expect(hasDefaultRoute(6, { v4: '/nonexistent/route', v6: '/nonexistent/ipv6_route' })).toBe(true);
});
