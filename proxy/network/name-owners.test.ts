/**
 * Which names the networks own (name-owners.ts) and what the OS says about
 * them (name-sources.ts): the routing rules, and the parsers against the
 * text the real tools print (busctl --json=short from systemd 252,
 * nmcli -t, a dhclient lease). The same table drives the lab
 * (name-routing-lab.test.ts), where the sources are the real programs.
 */
import { describe, expect, test } from 'vitest';
import { NameOwners, type Lan, type NameOwner } from './name-owners.js';
import { fromLeaseText, fromNmcli, fromResolvConfText, fromResolvedProperties } from './name-sources.js';

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
});
