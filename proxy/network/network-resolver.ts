/**
 * The network's own resolver: the one server dotstub may ever ask in
 * cleartext (signing in to a captive portal, or degraded mode when the user
 * allowed it). Never a third party, never dotstub itself. Found, first hit
 * wins (issue 9, item 2):
 *
 *   1. the user's setting / `--network-dns ADDR`;
 *   2. the system-DNS journal: what resolv.conf named before dotstub took over;
 *   3. /etc/resolv.conf as it is (when it doesn't point at a loopback stub);
 *   4. systemd-resolved's list of the links' servers (/run/systemd/resolve/resolv.conf);
 *   5. DHCP lease files (dhclient, NetworkManager's internal client, systemd-networkd).
 *
 * Read again on each use: the network changes under us.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Journal } from '../system-dns/journal.js';
import { parseResolvConf } from '../system-dns/resolv-conf.js';

export interface NetworkServer {
  readonly host: string;
  readonly port: number;
}

export interface NetworkResolver {
  readonly servers: readonly NetworkServer[];
  /** Where they came from, for the status and the log: "the setting", "/etc/resolv.conf", … */
  readonly source: string;
}

export interface DiscoveryPaths {
  /** Directories that may hold a system-DNS journal. */
  readonly stateDirs: readonly string[];
  readonly resolvConf: string;
  readonly resolvedUplink: string;
  /** Files or directories of DHCP leases. */
  readonly leases: readonly string[];
  /** resolvconf's per-interface records (default /run/resolvconf/interface). */
  readonly resolvconfInterfaces?: string;
  /** resolvconf's interface-order (default /etc/resolvconf/interface-order): how wg-quick names its records. */
  readonly interfaceOrder?: string;
}

export const SYSTEM_PATHS: DiscoveryPaths = {
  stateDirs: ['/var/lib/dotstub'],
  resolvConf: '/etc/resolv.conf',
  resolvedUplink: '/run/systemd/resolve/resolv.conf',
  leases: ['/var/lib/dhcp', '/var/lib/NetworkManager', '/run/systemd/netif/leases'],
};

/** `192.168.1.1`, `192.168.1.1:5353`, `fe80::1`, `[fe80::1]:53` → host and port; null when it isn't an address. */
export function parseServer(text: string): NetworkServer | null {
  const s = text.trim();
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  const port6 = v6?.[2] ? Number(v6[2]) : 53;
  if (v6?.[1] && net.isIPv6(v6[1].replace(/%[\w.-]+$/, '')) && port6 > 0 && port6 < 65536) return { host: v6[1], port: port6 };
  if (net.isIP(s.replace(/%[\w.-]+$/, '')) !== 0) return { host: s, port: 53 };
  const v4 = /^([\d.]+):(\d+)$/.exec(s);
  if (v4?.[1] && v4[2] && net.isIPv4(v4[1])) {
    const port = Number(v4[2]);
    if (port > 0 && port < 65536) return { host: v4[1], port };
  }
  return null;
}

/** Loopback and unspecified addresses: a stub (dotstub, resolved, dnsmasq), never the network's resolver. */
function isLocalStub(host: string): boolean {
  return host.startsWith('127.') || host === '::1' || host === '0.0.0.0' || host === '::';
}

export function usable(list: readonly string[]): NetworkServer[] {
  const out: NetworkServer[] = [];
  for (const s of list) {
    const server = parseServer(s);
    // A link-local IPv6 server needs its zone (fe80::1%wlan0), which resolv.conf rarely has: skip those without one.
    // A loopback server on port 53 is a stub (dotstub, resolved, dnsmasq); one on another port was named with its port on purpose (a local forwarder, a test's stand-in LAN resolver).
    if (server && !(isLocalStub(server.host) && server.port === 53) && !(server.host.toLowerCase().startsWith('fe80:') && !server.host.includes('%'))) out.push(server);
  }
  return out;
}

