/**
 * Routing by name owner on a throwaway machine (test-support/system-dns-lab.ts):
 * the real proxy on 127.0.0.1:53 (as the service runs it, the takeover by
 * `system-dns enable --owner-pid`), real glibc lookups (getent), and:
 *
 *   LAN  veth0 10.99.0.2 ─ 10.99.0.1  its own resolver: printer.lan, nas.home.arpa,
 *                                      8.0.99.10.in-addr.arpa; resolv.conf "search lan"
 *   VPN  vpn0  10.98.0.2 ─ 10.98.0.1  its own resolver: intranet.corp.example,
 *                                      registered as resolvconf's record for vpn0
 *   the chosen resolver: unbound over DoT on the lab's loopback (www.public.test: A only)
 *
 * tcpdump on every lab interface but loopback records the cleartext DNS that
 * leaves; the proxy's query records say where each query went.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { skipReason } from '../../test-support/skips.js';
import { labMissing, networkManagerLabMissing, startLab, type Lab, type LabOptions } from '../../test-support/system-dns-lab.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import type { QueryRecord } from '../engine/query-record.js';

const missing = labMissing() ?? (fs.existsSync('/usr/bin/tcpdump') && fs.existsSync('/usr/bin/tshark') ? null : 'tcpdump and tshark are needed for the captures');
skipReason(import.meta.url, missing);

const STATE = '/run/dotstub-state';
const ORIGINAL = '# from DHCP\nnameserver 10.99.0.1\nsearch lan\noptions timeout:1 attempts:1\n';

/** The proxy as the product builds it (run-config's routing on), with the lab's journal directory; one JSON line per query record. */
const PROXY = (ca: string): string => `
const { startDotstub, defaultConfig } = await import('./proxy/dotstub.ts');
const { parseResolverArg } = await import('./proxy/config/resolvers.ts');
const { parseListenArg } = await import('./proxy/listen/address.ts');
const { SYSTEM_PATHS } = await import('./proxy/network/network-resolver.ts');
const config = defaultConfig(parseResolverArg('127.0.0.1:853#dns.test'), {
  listen: parseListenArg('127.0.0.1:53'),
  auth: { mode: 'opportunistic', ca: [${JSON.stringify(ca)}] },
  names: { paths: { ...SYSTEM_PATHS, stateDirs: ['${STATE}'] }, localNames: 'ask' },
});
await startDotstub(config, (p) => p.on('query', (r) => console.log('REC ' + JSON.stringify(r))));
console.log('PROXY-READY');
`;

let lab: Lab | undefined;
let unbound: UnboundServer | undefined;
afterEach(async () => {
  await unbound?.stop();
  unbound = undefined;
  await lab?.close();
  lab = undefined;
});

async function getent(l: Lab, db: 'hosts' | 'ahosts' | 'ahostsv6', name: string): Promise<string> {
  return (await l.exec(['getent', db, name], { timeoutMs: 20_000 })).stdout;
}

const BACKENDS: readonly { readonly backend: string; readonly options: LabOptions; readonly missing: string | null }[] = [
  { backend: 'resolv.conf', options: { resolvConf: { text: ORIGINAL } }, missing: null },
  // NetworkManager writes resolv.conf from its profile (DNS 10.99.0.1, search lan); the takeover sets dns=none.
  { backend: 'networkmanager', options: { resolvConf: { text: '# NetworkManager writes this\n' }, networkManager: { dns: 'default', dnsSearch: 'lan' } }, missing: networkManagerLabMissing() },
];

