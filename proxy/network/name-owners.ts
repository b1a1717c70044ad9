/**
 * Which names the networks own, and so where each query goes (DESIGN.md,
 * "Where names go"; issue 21). A table of suffix → the owning link's
 * resolvers, learned from what the OS says (network/name-sources.ts), plus
 * the rules that hold by standard:
 *
 * - `local` (RFC 6762): mDNS's, never sent anywhere as unicast DNS by us:
 *   answered NXDOMAIN here.
 * - `home.arpa` (RFC 8375) and `internal` (reserved for private use): the
 *   LAN's resolver (the primary link's), NXDOMAIN here when none is known.
 * - The private and special reverse zones (RFC 6303, RFC 1918, RFC 6598,
 *   ULA `d.f.ip6.arpa`, link-local): a link that claims them, else the
 *   LAN's resolver when it sits on a private address itself (it is then on
 *   this network), else NXDOMAIN here. Never the public resolver.
 * - Learned suffixes: longest suffix wins; routing domains (`~corp.example`)
 *   and search domains alike.
 *
 * Search-suffixed public names (`www.public.test.lan`): glibc glues the
 * search domain onto a name whose lookup failed, including a v6-only lookup
 * that got NODATA. A query NAME.SUFFIX where SUFFIX is a *search* domain and
 * NAME has a dot is answered NXDOMAIN here: NAME.SUFFIX is then either a
 * public name with the suffix glued on (which must never leave in
 * cleartext) or a deeper local name, and the two can't be told apart from
 * the query. systemd-resolved and Apple's resolvers draw the same line
 * (search domains are applied to single-label names only). A deeper local
 * name under a search domain still resolves when the link also lists its
 * parent as a routing domain (`~office.lan`), which has no search behaviour.
 * Names with one label under SUFFIX (`printer.lan`, what `printer` becomes
 * through the search list) go to the link. A single-label A/AAAA question
 * nobody owns (`printer`, asked as-is once the search list failed) is
 * answered NXDOMAIN here: no public name has an address at the top level.
 */
import net from 'node:net';
import type { DiscoveryPaths, NetworkServer } from './network-resolver.js';

export interface NameOwner {
  /** Lowercase, no trailing dot: `lan`, `corp.example`, `168.192.in-addr.arpa`. */
  readonly suffix: string;
  readonly servers: readonly NetworkServer[];
  /** The link, for people: `veth0`, `the network (resolv.conf)`. */
  readonly link: string;
  /** Where this was learned: `systemd-resolved`, `/etc/resolv.conf before the takeover`, … */
  readonly source: string;
  /** A search domain (glibc appends it to names), not only a routing domain. */
  readonly search: boolean;
}

/** The primary network's resolver: the owner of `home.arpa`, `internal` and (when private) the private reverse zones. */
export interface Lan {
  readonly servers: readonly NetworkServer[];
  readonly link: string;
  readonly source: string;
}

/** The user's choice for local names on a network: send them to its resolver, never, or not asked yet. */
export type LocalNamesPolicy = 'allow' | 'deny' | 'ask';

/** Routing by name owner's settings (ProxyConfig.names). */
export interface NameRouting {
  /** Where the OS keeps what the networks own (tests point it at their own files). */
  readonly paths: DiscoveryPaths;
  /** The default for a network the user hasn't decided on ('ask': strict mode refuses until asked). */
  readonly localNames: LocalNamesPolicy;
  /** Per-network memory (network-memory.ts): the user's choice per network; absent: nothing remembered. */
  readonly memoryFile?: string;
  /** The network we're on (tests); captive/network-key.ts otherwise. */
  readonly networkKey?: () => string | null;
  /** How the OS's tools are run (tests: none). */
  readonly run?: (argv: readonly string[]) => Promise<string | null>;
}

export type Route =
  /** The chosen encrypted resolver. */
  | { readonly kind: 'public' }
  /** The owning link's resolver, in cleartext. */
  | { readonly kind: 'link'; readonly owner: NameOwner }
  /** Answered here, never sent: NXDOMAIN, with why. */
  | { readonly kind: 'nxdomain'; readonly why: string };

const PUBLIC: Route = { kind: 'public' };

/** RFC 6303 §4 zones answered locally unless a link claims them, and the private ones (RFC 1918, RFC 6598, ULA, link-local) a LAN resolver may own. */
const PRIVATE_REVERSE: readonly string[] = [
  '10.in-addr.arpa',
  ...Array.from({ length: 16 }, (_, i) => `${16 + i}.172.in-addr.arpa`),
  '168.192.in-addr.arpa',
  ...Array.from({ length: 64 }, (_, i) => `${64 + i}.100.in-addr.arpa`),
  '254.169.in-addr.arpa',
  'd.f.ip6.arpa',
  '8.e.f.ip6.arpa',
  '9.e.f.ip6.arpa',
  'a.e.f.ip6.arpa',
  'b.e.f.ip6.arpa',
];
/** RFC 6303 zones no network owns: always answered here. */
const NOBODYS_REVERSE: readonly string[] = [
  '0.in-addr.arpa',
  '127.in-addr.arpa',
  '2.0.192.in-addr.arpa',
  '100.51.198.in-addr.arpa',
  '113.0.203.in-addr.arpa',
  '255.255.255.255.in-addr.arpa',
  `${'0.'.repeat(32)}ip6.arpa`,
  `1.${'0.'.repeat(31)}ip6.arpa`,
  '8.b.d.0.1.0.0.2.ip6.arpa',
];
const LAN_DOMAINS: readonly string[] = ['home.arpa', 'internal'];

