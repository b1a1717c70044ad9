/**
 * The leak watch on a throwaway machine (test-support/system-dns-lab.ts):
 * the real proxy on 127.0.0.1:53 in strict mode with routing on (as the
 * service runs it), the takeover by `system-dns enable --owner-pid` on the
 * resolv.conf backend, real glibc lookups (getent), and tcpdump on every lab
 * interface but loopback. What the watch reports is checked against what
 * the capture shows:
 *
 *   - before the takeover, resolv.conf names the LAN's resolver: a bypass;
 *   - a clean takeover: 0 paths, "clean since" set, network changes counted;
 *     with the chosen resolver down, a lookup fails (SERVFAIL) and nothing
 *     leaves in cleartext: the capture agrees;
 *   - the OS adds an IPv6 RDNSS server to resolv.conf (as rdnssd does): the
 *     watch reports it within the second; with the resolver down, glibc
 *     falls through to it and the name leaves in cleartext: the capture agrees.
 */
import { describe, expect, test } from 'vitest';
import { skipWith } from '../../test-support/skips.js';
import { DHCP_RESOLV_CONF, captureCleartext, labProxyScript, nameLabMissing, publicResolver, startLabProxy, takeOverFor } from '../../test-support/name-lab.js';
import { resolvedLabMissing, labForTest, type Lab, type LabProcess } from '../../test-support/system-dns-lab.js';
import type { LeakView } from './leak-watch.js';

const missing = nameLabMissing();
const ORIGINAL = DHCP_RESOLV_CONF;

/** The proxy as the product builds it, strict (no cleartext fallback of its own); prints its leak view whenever it changes. */
const PROXY = (ca: string): string =>
  labProxyScript({
    ca,
    mode: 'strict',
    observe: `proxy.on('network-change', (c) => console.log('NETCHANGE ' + c.sentence));
let last = '';
setInterval(() => { const v = JSON.stringify(proxy.leaks); if (v !== last) { last = v; console.log('LEAKS ' + v); } }, 50);`,
  });

function leaks(proxy: LabProcess): LeakView | null {
  const line = proxy.output().split('\n').filter((l) => l.startsWith('LEAKS ')).at(-1);
  return line ? (JSON.parse(line.slice(6)) as LeakView) : null;
}

const sh = async (l: Lab, script: string): Promise<void> => {
  const r = await l.exec(['sh', '-c', script]);
  if (r.code !== 0) throw new Error(`${script}: ${r.stderr}`);
};

describe('the leak watch against captures (lab)', skipWith(missing), () => {
  test('a clean takeover reports 0 paths and nothing leaves; an IPv6 RDNSS server added to resolv.conf is reported as a bypass, and the capture shows a name leaving through it', async () => {
    const l = await labForTest({ resolvConf: { text: ORIGINAL } });
    await sh(l, 'ip addr add fd00:99::2/64 dev veth0 nodad && ip addr add fd00:99::1/64 dev veth1 nodad');
    const lan = await l.zoneServer('10.99.0.1', 53, { 'printer.lan': { A: '10.99.0.7' } });
    const rdnss = await l.zoneServer('fd00:99::1', 53, { 'printer.lan': { A: '10.99.0.7' } });
    const unbound = await publicResolver(l);
    const capture = await captureCleartext(l);
    const proxy = await startLabProxy(l, PROXY(unbound.pki.caPem));

    // Before the takeover: programs ask the LAN's resolver; the watch says so and claims no figure.
    await expect.poll(() => leaks(proxy)?.paths.map((p) => p.what), { timeout: 5000 }).toEqual(['nameserver 10.99.0.1']);
    const before = leaks(proxy);
    expect(before?.measured).toBe(true);
    expect(before?.cleanSince).toBeNull();
    expect(before?.paths.map((p) => p.what)).toEqual(['nameserver 10.99.0.1']);

    const on = await takeOverFor(l, proxy);
    expect(on).toContain('backend: resolv.conf');
    // The watch re-reads on the write: 0 paths, clean since now.
    await expect.poll(() => leaks(proxy)?.paths.length, { timeout: 5000 }).toBe(0);
    const clean = leaks(proxy) as LeakView;
    expect(clean).toMatchObject({ measured: true, why: null, networkChanges: 0 });
    expect(clean.cleanSince).not.toBeNull();
    // A network change (an address comes): read again and counted; still clean since the same moment.
    await sh(l, 'ip addr add 10.77.0.2/24 dev veth0');
    await proxy.waitFor('NETCHANGE', 10_000);
    await expect.poll(() => leaks(proxy)?.networkChanges, { timeout: 5000 }).toBe(1);
    expect(leaks(proxy)?.cleanSince).toBe(clean.cleanSince);

    expect(await l.exec(['getent', 'hosts', 'www.public.test'])).toMatchObject({ stdout: expect.stringContaining('192.0.2.80') as string });
    // The chosen resolver goes away: strict dotstub answers SERVFAIL, and there is no other server to fall through to.
    await unbound.stop();
    expect((await l.exec(['getent', 'hosts', 'clean-probe.public.test'], { timeoutMs: 20_000 })).stdout).toBe('');

    // The OS adds the router's IPv6 resolver (RDNSS) after ours, as rdnssd does.
    const addedAt = Date.now();
    await sh(l, "printf 'nameserver fd00:99::1\\n' >> /etc/resolv.conf");
    await expect.poll(() => leaks(proxy)?.paths.map((p) => p.what), { timeout: 5000 }).toEqual(['nameserver fd00:99::1']);
    const seenMs = Date.now() - addedAt;
    const bypass = leaks(proxy) as LeakView;
    expect(bypass.cleanSince).toBeNull();
    expect(bypass.paths[0]?.sentence).toContain('an IPv6 resolver (usually added from the router\'s advertisements, RDNSS), besides dotstub');
    // And it is a real path: with dotstub answering SERVFAIL, glibc asks the next server, in cleartext.
    await l.exec(['getent', 'hosts', 'leak-probe.public.test'], { timeoutMs: 20_000 });

    const names = await capture.queriedNames();
    console.log(JSON.stringify({ cleartextInCapture: names, lanAsked: lan.queries(), rdnssAsked: rdnss.queries(), bypassSeenMs: seenMs, clean: clean.cleanSince, bypass: bypass.paths }, null, 1));
    // While the watch said 0 paths, nothing left in cleartext; once it reported the RDNSS server, a name left through it.
    expect(names).not.toContain('www.public.test');
    expect(names).not.toContain('clean-probe.public.test');
    expect(names).toContain('leak-probe.public.test');
    expect(rdnss.queries()).toContain('leak-probe.public.test');
    expect(lan.queries()).toEqual([]);
  }, 120_000);
});

