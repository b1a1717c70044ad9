/**
 * NAT64 (RFC 6146) in the network lab's router (netlab.ts), for the
 * IPv6-only network shape: Debian's tayga, a userspace translator on a TUN
 * device, maps `prefix` (a network-specific /96, as an operator picks one;
 * or 64:ff9b::/96, the well-known one of RFC 6052) onto IPv4: a client with
 * only IPv6 reaches 10.53.2.2 at PREFIX::a35:202, from a pool of the
 * router's (10.53.64.0/24). Started and stopped by the test; the TUN device
 * and tayga go with the lab's namespaces at the latest.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Netlab, NetlabProcess } from './netlab.js';

const NAT64_POOL = '10.53.64.0/24';

export function nat64Missing(): string | null {
  if (!fs.existsSync('/usr/sbin/tayga')) return 'tayga is not installed (apt-get install tayga): the IPv6-only lab translates with it';
  if (!fs.existsSync('/dev/net/tun')) return '/dev/net/tun is missing: tayga needs a TUN device';
  return null;
}

export interface Nat64 {
  readonly prefix: string;
  /** The IPv6 address that reaches `ipv4` through this NAT64 (prefix/96 + the 32 bits). */
  synthesize(ipv4: string): string;
  stop(): Promise<void>;
}

export function synthesize96(prefix: string, ipv4: string): string {
  const [a, b, c, d] = ipv4.split('.').map(Number) as [number, number, number, number];
  const base = prefix.replace(/\/96$/, '').replace(/::$/, '');
  return `${base}::${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

export async function startNat64(lab: Netlab, prefix: string): Promise<Nat64> {
  const dir = path.join(lab.dir, `tayga-${prefix.replace(/[:/]/g, '_')}`);
  fs.mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'tayga.conf');
  fs.writeFileSync(conf, [`tun-device nat64`, `ipv4-addr 10.53.64.1`, `ipv6-addr fd53:64::1`, `prefix ${prefix}`, `dynamic-pool ${NAT64_POOL}`, `data-dir ${dir}`, ''].join('\n'));
  const run = async (argv: readonly string[]): Promise<void> => {
    const r = await lab.router.exec(argv);
    if (r.code !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr.trim()}`);
  };
  await run(['tayga', '--config', conf, '--mktun']);
  await run(['ip', 'link', 'set', 'nat64', 'up']);
  await run(['ip', 'route', 'add', NAT64_POOL, 'dev', 'nat64']);
  await run(['ip', '-6', 'route', 'add', prefix, 'dev', 'nat64']);
  const proc: NetlabProcess = lab.router.spawn(['tayga', '--config', conf, '-d']);
  // tayga says nothing when ready; the TUN device exists and it reads it from its first instruction.
  await new Promise((r) => setTimeout(r, 300));
  if (proc.child.exitCode !== null) throw new Error(`tayga did not start: ${proc.output()}`);
  return {
    prefix,
    synthesize: (ipv4) => synthesize96(prefix, ipv4),
    stop: async () => {
      await proc.stop();
      await lab.router.exec(['ip', 'link', 'del', 'nat64']);
    },
  };
}
