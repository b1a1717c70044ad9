/** Finding the network's own resolver: the setting, the journal, resolv.conf, resolved's list, DHCP leases — in that order. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { removeOnExit } from '../../test-support/temp.js';
import { Journal, readBootId } from '../system-dns/journal.js';
import { discoverCapportUrl, discoverNetworkResolver, parseServer, type DiscoveryPaths } from './network-resolver.js';

function sandbox(): { dir: string; paths: DiscoveryPaths } {
  const dir = removeOnExit(fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-netdns-')));
  fs.mkdirSync(path.join(dir, 'state'));
  fs.mkdirSync(path.join(dir, 'leases'));
  return {
    dir,
    paths: { stateDirs: [path.join(dir, 'state')], resolvConf: path.join(dir, 'resolv.conf'), resolvedUplink: path.join(dir, 'uplink.conf'), leases: [path.join(dir, 'leases')] },
  };
}

describe('discoverNetworkResolver', () => {
  test('the setting wins, as given', () => {
    const { paths } = sandbox();
    fs.writeFileSync(paths.resolvConf, 'nameserver 10.0.0.1\n');
    expect(discoverNetworkResolver(['192.168.7.1', '[2001:db8::53]:5353'], paths)).toEqual({
      servers: [{ host: '192.168.7.1', port: 53 }, { host: '2001:db8::53', port: 5353 }],
      source: 'the network-DNS setting',
    });
  });

  test("after a takeover, what resolv.conf had before (from the journal), not dotstub's own 127.0.0.1", () => {
    const { paths } = sandbox();
    fs.writeFileSync(paths.resolvConf, '# Managed by dotstub (private DNS).\nnameserver 127.0.0.1\n');
    new Journal(paths.stateDirs[0]!).write({
      version: 1,
      backend: 'resolv.conf',
      port: 53,
      pid: process.pid,
      bootId: readBootId(),
      startedAt: new Date().toISOString(),
      original: ['nameserver 192.168.1.1'],
      steps: [
        {
          step: {
            kind: 'file',
            path: '/etc/resolv.conf',
            before: { type: 'file', base64: Buffer.from('nameserver 192.168.1.1\nnameserver fe80::1\nsearch lan\n').toString('base64'), mode: 0o644 },
            after: { type: 'file', base64: Buffer.from('nameserver 127.0.0.1\n').toString('base64'), mode: 0o644 },
            why: 'test',
          },
          progress: 'applied',
        },
      ],
    });
    const found = discoverNetworkResolver([], paths);
    expect(found?.servers).toEqual([{ host: '192.168.1.1', port: 53 }]);
    expect(found?.source).toMatch(/before dotstub took over/);
  });

  test('resolv.conf, then systemd-resolved\'s link servers; loopback stubs are never the network', () => {
    const { paths } = sandbox();
    fs.writeFileSync(paths.resolvConf, 'nameserver 127.0.0.53\noptions edns0\n');
    fs.writeFileSync(paths.resolvedUplink, 'nameserver 127.0.0.1\nnameserver 10.20.0.1\n');
    expect(discoverNetworkResolver([], paths)).toMatchObject({ servers: [{ host: '10.20.0.1', port: 53 }], source: expect.stringContaining('systemd-resolved') });
    fs.writeFileSync(paths.resolvConf, 'nameserver 172.16.0.1\n');
    expect(discoverNetworkResolver([], paths)?.servers).toEqual([{ host: '172.16.0.1', port: 53 }]);
  });

  test('DHCP leases (dhclient and networkd), newest first; null when nothing is known', () => {
    const { paths } = sandbox();
    expect(discoverNetworkResolver([], paths)).toBeNull();
    const dir = paths.leases[0]!;
    fs.writeFileSync(path.join(dir, 'dhclient.wlan0.leases'), 'lease {\n  option domain-name-servers 10.9.9.9,10.9.9.10;\n}\n');
    expect(discoverNetworkResolver([], paths)?.servers.map((s) => s.host)).toEqual(['10.9.9.9', '10.9.9.10']);
    const newer = path.join(dir, '2');
    fs.writeFileSync(newer, 'ADDRESS=10.1.1.5\nDNS=10.1.1.1 10.1.1.2\n');
    fs.utimesSync(newer, new Date(Date.now() + 5000), new Date(Date.now() + 5000));
    expect(discoverNetworkResolver([], paths)?.servers.map((s) => s.host)).toEqual(['10.1.1.1', '10.1.1.2']);
  });

  test('parseServer reads addresses and refuses names', () => {
    expect(parseServer('10.0.0.1:5353')).toEqual({ host: '10.0.0.1', port: 5353 });
    expect(parseServer('[fe80::1%wlan0]:53')).toEqual({ host: 'fe80::1%wlan0', port: 53 });
    expect(parseServer('router.lan')).toBeNull();
    expect(parseServer('10.0.0.1:70000')).toBeNull();
  });
});

describe('discoverCapportUrl', () => {
  test('the CAPPORT API the DHCP lease announced (RFC 8910), HTTPS only', () => {
    const { paths } = sandbox();
    const dir = paths.leases[0]!;
    expect(discoverCapportUrl(paths.leases)).toBeNull();
    fs.writeFileSync(path.join(dir, 'old'), 'CAPTIVE_PORTAL=http://insecure.example/api\n');
    expect(discoverCapportUrl(paths.leases)).toBeNull();
    fs.writeFileSync(path.join(dir, 'dhclient.leases'), 'lease {\n  option captive-portal-url "https://portal.example/api";\n}\n');
    expect(discoverCapportUrl(paths.leases)).toBe('https://portal.example/api');
  });
});
