/**
 * Which names the networks own (name-owners.ts) and what the OS says about
 * them (name-sources.ts): the routing rules, and the parsers against the
 * text the real tools print (busctl --json=short from systemd 252,
 * nmcli -t, a dhclient lease). The same table drives the lab
 * (name-routing-lab.test.ts), where the sources are the real programs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { NameOwners, type Lan, type NameOwner } from './name-owners.js';
import { fromLeaseText, fromNmcli, fromResolvConfText, fromResolvedProperties, interfaceOrderPrefixes, NameOwnersRefresher, recordLink } from './name-sources.js';

const LAN: Lan = { servers: [{ host: '10.99.0.1', port: 53 }], link: 'veth0', source: 'test' };
const lanOwner: NameOwner = { suffix: 'lan', servers: LAN.servers, link: 'veth0', source: 'test', search: true };
const vpnOwner: NameOwner = { suffix: 'corp.example', servers: [{ host: '10.98.0.1', port: 53 }], link: 'vpn0', source: 'test', search: false };
const table = new NameOwners([lanOwner, vpnOwner, { suffix: 'example', servers: LAN.servers, link: 'veth0', source: 'test', search: false }], LAN);

function where(owners: NameOwners, name: string): string {
  const r = owners.route(name);
  return r.kind === 'link' ? `link ${r.owner.link}` : r.kind;
}

describe('routing by name owner', () => {
  test('local and VPN names go to the link that owns them, longest suffix first; the rest to the public resolver', () => {
    expect(where(table, 'printer.lan')).toBe('link veth0');
    expect(where(table, 'PRINTER.LAN.')).toBe('link veth0');
    expect(where(table, 'intranet.corp.example')).toBe('link vpn0');
    expect(where(table, 'www.example')).toBe('link veth0');
    expect(where(table, 'www.example.com')).toBe('public');
    expect(where(table, 'planet')).toBe('public');
  });

  test('a suffix matches whole labels only: names that merely end in the same letters go to the public resolver', () => {
    expect(where(table, 'www.notlan')).toBe('public');
    expect(where(table, 'www.corp-example')).toBe('public');
    expect(where(table, 'x.mycorp.example')).toBe('link veth0'); // under example, not corp.example
    expect(where(table, 'printer.notlocal')).toBe('public');
    expect(where(table, 'www.myarpa')).toBe('public');
    expect(where(table, '8.0.99.10.in-addr.arpa.evil.com')).toBe('public');
    expect(where(table, 'foo.myhome.arpa')).toBe('public');
    expect(where(table, 'arpa')).toBe('public');
  });

  test('a single-label A/AAAA question nobody owns is answered here; other types (a TLD\'s NS, DS) still go out', () => {
    expect(table.route('printer', 'AAAA').kind).toBe('nxdomain');
    expect(table.route('printer', 'A').kind).toBe('nxdomain');
    expect(table.route('com', 'NS').kind).toBe('public');
    expect(table.route('lan', 'A').kind).toBe('link');
  });

  test('a public name with the search domain glued on (www.public.test.lan) is answered here, never sent to the LAN', () => {
    const r = table.route('www.public.test.lan');
    expect(r).toEqual({ kind: 'nxdomain', why: 'a multi-label name with the search domain lan glued on: never sent in cleartext' });
    // a routing-only domain has no search behaviour: deeper names go to their owner
    expect(where(table, 'a.b.corp.example')).toBe('link vpn0');
  });

  test('home.arpa and .internal go to the LAN; .local never leaves', () => {
    expect(where(table, 'nas.home.arpa')).toBe('link veth0');
    expect(where(table, 'box.internal')).toBe('link veth0');
    expect(where(new NameOwners([], null), 'nas.home.arpa')).toBe('nxdomain');
    expect(where(table, 'printer.local')).toBe('nxdomain');
  });

  test('private reverse lookups: to a LAN resolver on a private address, else answered here; never public', () => {
    for (const name of ['8.0.99.10.in-addr.arpa', '1.1.168.192.in-addr.arpa', '1.0.20.172.in-addr.arpa', `${'0.'.repeat(30)}d.f.ip6.arpa`]) expect(where(table, name)).toBe('link veth0');
    const publicLan = new NameOwners([], { ...LAN, servers: [{ host: '198.51.100.1', port: 53 }] });
    expect(where(publicLan, '8.0.99.10.in-addr.arpa')).toBe('nxdomain');
    expect(where(new NameOwners([], null), '8.0.99.10.in-addr.arpa')).toBe('nxdomain');
    expect(where(table, '1.0.0.127.in-addr.arpa')).toBe('nxdomain');
    expect(where(table, '1.1.0.192.in-addr.arpa')).toBe('public'); // 192.0.1/24 is not special
    expect(where(table, '8.8.8.8.in-addr.arpa')).toBe('public');
    expect(where(table, '1.0.15.172.in-addr.arpa')).toBe('public'); // 172.15 is outside 172.16/12
  });
});

describe('what the OS says', () => {
  test("systemd-resolved's per-link DNS and Domains (busctl --json=short); its global entry (dotstub's drop-in) is ignored", () => {
    const dns = '{"type":"a(iiay)","data":[[0,2,[127,0,0,1]],[2,2,[10,99,0,1]],[3,2,[10,98,0,1]]]}';
    const domains = '{"type":"a(isb)","data":[[0,".",true],[2,"lan",false],[3,"corp.example",true]]}';
    const o = new NameOwners(fromResolvedProperties(dns, domains).owners, null);
    expect(o.owners.map((x) => [x.suffix, x.servers[0]?.host, x.search])).toEqual([
      ['corp.example', '10.98.0.1', false],
      ['lan', '10.99.0.1', true],
    ]);
  });

  test("NetworkManager's devices (nmcli -t dev show), a dhclient lease, a resolv.conf", () => {
    const nm = fromNmcli('GENERAL.DEVICE:veth0\nIP4.DNS[1]:10.99.0.1\nIP4.DOMAIN[1]:lan\n\nGENERAL.DEVICE:vpn0\nIP4.DNS[1]:10.98.0.1\nIP4.DOMAIN[1]:~corp.example\nIP6.DNS[1]:fd00\\:98\\:\\:1\n\nGENERAL.DEVICE:lo\n');
    expect(nm.owners.map((x) => `${x.link} ${x.suffix} ${x.search} ${x.servers.map((s) => s.host).join(',')}`)).toEqual(['veth0 lan true 10.99.0.1', 'vpn0 corp.example false 10.98.0.1,fd00:98::1']);
    const lease = fromLeaseText('lease {\n  option domain-name-servers 192.168.1.1;\n  option domain-name "home";\n  option domain-search "lan", "home.example";\n}\n', '/var/lib/dhcp/dhclient.leases');
    expect(lease.owners.map((x) => x.suffix)).toEqual(['home', 'lan', 'home.example']);
    const rc = fromResolvConfText('nameserver 10.99.0.1\nnameserver 127.0.0.53\nsearch lan corp.example\n', 'the network', 'resolv.conf');
    expect(rc.owners.map((x) => [x.suffix, x.servers.map((s) => s.host)])).toEqual([
      ['lan', ['10.99.0.1']],
      ['corp.example', ['10.99.0.1']],
    ]);
    expect(fromResolvConfText('nameserver 127.0.0.1\nsearch lan\n', 'x', 'y').owners).toEqual([]);
  });

  test("a NetworkManager profile's own search domain (IP4.SEARCHES, as nmcli 1.42 prints a profile's ipv4.dns-search) is the link's, as DHCP's domain is", () => {
    // Recorded from nmcli 1.42 (`nmcli -t -f GENERAL.DEVICE,IP4,IP6 dev show`) for a profile with ipv4.dns-search lab.example.
    const nm = fromNmcli(
      'GENERAL.DEVICE:eth0\nIP4.ADDRESS[1]:10.99.0.2/24\nIP4.GATEWAY:10.99.0.1\nIP4.ROUTE[1]:dst = 10.99.0.0/24, nh = 0.0.0.0, mt = 100\nIP4.DNS[1]:10.99.0.1\nIP4.SEARCHES[1]:lab.example\nIP6.GATEWAY:\n\nGENERAL.DEVICE:lo\nIP4.ADDRESS[1]:127.0.0.1/8\n',
    );
    expect(nm.owners.map((x) => `${x.link} ${x.suffix} ${x.search}`)).toEqual(['eth0 lab.example true']);
  });

  test("resolvconf's records name their link: eth0.dhclient and tun0.openvpn by their first part, wg-quick's tun.wg0 (interface-order's tun* prefix) by its second", async () => {
    expect(interfaceOrderPrefixes('# interface-order(5)\nlo.inet6\nlo.inet\nlo\ntun*\ntap*\nhso*\nem+([0-9])?(_+([0-9]))*\neth*\n')).toEqual(['tun', 'tap', 'hso', 'eth']);
    const prefixes = ['tun', 'tap', 'hso', 'eth'];
    expect(['tun.wg0', 'tun0.openvpn', 'eth0.dhclient', 'wg0', 'tap.vpn1', 'tun.'].map((n) => recordLink(n, prefixes))).toEqual(['wg0', 'tun0', 'eth0', 'wg0', 'vpn1', 'tun']);
    // Where the machine has no interface-order, wg-quick names the record by the interface alone.
    expect(recordLink('wg0', [])).toBe('wg0');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-records-'));
    try {
      fs.mkdirSync(path.join(dir, 'interface'));
      fs.writeFileSync(path.join(dir, 'interface', 'tun.wg0'), 'nameserver 10.97.0.1\nsearch wg.example\n');
      fs.writeFileSync(path.join(dir, 'interface-order'), 'lo\ntun*\ntap*\n');
      const none = path.join(dir, 'none');
      let owners: NameOwners = NameOwners.empty;
      await new NameOwnersRefresher(
        { stateDirs: [], resolvConf: none, resolvedUplink: none, leases: [], resolvconfInterfaces: path.join(dir, 'interface'), interfaceOrder: path.join(dir, 'interface-order') },
        (o) => (owners = o),
        () => Promise.resolve(null),
      ).refresh();
      const r = owners.route('host.wg.example');
      expect(r.kind === 'link' ? `${r.owner.link} ${r.owner.servers.map((x) => x.host).join(',')}` : r.kind).toBe('wg0 10.97.0.1');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** `a.b.c.d` or an IPv6 address as its PTR name (in-addr.arpa / ip6.arpa). */
