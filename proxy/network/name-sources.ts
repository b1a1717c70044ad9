/**
 * Learning which names each link owns from what the OS says
 * (docs/where-names-go.md), into a NameOwners table:
 *
 *   1. systemd-resolved's per-link DNS servers and Domains, over D-Bus
 *      (`busctl get-property … Manager DNS Domains`: stable across versions
 *      where `resolvectl`'s text is not); a plain domain is a search and
 *      routing domain, `~domain` routing only, `~.` nobody's to own here;
 *   2. NetworkManager's per-device DNS and domains (`nmcli dev show`);
 *   3. resolvconf's per-interface records (`/run/resolvconf/interface/`,
 *      what a VPN's hook or wg-quick registers with `resolvconf -a`);
 *   4. resolv.conf's `search`/`domain` and nameservers as they were before
 *      the takeover (the journal holds the original bytes), or as they are
 *      when dotstub hasn't rewritten the file (a VPN's resolvconf hook);
 *   5. DHCP leases' domain name and search list (options 15 and 119);
 *
 * and, for the private reverse zones, each link's own prefixes from the
 * kernel of this network namespace (`ip -j addr`, `ip -j route`): a VPN's
 * addresses and the routes over it are the VPN's to name.
 *
 * Loopback servers (dotstub itself, resolved's stub) and resolved's global
 * entries (ifindex 0: dotstub's own drop-in) are never owners. Read again
 * whenever the network changes (network/watch.ts).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MANAGED_MARKER, parseResolvConf } from '../system-dns/resolv-conf.js';
import { CoalescedRead } from './coalesced-read.js';
import { NameOwners, reverseOwners, type Lan, type LinkPrefix, type NameOwner } from './name-owners.js';
import { journalResolvConfs, leaseFiles, readText, usable, type DiscoveryPaths, type NetworkServer } from './network-resolver.js';

/** Runs a read-only command; resolves to its stdout, or null when it failed or isn't there. */
export type RunCommand = (argv: readonly string[]) => Promise<string | null>;

export const runCommand: RunCommand = (argv) =>
  new Promise((resolve) => {
    execFile(argv[0] as string, argv.slice(1), { timeout: 2000, encoding: 'utf8' }, (err, stdout) => resolve(err ? null : stdout));
  });

interface Learned {
  readonly owners: NameOwner[];
  readonly lans: Lan[];
}

function domainsOf(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    const [key, ...rest] = line.split(/\s+/);
    if (key === 'search' || key === 'domain') for (const d of rest) if (d && d !== '.') out.push(d.toLowerCase().replace(/\.$/, ''));
  }
  return out;
}

/** A resolv.conf's nameservers and search list as owners (every search domain is owned by its nameservers). */
export function fromResolvConfText(text: string, link: string, source: string): Learned {
  const conf = parseResolvConf(text);
  const servers = usable(conf.nameservers);
  if (servers.length === 0) return { owners: [], lans: [] };
  return { owners: domainsOf(conf.otherLines).map((suffix) => ({ suffix, servers, link, source, search: true })), lans: [{ servers, link, source }] };
}

interface BusProperty<T> {
  readonly data: T;
}

export function ifName(index: number): string {
  try {
    for (const name of fs.readdirSync('/sys/class/net')) {
      if (fs.readFileSync(`/sys/class/net/${name}/ifindex`, 'utf8').trim() === String(index)) return name;
    }
  } catch {
    // no sysfs: the index it is
  }
  return `link ${index}`;
}