function canonicalName(name: string): string {
  const n = name.toLowerCase();
  return n.endsWith('.') ? n.slice(0, -1) : n;
}

/**
 * `name` is `suffix` or under it. Runs for every query (issue 23): it
 * builds no string (the label boundary is read as a character code).
 */
function isUnder(name: string, suffix: string): boolean {
  if (name.length === suffix.length) return name === suffix;
  return name.length > suffix.length && name.charCodeAt(name.length - suffix.length - 1) === 46 /* . */ && name.endsWith(suffix);
}

function longest(name: string, suffixes: readonly string[]): string | null {
  let best: string | null = null;
  for (const s of suffixes) if (isUnder(name, s) && (best === null || s.length > best.length)) best = s;
  return best;
}

/** A private address: RFC 1918, RFC 6598, ULA, link-local. */
function isPrivateAddress(host: string): boolean {
  const h = host.replace(/%.*$/, '').toLowerCase();
  if (net.isIPv4(h)) {
    const [a, b] = h.split('.').map(Number) as [number, number];
    return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254);
  }
  return net.isIPv6(h) && (/^f[cd]/.test(h) || /^fe[89ab]/.test(h));
}

export class NameOwners {
  readonly owners: readonly NameOwner[];
  readonly lan: Lan | null;

  constructor(owners: readonly NameOwner[], lan: Lan | null) {
    // Longest suffix first; the first listed wins among equals (sources are listed most specific first).
    this.owners = [...owners].map((o, i) => ({ o, i })).sort((a, b) => b.o.suffix.length - a.o.suffix.length || a.i - b.i).map((x) => x.o);
    this.lan = lan;
  }

  static readonly empty = new NameOwners([], null);

  /** The learned suffixes, for status and the log: `lan → 10.99.0.1 (veth0, systemd-resolved)`. */
  describe(): string[] {
    const out = this.owners.map((o) => `${o.search ? '' : '~'}${o.suffix} → ${o.servers.map((s) => s.host).join(', ')} (${o.link}, ${o.source})`);
    if (this.lan) out.push(`home.arpa, internal, private reverse zones → ${this.lan.servers.map((s) => s.host).join(', ')} (${this.lan.link}, ${this.lan.source})`);
    return out;
  }

  /** Where a question for `rawName` (of query type `type`, e.g. 'A') goes. */
  route(rawName: string, type = ''): Route {
    const name = canonicalName(rawName);
    if (isUnder(name, 'local')) return { kind: 'nxdomain', why: '.local names are mDNS\'s (RFC 6762): never sent as unicast DNS' };
    let owner: NameOwner | undefined;
    for (const o of this.owners) {
      if (isUnder(name, o.suffix)) {
        owner = o;
        break;
      }
    }
    if (owner) {
      if (owner.search && name !== owner.suffix && name.slice(0, -owner.suffix.length - 1).includes('.')) {
        return { kind: 'nxdomain', why: `a multi-label name with the search domain ${owner.suffix} glued on: never sent in cleartext` };
      }
      return { kind: 'link', owner };
    }
    // Every reverse zone below is under .arpa: other names skip the ~100 suffix checks.
    const arpa = isUnder(name, 'arpa');
    if (arpa && longest(name, NOBODYS_REVERSE)) return { kind: 'nxdomain', why: 'a special-use reverse zone (RFC 6303): answered here' };
    const reverse = arpa ? longest(name, PRIVATE_REVERSE) : null;
    if (reverse) {
      const lan = this.lan;
      if (lan && lan.servers.some((s) => isPrivateAddress(s.host))) return { kind: 'link', owner: { ...lan, suffix: reverse, search: false } };
      return { kind: 'nxdomain', why: 'a private reverse lookup no network here owns (RFC 6303): never sent to the public resolver' };
    }
    const lanDomain = longest(name, LAN_DOMAINS);
    if (lanDomain) {
      if (this.lan) return { kind: 'link', owner: { ...this.lan, suffix: lanDomain, search: false } };
      return { kind: 'nxdomain', why: `${lanDomain} names are the local network's and no network resolver is known` };
    }
    // glibc asks a short name as-is once the search list failed (`printer` AAAA after printer.lan had no AAAA):
    // no public name has an address at the top level (ICANN's dotless-domain rule), so it never needs to leave.
    if (name !== '' && !name.includes('.') && (type === 'A' || type === 'AAAA')) return { kind: 'nxdomain', why: 'a single-label name has no public address: never sent to the public resolver' };
    return PUBLIC;
  }
}