describe.skipIf(missing !== null).each(BACKENDS)('routing by name owner, $backend backend (lab)', ({ backend, options, missing: backendMissing }) => {
  test.skipIf(backendMissing !== null)('local, VPN and private-reverse names resolve from their owner; no public name (nor its search-suffixed form) leaves in cleartext; VPN routes follow within 1 s', async () => {
    lab = await startLab(options);
    const l = lab;
    const lan = await l.zoneServer('10.99.0.1', 53, {
      'printer.lan': { A: '10.99.0.7' },
      'nas.home.arpa': { A: '10.99.0.8' },
      '8.0.99.10.in-addr.arpa': { PTR: 'nas.home.arpa' },
    });
    await l.exec(['sh', '-c', 'ip link add vpn0 type veth peer name vpn1 && ip addr add 10.98.0.1/24 dev vpn1 && ip link set vpn1 up']);
    const vpn = await l.zoneServer('10.98.0.1', 53, { 'intranet.corp.example': { A: '10.98.0.9' } });
    unbound = await startUnbound({ names: 0, port: 853, extra: { 'www.public.test.': '192.0.2.80' }, launch: l.unboundLaunch(['127.0.0.1']) });
    const capture = l.spawn(['tcpdump', '-n', '-U', '-i', 'any', '-w', '/run/cleartext.pcap', 'port 53 and not net 127.0.0.0/8']);
    await capture.waitFor('listening on', 10_000);

    const proxy = l.spawn([process.execPath, '--import', 'tsx', '--input-type=module', '-e', PROXY(unbound.pki.caPem)]);
    await proxy.waitFor('PROXY-READY', 30_000);
    const pid = /^LABPID (\d+)$/m.exec(proxy.output())?.[1] as string;
    const on = await l.dotstub(['system-dns', 'enable', '--owner-pid', pid, '--state-dir', STATE, '--check-name', '']);
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toContain(`backend: ${backend}`);
    expect(fs.readFileSync(path.join(l.etc, 'resolv.conf'), 'utf8')).toMatch(/^nameserver 127\.0\.0\.1$/m);
    await new Promise((r) => setTimeout(r, 300)); // the router re-reads on the resolv.conf write

    const figures: Record<string, string> = {};
    const check = async (db: 'hosts' | 'ahosts' | 'ahostsv6', name: string, expected: string | null): Promise<void> => {
      const out = await getent(l, db, name);
      figures[`${db} ${name}`] = out.trim().split('\n')[0] ?? '';
      if (expected === null) expect(out, `${db} ${name}`).toBe('');
      else expect(out, `${db} ${name}`).toContain(expected);
    };
    await check('hosts', 'printer.lan', '10.99.0.7');
    await check('hosts', 'printer', '10.99.0.7'); // the short name, through the search domain
    await check('ahosts', 'printer', '10.99.0.7');
    await check('hosts', 'nas.home.arpa', '10.99.0.8');
    await check('hosts', '10.99.0.8', 'nas.home.arpa'); // private reverse, from the LAN
    await check('hosts', '10.99.0.66', null); // private reverse the LAN doesn't know
    await check('hosts', 'www.public.test', '192.0.2.80');
    await check('ahosts', 'www.public.test', '192.0.2.80');
    await check('ahostsv6', 'www.public.test', '::ffff:192.0.2.80'); // NODATA for AAAA: glibc tries www.public.test.lan too, then maps the A
    await check('hosts', 'nothing.public.test', null);

    // VPN up: its resolvconf record and its link; its names resolve from its resolver within a second.
    await l.exec(['sh', '-c', "mkdir -p /run/resolvconf/interface && printf 'nameserver 10.98.0.1\\nsearch corp.example\\n' > /run/resolvconf/interface/vpn0"]);
    const upAt = Date.now();
    await l.exec(['sh', '-c', 'ip addr add 10.98.0.2/24 dev vpn0 && ip link set vpn0 up']);
    let vpnMs = -1;
    while (Date.now() - upAt < 5000) {
      if ((await getent(l, 'hosts', 'intranet.corp.example')).includes('10.98.0.9')) {
        vpnMs = Date.now() - upAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    figures['VPN up → intranet.corp.example resolves (ms)'] = String(vpnMs);
    expect(vpnMs).toBeGreaterThanOrEqual(0);
    expect(vpnMs).toBeLessThan(1000);

    // VPN down: none of its names sent anywhere in cleartext.
    await l.exec(['sh', '-c', 'rm /run/resolvconf/interface/vpn0 && ip link del vpn0']);
    await new Promise((r) => setTimeout(r, 500));
    const recordsBeforeDown = proxy.output().split('\n').filter((x) => x.startsWith('REC ')).length;
    await check('hosts', 'intranet.corp.example', null);

    await capture.signal('INT');
    await capture.exited;
    const names = (await l.exec(['tshark', '-r', '/run/cleartext.pcap', '-Y', 'dns.flags.response == 0', '-T', 'fields', '-e', 'dns.qry.name'])).stdout.trim().split('\n').filter(Boolean);
    const records = proxy.output().split('\n').filter((x) => x.startsWith('REC ')).map((x) => JSON.parse(x.slice(4)) as QueryRecord);
    const sentClear = records.filter((r) => r.route?.kind === 'link');
    const toPublic = records.filter((r) => r.route === undefined && r.source !== 'local');
    const answeredHere = records.filter((r) => r.route?.kind === 'answered');
    console.log(
      JSON.stringify({ backend, figures, cleartextInCapture: names, lanAsked: lan.queries(), vpnAsked: vpn.queries(), records: records.length, sentClear: sentClear.length, toPublic: toPublic.map((r) => `${r.name} ${r.type}`), answeredHere: answeredHere.map((r) => `${r.name} ${r.type}`) }, null, 1),
    );

    // What left in cleartext: only names the LAN or the VPN owns, each to its owner.
    expect(new Set(names)).toEqual(new Set(['printer.lan', 'nas.home.arpa', '8.0.99.10.in-addr.arpa', '66.0.99.10.in-addr.arpa', 'intranet.corp.example']));
    expect(lan.queries().every((n) => n.endsWith('.lan') || n.endsWith('.home.arpa') || n.endsWith('.in-addr.arpa'))).toBe(true);
    expect(lan.queries().some((n) => n.includes('public.test'))).toBe(false);
    expect(vpn.queries().every((n) => n === 'intranet.corp.example')).toBe(true);
    // The public resolver got no private reverse lookup, no local name.
    expect(toPublic.filter((r) => /in-addr\.arpa|ip6\.arpa|\.lan$|home\.arpa/.test(r.name ?? ''))).toEqual([]);
    // The search-suffixed public name was answered here.
    expect(answeredHere.map((r) => r.name)).toContain('www.public.test.lan');
    // After the VPN went down, its names went only to the encrypted resolver.
    expect(records.slice(recordsBeforeDown).filter((r) => r.route?.kind === 'link' && (r.name ?? '').includes('corp.example'))).toEqual([]);
  }, 120_000);
});