function ptrName(address: string): string {
  if (!address.includes(':')) return `${address.split('.').reverse().join('.')}.in-addr.arpa`;
  const [head = '', tail = ''] = address.split('::');
  const groups = (s: string): string[] => (s ? s.split(':') : []);
  const all = [...groups(head), ...Array<string>(8 - groups(head).length - groups(tail).length).fill('0'), ...groups(tail)];
  return `${[...all.map((g) => g.padStart(4, '0')).join('')].reverse().join('.')}.ip6.arpa`;
}

describe("the reverse zones of a link's own prefixes (its addresses, the routes over it)", () => {
  // A laptop on a home LAN (wlp2s0, 192.168.1.0/24, resolver 192.168.1.1) with a VPN up (tun0: 10.8.0.2/24,
  // the route 10.8.0.0/16 over it, a ULA fd42:8:0:1::2/64 and the route fd42:8::/48; its resolver 10.8.0.1),
  // as NetworkManager (nmcli -t dev show) and the kernel (ip -j addr / route, iproute2 6.1) say.
  const nmcli = 'GENERAL.DEVICE:wlp2s0\nIP4.DNS[1]:192.168.1.1\nIP4.DOMAIN[1]:lan\n\nGENERAL.DEVICE:tun0\nIP4.DNS[1]:10.8.0.1\nIP4.DOMAIN[1]:~corp.example\nIP6.DNS[1]:fd42\\:8\\:0\\:1\\:\\:1\n\nGENERAL.DEVICE:lo\n';
  const addr = JSON.stringify([
    { ifindex: 1, ifname: 'lo', addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8, scope: 'host' }, { family: 'inet6', local: '::1', prefixlen: 128, scope: 'host' }] },
    { ifindex: 2, ifname: 'wlp2s0', addr_info: [{ family: 'inet', local: '192.168.1.23', prefixlen: 24, broadcast: '192.168.1.255', scope: 'global', dynamic: true }, { family: 'inet6', local: 'fe80::5054:ff:fe12:3456', prefixlen: 64, scope: 'link' }] },
    { ifindex: 5, ifname: 'tun0', addr_info: [{ family: 'inet', local: '10.8.0.2', prefixlen: 24, broadcast: '10.8.0.255', scope: 'global' }, { family: 'inet6', local: 'fd42:8:0:1::2', prefixlen: 64, scope: 'global' }, { family: 'inet6', local: 'fe80::a1b2:c3d4:e5f6:1', prefixlen: 64, scope: 'link' }] },
    // An openvpn point-to-point link (net30): its own address and its peer's, no route over it.
    { ifindex: 7, ifname: 'tun1', addr_info: [{ family: 'inet', local: '10.9.0.6', address: '10.9.0.5', prefixlen: 32, scope: 'global' }] },
    // A link whose resolver is a public address reached over the default route: never sent private reverse lookups.
    { ifindex: 6, ifname: 'eth1', addr_info: [{ family: 'inet', local: '172.16.5.2', prefixlen: 24, scope: 'global' }] },
  ]);
  const route4 = JSON.stringify([
    { dst: 'default', gateway: '192.168.1.1', dev: 'wlp2s0', protocol: 'dhcp', metric: 600, flags: [] },
    { dst: '10.8.0.0/24', dev: 'tun0', protocol: 'kernel', scope: 'link', prefsrc: '10.8.0.2', flags: [] },
    { dst: '10.8.0.0/16', gateway: '10.8.0.1', dev: 'tun0', protocol: 'static', metric: 50, flags: [] },
    { dst: '172.16.5.0/24', dev: 'eth1', protocol: 'kernel', scope: 'link', prefsrc: '172.16.5.2', flags: [] },
    { dst: '192.168.1.0/24', dev: 'wlp2s0', protocol: 'kernel', scope: 'link', prefsrc: '192.168.1.23', metric: 600, flags: [] },
  ]);
  const route6 = JSON.stringify([
    { dst: 'fd42:8::/48', gateway: 'fd42:8:0:1::1', dev: 'tun0', protocol: 'static', metric: 50, flags: [], pref: 'medium' },
    { dst: 'fd42:8:0:1::/64', dev: 'tun0', protocol: 'kernel', metric: 50, flags: [], pref: 'medium' },
    { dst: 'fe80::/64', dev: 'wlp2s0', protocol: 'kernel', metric: 1024, flags: [], pref: 'medium' },
    { dst: 'fe80::/64', dev: 'tun0', protocol: 'kernel', metric: 256, flags: [], pref: 'medium' },
    { dst: 'default', gateway: 'fe80::1', dev: 'wlp2s0', protocol: 'ra', metric: 600, flags: [], pref: 'medium' },
  ]);
  const run = (argv: readonly string[]): Promise<string | null> => {
    const [cmd, ...args] = argv;
    if (cmd === 'nmcli') return Promise.resolve(`${nmcli}\nGENERAL.DEVICE:eth1\nIP4.DNS[1]:9.9.9.9\n\nGENERAL.DEVICE:tun1\nIP4.DNS[1]:10.9.0.5\n`);
    if (cmd === 'ip') return Promise.resolve(args.includes('addr') ? addr : args.includes('-6') ? route6 : route4);
    return Promise.resolve(null);
  };

  async function learned(): Promise<NameOwners> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-owners-'));
    try {
      const none = path.join(dir, 'none');
      let owners: NameOwners = NameOwners.empty;
      await new NameOwnersRefresher({ stateDirs: [], resolvConf: none, resolvedUplink: none, leases: [], resolvconfInterfaces: none }, (o) => (owners = o), run).refresh();
      return owners;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  function servers(owners: NameOwners, name: string): string {
    const r = owners.route(name);
    return r.kind === 'link' ? `${r.owner.link} ${r.owner.servers.map((s) => s.host).join(',')}` : r.kind;
  }

  test("an address on the VPN, or routed over it, is the VPN's to answer: its reverse goes to the VPN's resolver, not the LAN's", async () => {
    const owners = await learned();
    expect(servers(owners, ptrName('10.8.0.20'))).toBe('tun0 10.8.0.1,fd42:8:0:1::1'); // the VPN's own /24
    expect(servers(owners, ptrName('10.8.3.4'))).toBe('tun0 10.8.0.1,fd42:8:0:1::1'); // the /16 routed over it
    expect(servers(owners, ptrName('fd42:8:0:1::20'))).toBe('tun0 10.8.0.1,fd42:8:0:1::1'); // its ULA /64
    expect(servers(owners, ptrName('fd42:8:0:5::20'))).toBe('tun0 10.8.0.1,fd42:8:0:1::1'); // the ULA /48 routed over it
    expect(servers(owners, ptrName('10.9.0.6'))).toBe('tun1 10.9.0.5'); // a point-to-point link's own address
    expect(servers(owners, ptrName('10.9.0.5'))).toBe('tun1 10.9.0.5'); // and its peer's
  });

  test("the LAN keeps its own prefix and everything private no link claims; link-local stays the LAN's; a public resolver gets none", async () => {
    const owners = await learned();
    expect(servers(owners, ptrName('192.168.1.5'))).toBe('wlp2s0 192.168.1.1');
    expect(servers(owners, ptrName('10.20.0.1'))).toBe('wlp2s0 192.168.1.1'); // no link's prefix: the LAN, as before
    expect(servers(owners, ptrName('fd99::1'))).toBe('wlp2s0 192.168.1.1');
    expect(servers(owners, ptrName('fe80::a1b2:c3d4:e5f6:1'))).toBe('wlp2s0 192.168.1.1'); // every link has fe80::/64: the address doesn't say whose
    expect(servers(owners, ptrName('172.16.5.9'))).toBe('wlp2s0 192.168.1.1'); // eth1's resolver 9.9.9.9 would get it in cleartext over the internet
    expect(servers(owners, ptrName('8.8.8.8'))).toBe('public');
    expect(servers(owners, '8.10.in-addr.arpa')).toBe('tun0 10.8.0.1,fd42:8:0:1::1'); // the VPN's /16 zone itself
    expect(servers(owners, '10.in-addr.arpa')).toBe('wlp2s0 192.168.1.1'); // wider than any link's prefix
  });
});
