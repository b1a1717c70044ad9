/**
 * What the namespace labs of names (proxy/network/name-routing-lab.test.ts,
 * leak-watch-lab.test.ts) share: what they need, the journal directory, the
 * LAN's resolv.conf as its DHCP client writes it, and the proxy as the
 * product builds it (routing by name owner on), started inside the lab by
 * a script (`node --import tsx -e`), printing `PROXY-READY` once it listens;
 * the chosen resolver, and the capture of the cleartext DNS that leaves.
 */
import fs from 'node:fs';
import { onTestFinished } from 'vitest';
import { labMissing, type Lab, type LabProcess } from './system-dns-lab.js';
import { startUnbound, type UnboundServer } from './unbound.js';

/** Why these labs can't run here (root, namespaces, tcpdump and tshark for the captures), or null. */
export function nameLabMissing(): string | null {
  return labMissing() ?? (fs.existsSync('/usr/bin/tcpdump') && fs.existsSync('/usr/bin/tshark') ? null : 'tcpdump and tshark are needed for the captures');
}

/** The takeover's journal directory inside the lab. */
export const LAB_STATE = '/run/dotstub-state';

/** The LAN's resolv.conf, as its DHCP client writes it: its resolver and search domain. */
export const DHCP_RESOLV_CONF = '# from DHCP\nnameserver 10.99.0.1\nsearch lan\noptions timeout:1 attempts:1\n';

/**
 * The script that starts the proxy on 127.0.0.1:53 to unbound at
 * 127.0.0.1:853 (trusting `ca`), names routed with the lab's journal;
 * `observe` is script text run with `proxy` in scope before it says ready;
 * `rememberAs`: the network's key, and a memory file in the lab's state
 * directory, so the user's local-names choice can be made and kept.
 */
export function labProxyScript(o: { readonly ca: string; readonly mode: 'strict' | 'opportunistic'; readonly observe: string; readonly rememberAs?: string }): string {
  return `
const { startDotstub, defaultConfig } = await import('./proxy/dotstub.ts');
const { parseResolverArg } = await import('./proxy/config/resolvers.ts');
const { parseListenArg } = await import('./proxy/listen/address.ts');
const { SYSTEM_PATHS } = await import('./proxy/network/network-resolver.ts');
const config = defaultConfig(parseResolverArg('127.0.0.1:853#dns.test'), {
  listen: parseListenArg('127.0.0.1:53'),
  auth: { mode: '${o.mode}', ca: [${JSON.stringify(o.ca)}] },
  names: { paths: { ...SYSTEM_PATHS, stateDirs: ['${LAB_STATE}'] }, localNames: 'ask'${o.rememberAs === undefined ? '' : `, memoryFile: '${LAB_STATE}/networks.json', networkKey: () => ${JSON.stringify(o.rememberAs)}`} },
});
await startDotstub(config, (proxy) => {
${o.observe}
});
console.log('PROXY-READY');
`;
}

/**
 * The chosen resolver of these labs: unbound on the lab's 127.0.0.1:853
 * (DoT, dns.test) answering www.public.test with 192.0.2.80, and `more`;
 * stopped when the test finishes, before its lab closes (started after it).
 */
export async function publicResolver(l: Lab, more: Readonly<Record<string, string>> = {}): Promise<UnboundServer> {
  const unbound = await startUnbound({ names: 0, port: 853, extra: { 'www.public.test.': '192.0.2.80', ...more }, launch: l.unboundLaunch(['127.0.0.1']) });
  onTestFinished(() => unbound.stop());
  return unbound;
}

/** The proxy from `script` (labProxyScript) started in the lab, once it listens. */
export async function startLabProxy(l: Lab, script: string): Promise<LabProcess> {
  const proxy = l.spawn([process.execPath, '--import', 'tsx', '--input-type=module', '-e', script]);
  await proxy.waitFor('PROXY-READY', 30_000);
  return proxy;
}

/**
 * tcpdump of the DNS that leaves the lab's machine in cleartext (port 53, not
 * loopback), listening once this returns; `queriedNames()` stops it and reads
 * the names asked, in order.
 */
export async function captureCleartext(l: Lab): Promise<{ queriedNames(): Promise<string[]> }> {
  const capture = l.spawn(['tcpdump', '-n', '-U', '--immediate-mode', '-Z', 'root', '-i', 'any', '-w', '/run/cleartext.pcap', 'port 53 and not net 127.0.0.0/8']);
  await capture.waitFor('listening on', 10_000);
  return {
    queriedNames: async () => {
      await capture.signal('INT');
      await capture.exited;
      return (await l.exec(['tshark', '-r', '/run/cleartext.pcap', '-Y', 'dns.flags.response == 0', '-T', 'fields', '-e', 'dns.qry.name'])).stdout.trim().split('\n').filter(Boolean);
    },
  };
}

/** The takeover tied to the proxy's process (`--owner-pid`, as the service ties it), with the lab's journal: what the command printed; it failing fails the test. */
export async function takeOverFor(l: Lab, proxy: LabProcess): Promise<string> {
  const pid = /^LABPID (\d+)$/m.exec(proxy.output())?.[1];
  if (pid === undefined) throw new Error(`the proxy's process id is not in its output:\n${proxy.output()}`);
  const on = await l.dotstub(['system-dns', 'enable', '--owner-pid', pid, '--state-dir', LAB_STATE, '--check-name', '']);
  if (on.code !== 0) throw new Error(`system-dns enable failed (${on.code}): ${on.stderr}`);
  return on.stdout;
}
