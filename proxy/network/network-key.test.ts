/** The network we're on, told apart without IPv4 too (network-key.ts): an IPv6-only network's key is its router's link-local address. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { removeOnExit } from '../../test-support/temp.js';
import { gateway6Address, networkIdentity } from './network-key.js';

const dir = removeOnExit(fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-netkey-')));
const file = (name: string, text: string): string => {
  fs.writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
};
const NO_V4 = file('route', 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n');
const ARP = file('arp', 'IP address       HW type     Flags       HW address            Mask     Device\n');
const V6 = (hop: string, dev = 'wlan0'): string =>
  file(
    `ipv6_route-${hop}`,
    [
      `fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 ${dev}`,
      `00000000000000000000000000000000 00 00000000000000000000000000000000 00 ${hop} 00000400 00000001 00000000 00000003 ${dev}`,
      '00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200 lo',
      '',
    ].join('\n'),
  );

test("an IPv6-only network: the key is the router's, from its link-local address; another router, another key; no route of either family, none", () => {
  expect(gateway6Address(V6('fe80000000000000005300fffe000101'))).toBe('fe80:0:0:0:53:ff:fe00:101%wlan0');
  const here = networkIdentity(NO_V4, ARP, V6('fe80000000000000005300fffe000101'));
  expect(here).toMatchObject({ byMac: true });
  expect(here?.key).toMatch(/^[0-9a-f]{32}$/);
  expect(networkIdentity(NO_V4, ARP, V6('fe80000000000000005300fffe000101'))?.key).toBe(here?.key);
  expect(networkIdentity(NO_V4, ARP, V6('fe80000000000000005300fffe000202'))?.key).not.toBe(here?.key);
  expect(networkIdentity(NO_V4, ARP, file('empty6', ''))).toBeNull();
});