describe('the leak watch behind systemd-resolved, against captures (lab)', skipWith(missing), () => {
  test("a link's search domain is reported, and the capture shows a public name with it glued on going there; once the link drops it, 0 paths and nothing leaves; a VPN link with ~. is reported, and the capture shows a public name going to it", { ...skipWith(resolvedLabMissing()), timeout: 120_000 }, async () => {
    const l = await labForTest({ resolvConf: { symlink: '../run/systemd/resolve/stub-resolv.conf' }, resolved: true });
    await sh(l, 'resolvectl dns veth0 10.99.0.1 && resolvectl domain veth0 lan');
    const lan = await l.zoneServer('10.99.0.1', 53, { 'printer.lan': { A: '10.99.0.7' } });
    await sh(l, 'ip link add vpn0 type veth peer name vpn1 && ip addr add 10.98.0.1/24 dev vpn1 && ip link set vpn1 up');
    const vpn = await l.zoneServer('10.98.0.1', 53, { 'intranet.corp.example': { A: '10.98.0.9' } });
    const unbound = await publicResolver(l, { 'www2.public.test.': '192.0.2.81', 'www3.public.test.': '192.0.2.82' });
    const capture = await captureCleartext(l);
    const proxy = await startLabProxy(l, PROXY(unbound.pki.caPem));
    const what = (): string[] | undefined => leaks(proxy)?.paths.map((p) => p.what);

    // Not taken over: resolved sends everything to the LAN's resolver.
    await expect.poll(what, { timeout: 5000 }).toEqual(['systemd-resolved not pointed at dotstub', 'search domain lan on veth0']);
    const on = await takeOverFor(l, proxy);
    expect(on).toContain('backend: systemd-resolved');
    // With dotstub on port 53 the takeover points glibc at dotstub itself, so the link's search domain is no path any
    // more: a public name with lan glued on (glibc's search on an IPv6-only lookup, NODATA for AAAA) is answered by dotstub.
    await expect.poll(what, { timeout: 5000 }).toEqual([]);
    const clean = leaks(proxy) as LeakView;
    expect(clean.cleanSince).not.toBeNull();
    expect((await l.exec(['getent', 'ahostsv6', 'www.public.test'], { timeoutMs: 20_000 })).stdout).toContain('192.0.2.80');
    expect((await l.exec(['getent', 'ahostsv6', 'www2.public.test'], { timeoutMs: 20_000 })).stdout).toContain('192.0.2.81');

    // A VPN that claims every domain (~.), as it comes up: glibc still asks dotstub, but programs that ask resolved
    // directly (its API: nss-resolve, resolvectl) would go to the VPN: reported, and resolvectl's lookup does go there.
    await sh(l, "resolvectl dns vpn0 10.98.0.1 && resolvectl domain vpn0 '~.' && ip addr add 10.98.0.2/24 dev vpn0 && ip link set vpn0 up");
    await expect.poll(what, { timeout: 5000 }).toEqual(['~. on vpn0']);
    expect(leaks(proxy)?.cleanSince).toBeNull();
    expect((await l.exec(['getent', 'hosts', 'www3.public.test'], { timeoutMs: 20_000 })).stdout).toContain('192.0.2.82');
    const glibcAskedVpn = vpn.queries().includes('www3.public.test');
    await l.exec(['resolvectl', 'query', '--cache=no', 'www3.public.test'], { timeoutMs: 20_000 });

    const names = await capture.queriedNames();
    console.log(JSON.stringify({ backend: 'systemd-resolved', cleartextInCapture: names, lanAsked: lan.queries(), vpnAsked: vpn.queries() }, null, 1));
    // While no path was reported, no public name left (the glued form included); the one reported is one the capture shows used.
    expect(names.filter((n) => n.startsWith('www.public.test') || n.startsWith('www2.public.test'))).toEqual([]);
    expect(lan.queries().filter((n) => n.includes('public.test'))).toEqual([]);
    expect(glibcAskedVpn).toBe(false);
    expect(vpn.queries()).toContain('www3.public.test');
  });
});