export function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The resolv.conf texts recorded before dotstub took the system's DNS over (the journal's file states), with where each came from. */
export function journalResolvConfs(stateDirs: readonly string[]): { readonly text: string; readonly path: string; readonly dir: string }[] {
  const out: { text: string; path: string; dir: string }[] = [];
  for (const dir of stateDirs) {
    let journal;
    try {
      journal = new Journal(dir).read();
    } catch {
      continue;
    }
    if (!journal) continue;
    for (const { step } of journal.steps) {
      if (step.kind !== 'file' || !step.path.endsWith('resolv.conf') || step.before.type !== 'file') continue;
      out.push({ text: Buffer.from(step.before.base64, 'base64').toString('utf8'), path: step.path, dir });
    }
  }
  return out;
}

/** The nameservers resolv.conf had before dotstub took the system's DNS over, from the journal's recorded file states. */
function fromJournal(stateDirs: readonly string[]): NetworkResolver | null {
  for (const { text, path: file, dir } of journalResolvConfs(stateDirs)) {
    const servers = usable(parseResolvConf(text).nameservers);
    if (servers.length) return { servers, source: `what ${file} named before dotstub took over (journal in ${dir})` };
  }
  return null;
}

/** The lease files under `places` (files, or directories of them), newest first: the newest lease is the network we're on. */
export function leaseFiles(places: readonly string[]): string[] {
  const files: { file: string; mtime: number }[] = [];
  for (const p of places) {
    let names: string[];
    try {
      names = fs.statSync(p).isDirectory() ? fs.readdirSync(p).map((n) => path.join(p, n)) : [p];
    } catch {
      continue;
    }
    for (const f of names) {
      try {
        const st = fs.statSync(f);
        if (st.isFile() && st.size < 1_000_000) files.push({ file: f, mtime: st.mtimeMs });
      } catch {
        // vanished
      }
    }
  }
  return files.sort((a, b) => b.mtime - a.mtime).map((f) => f.file);
}

/** dhclient (`option domain-name-servers a,b;`), NetworkManager's internal client and networkd (`DNS=a b`). */
function fromLeases(places: readonly string[]): NetworkResolver | null {
  for (const file of leaseFiles(places)) {
    const text = readText(file);
    if (!text) continue;
    const dhclient = [...text.matchAll(/option domain-name-servers ([^;]+);/g)].pop();
    const list = dhclient?.[1] ? dhclient[1].split(',') : /^DNS=(.+)$/m.exec(text)?.[1]?.split(/\s+/);
    const servers = list ? usable(list) : [];
    if (servers.length) return { servers, source: `the DHCP lease ${file}` };
  }
  return null;
}

/** The network's own resolver, or null when none can be found (then no cleartext path exists at all). */
export function discoverNetworkResolver(configured: readonly string[], paths: DiscoveryPaths = SYSTEM_PATHS): NetworkResolver | null {
  if (configured.length) {
    // What the user names is taken as given (a loopback forwarder of their own is their call).
    const servers = configured.map(parseServer).filter((x): x is NetworkServer => x !== null);
    return servers.length ? { servers, source: 'the network-DNS setting' } : null;
  }
  const journal = fromJournal(paths.stateDirs);
  if (journal) return journal;
  for (const [file, what] of [
    [paths.resolvConf, paths.resolvConf],
    [paths.resolvedUplink, `systemd-resolved's link servers (${paths.resolvedUplink})`],
  ] as const) {
    const text = readText(file);
    if (text === undefined) continue;
    const servers = usable(parseResolvConf(text).nameservers);
    if (servers.length) return { servers, source: what };
  }
  return fromLeases(paths.leases);
}

/**
 * The network's RFC 8908 API URL, as DHCP (RFC 8910, option 114) or a
 * router advertisement announced it, from the lease files that record it:
 * systemd-networkd (`CAPTIVE_PORTAL=`), NetworkManager's internal client
 * (`CAPTIVE_PORTAL=` too), dhclient with `option captive-portal-url` declared
 * (`option captive-portal-url "https://…";`). HTTPS only; null when none.
 */
export function discoverCapportUrl(places: readonly string[] = SYSTEM_PATHS.leases): string | null {
  for (const file of leaseFiles(places)) {
    const text = readText(file);
    if (!text) continue;
    const url = /^CAPTIVE_PORTAL=(\S+)$/m.exec(text)?.[1] ?? [...text.matchAll(/option captive-portal-url "([^"]+)";/g)].pop()?.[1];
    if (!url) continue;
    try {
      if (new URL(url).protocol === 'https:') return url;
    } catch {
      // not a URL: keep looking
    }
  }
  return null;
}