export function addressText(family: number, bytes: readonly number[]): string {
  if (family === 2) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

/** resolved's Manager DNS (a(iiay)) and Domains (a(isb)) properties, as busctl --json=short prints them (one line each). */
export function fromResolvedProperties(dnsJson: string, domainsJson: string): Learned {
  const dns = (JSON.parse(dnsJson) as BusProperty<[number, number, number[]][]>).data;
  const domains = (JSON.parse(domainsJson) as BusProperty<[number, string, boolean][]>).data;
  const servers = new Map<number, NetworkServer[]>();
  for (const [ifindex, family, bytes] of dns) {
    if (ifindex === 0) continue; // the global setting: dotstub's drop-in
    const host = addressText(family, bytes);
    const ok = usable([family === 10 && host.toLowerCase().startsWith('fe80:') ? `${host}%${ifName(ifindex)}` : host]);
    if (ok.length) servers.set(ifindex, [...(servers.get(ifindex) ?? []), ...ok]);
  }
  const owners: NameOwner[] = [];
  for (const [ifindex, domain, routeOnly] of domains) {
    const linkServers = servers.get(ifindex);
    const suffix = domain.toLowerCase().replace(/\.$/, '');
    if (ifindex === 0 || !linkServers || suffix === '' || suffix === '.') continue;
    owners.push({ suffix, servers: linkServers, link: ifName(ifindex), source: 'systemd-resolved', search: !routeOnly });
  }
  const lans = [...servers].map(([ifindex, s]) => ({ servers: s, link: ifName(ifindex), source: 'systemd-resolved' }));
  return { owners, lans };
}

/** `nmcli -t -f GENERAL.DEVICE,IP4.DNS,IP4.DOMAIN,IP6.DNS,IP6.DOMAIN dev show` (terse: `IP4.DNS[1]:10.99.0.1`, devices separated by blank lines). */
/**
 * The type prefixes of resolvconf's interface-order (its `tun*`, `tap*`
 * lines): wg-quick names its record `<prefix>.<interface>` with the first
 * of them (`tun.wg0`), so resolvconf orders it as a tunnel.
 */
export function interfaceOrderPrefixes(text: string | undefined): string[] {
  return (text ?? '').split('\n').flatMap((l) => /^([A-Za-z0-9-]+)\*$/.exec(l.trim())?.[1] ?? []);
}

/**
 * The link a resolvconf record is for. Records are `<interface>.<program>`
 * (`eth0.dhclient`, `tun0.openvpn`), `<interface>`, or wg-quick's
 * `<type prefix>.<interface>` (`tun.wg0`).
 */
export function recordLink(name: string, typePrefixes: readonly string[]): string {
  const dot = name.indexOf('.');
  if (dot > 0 && dot < name.length - 1 && typePrefixes.includes(name.slice(0, dot))) return name.slice(dot + 1);
  return name.replace(/\.[^.]*$/, '');
}

export function fromNmcli(text: string): Learned {
  const owners: NameOwner[] = [];
  const lans: Lan[] = [];
  for (const block of text.split(/\n\s*\n/)) {
    let device = '';
    const dns: string[] = [];
    const domains: string[] = [];
    for (const line of block.split('\n')) {
      const m = /^([A-Z0-9.]+)(?:\[\d+\])?:(.*)$/.exec(line.trim());
      if (!m) continue;
      const [, key = '', value = ''] = m;
      if (key === 'GENERAL.DEVICE') device = value;
      else if ((key === 'IP4.DNS' || key === 'IP6.DNS') && value) dns.push(value.replace(/\\:/g, ':'));
      // DOMAIN: what DHCP handed out; SEARCHES: the profile's own (ipv4.dns-search, `nmcli con mod … ipv4.dns-search`).
      else if (/^IP[46]\.(DOMAIN|SEARCHES)$/.test(key) && value) domains.push(value);
    }
    const servers = usable(dns);
    if (servers.length === 0 || device === 'lo') continue;
    lans.push({ servers, link: device, source: 'NetworkManager' });
    for (const d of domains) {
      const routeOnly = d.startsWith('~');
      const suffix = d.replace(/^~/, '').toLowerCase().replace(/\.$/, '');
      if (suffix && suffix !== '.') owners.push({ suffix, servers, link: device, source: 'NetworkManager', search: !routeOnly });
    }
  }
  return { owners, lans };
}

interface IpAddress {
  readonly ifname?: string;
  readonly addr_info?: readonly { readonly local?: string; readonly address?: string; readonly prefixlen?: number; readonly scope?: string }[];
}
interface IpRoute {
  readonly type?: string;
  readonly dst?: string;
  readonly dev?: string;
}

/**
 * The links' prefixes from `ip -j addr show` and `ip -j route show table all`
 * (both families): each address with its prefix length (and a point-to-point
 * link's peer with its), each unicast route's destination over its device.
 * Loopback and host-scope entries are nobody's network.
 */
function fromIp(addrJson: string | null, routeJsons: readonly (string | null)[]): LinkPrefix[] {
  const out: LinkPrefix[] = [];
  const parse = <T>(text: string | null): T[] => {
    try {
      const v: unknown = text ? JSON.parse(text) : [];
      return Array.isArray(v) ? (v as T[]) : [];
    } catch {
      return []; // an answer we don't understand: nothing learned from it
    }
  };
  for (const link of parse<IpAddress>(addrJson)) {
    if (!link.ifname || link.ifname === 'lo') continue;
    for (const a of link.addr_info ?? []) {
      if (!a.local || a.scope === 'host' || a.prefixlen === undefined) continue;
      // A point-to-point address (`10.8.0.6 peer 10.8.0.5/32`, openvpn's net30): the prefix length is the peer's.
      if (a.address) out.push({ link: link.ifname, text: a.local, how: 'address' }, { link: link.ifname, text: `${a.address}/${a.prefixlen}`, how: 'address' });
      else out.push({ link: link.ifname, text: `${a.local}/${a.prefixlen}`, how: 'address' });
    }
  }
  for (const text of routeJsons) {
    for (const r of parse<IpRoute>(text)) {
      if ((r.type ?? 'unicast') === 'unicast' && r.dst && r.dst !== 'default' && r.dev && r.dev !== 'lo') out.push({ link: r.dev, text: r.dst, how: 'route' });
    }
  }
  return out;
}

/** dhclient (`option domain-name "lan"; option domain-search "a", "b";`), networkd and NetworkManager's internal client (`DOMAINNAME=`, `DOMAIN_SEARCH_LIST=`). */
export function fromLeaseText(text: string, file: string): Learned {
  const dnsList = [...text.matchAll(/option domain-name-servers ([^;]+);/g)].pop()?.[1]?.split(',') ?? /^DNS=(.+)$/m.exec(text)?.[1]?.split(/\s+/) ?? [];
  const servers = usable(dnsList);
  if (servers.length === 0) return { owners: [], lans: [] };
  const domains = new Set<string>();
  const dn = [...text.matchAll(/option domain-name "([^"]+)";/g)].pop()?.[1] ?? /^DOMAINNAME=(\S+)$/m.exec(text)?.[1];
  if (dn) domains.add(dn);
  const search = [...text.matchAll(/option domain-search ([^;]+);/g)].pop()?.[1];
  if (search) for (const m of search.matchAll(/"([^"]+)"/g)) if (m[1]) domains.add(m[1]);
  for (const d of /^DOMAIN_SEARCH_LIST=(.+)$/m.exec(text)?.[1]?.split(/\s+/) ?? []) domains.add(d);
  const source = `the DHCP lease ${file}`;
  return {
    owners: [...domains].map((d) => ({ suffix: d.toLowerCase().replace(/\.$/, ''), servers, link: 'DHCP', source, search: true })),
    lans: [{ servers, link: 'DHCP', source }],
  };
}

/** Everything the OS says, most specific source first; the LAN is the first link that has servers. */
/**
 * `foreign`: the last resolv.conf another program wrote while dotstub held
 * the file (a VPN's hook rewriting it directly), which the takeover's
 * rewrite watch puts back: its servers and search list still say which names
 * that program's link owns, so routing follows the VPN instead of fighting it.
 */
async function learnNameOwners(
  paths: DiscoveryPaths,
  run: RunCommand = runCommand,
  foreign?: string,
  lastResolved?: Learned | null,
): Promise<{ readonly owners: NameOwners; readonly resolved: Learned | null; readonly resolvedMissing: boolean }> {
  const learned: Learned[] = [];
  // The links' prefixes, read while the other sources answer (a refresh is no slower for them).
  const kernel = Promise.all([
    run(['ip', '-j', 'addr', 'show']),
    run(['ip', '-j', '-4', 'route', 'show', 'table', 'all']),
    run(['ip', '-j', '-6', 'route', 'show', 'table', 'all']),
  ]);
  const [dns, domains] = await Promise.all([
    run(['busctl', '--json=short', 'get-property', 'org.freedesktop.resolve1', '/org/freedesktop/resolve1', 'org.freedesktop.resolve1.Manager', 'DNS']),
    run(['busctl', '--json=short', 'get-property', 'org.freedesktop.resolve1', '/org/freedesktop/resolve1', 'org.freedesktop.resolve1.Manager', 'Domains']),
  ]);
  let resolved: Learned | null = null;
  if (dns && domains) {
    try {
      resolved = fromResolvedProperties(dns, domains);
    } catch {
      // an answer we don't understand: nothing learned from it
    }
  }
  // resolved answered before but not now: most likely restarting (a reload is a restart on 252, and the takeover
  // reloads it): its links' names are still theirs, so the last answer stands until it answers again.
  const resolvedMissing = resolved === null && lastResolved != null;
  const fromResolved = resolved ?? lastResolved ?? null;
  if (fromResolved) learned.push(fromResolved);
  // Whole IP4/IP6 groups, not fields by name: one field this nmcli doesn't know would fail the whole call.
  const nm = await run(['nmcli', '-t', '-f', 'GENERAL.DEVICE,IP4,IP6', 'dev', 'show']);
  if (nm) learned.push(fromNmcli(nm));
  // resolvconf's per-interface records (`resolvconf -a tun0`: a VPN's hook, wg-quick): one resolv.conf per link.
  const records = paths.resolvconfInterfaces ?? '/run/resolvconf/interface';
  let names: string[] = [];
  try {
    names = fs.readdirSync(records).sort();
  } catch {
    // no resolvconf here
  }
  const typePrefixes = interfaceOrderPrefixes(readText(paths.interfaceOrder ?? '/etc/resolvconf/interface-order'));
  for (const name of names) {
    const text = readText(`${records}/${name}`);
    if (text !== undefined) learned.push(fromResolvConfText(text, recordLink(name, typePrefixes), `resolvconf's record for ${name}`));
  }
  const current = readText(paths.resolvConf);
  // A file dotstub didn't write (a VPN's hook rewrote it, or no takeover): what it says now comes first.
  if (current !== undefined && !current.includes(MANAGED_MARKER)) learned.push(fromResolvConfText(current, 'resolv.conf', paths.resolvConf));
  else if (foreign !== undefined) learned.push(fromResolvConfText(foreign, 'resolv.conf', `what another program last wrote to ${paths.resolvConf}`));
  for (const j of journalResolvConfs(paths.stateDirs)) learned.push(fromResolvConfText(j.text, 'the network', `${j.path} before the takeover`));
  for (const file of leaseFiles(paths.leases)) {
    const text = readText(file);
    if (text) learned.push(fromLeaseText(text, file));
  }
  const [addresses, routes4, routes6] = await kernel;
  const links = learned.flatMap((l) => l.lans);
  return {
    owners: new NameOwners(
      learned.flatMap((l) => l.owners),
      links[0] ?? null,
      reverseOwners(links, fromIp(addresses, [routes4, routes6])),
    ),
    resolved,
    resolvedMissing,
  };
}

/** While resolved doesn't answer after it had: ask again this often, this many times (then it is taken as gone). */
const RESOLVED_RETRY_MS = 250;
const RESOLVED_RETRIES = 40;

/**
 * Keeps a router's table current: read at start, again on each network
 * change (a VPN up or down: the proxy calls refresh), and when resolv.conf
 * or a resolvconf record is written (the takeover itself, a VPN's hook):
 * inotify on their directories. Asks that come while a read runs coalesce
 * into one more read after it, so the last change is always seen.
 */
export class NameOwnersRefresher {
  readonly #paths: DiscoveryPaths;
  readonly #apply: (owners: NameOwners) => void;
  readonly #run: RunCommand;
  readonly #reads = new CoalescedRead(() => this.#read());

  constructor(paths: DiscoveryPaths, apply: (owners: NameOwners) => void, run: RunCommand = runCommand) {
    this.#paths = paths;
    this.#apply = apply;
    this.#run = run;
  }

  #watchers: fs.FSWatcher[] = [];
  /** resolved's last answer, and how often it has not answered since. */
  #lastResolved: Learned | null = null;
  #resolvedMisses = 0;
  #retry: NodeJS.Timeout | undefined;
  /** The last resolv.conf dotstub didn't write, read the moment it appeared (the rewrite watch may put ours back soon after). */
  #foreign: string | undefined;

  /** Reads the table, then watches the files it came from. */
  async start(): Promise<void> {
    await this.refresh();
    const file = path.basename(this.#paths.resolvConf);
    const watch = (dir: string, only?: string, now?: () => void): void => {
      try {
        const w = fs.watch(dir, (_event, name) => {
          if (only !== undefined && name !== only) return;
          now?.();
          this.#reads.soon();
        });
        w.on('error', () => w.close());
        this.#watchers.push(w);
      } catch {
        // not there: the network watch's refresh covers it
      }
    };
    watch(path.dirname(this.#paths.resolvConf), file, () => {
      const text = readText(this.#paths.resolvConf);
      if (text !== undefined && !text.includes(MANAGED_MARKER)) this.#foreign = text;
    });
    watch(this.#paths.resolvconfInterfaces ?? '/run/resolvconf/interface');
  }

  stop(): void {
    this.#reads.cancel();
    clearTimeout(this.#retry);
    this.#stopped = true;
    for (const w of this.#watchers.splice(0)) w.close();
  }

  #stopped = false;

  refresh(): Promise<void> {
    return this.#reads.run();
  }

  async #read(): Promise<void> {
    const keep = this.#resolvedMisses < RESOLVED_RETRIES ? this.#lastResolved : null;
    const read = await learnNameOwners(this.#paths, this.#run, this.#foreign, keep);
    this.#apply(read.owners);
    if (read.resolved) this.#lastResolved = read.resolved;
    this.#resolvedMisses = read.resolvedMissing ? this.#resolvedMisses + 1 : 0;
    if (!read.resolvedMissing && !read.resolved) this.#lastResolved = null;
    clearTimeout(this.#retry);
    if (read.resolvedMissing && !this.#stopped) this.#retry = setTimeout(() => void this.refresh(), RESOLVED_RETRY_MS);
  }
}
