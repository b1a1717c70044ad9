/**
 * Which names the networks own, and so where each query goes (docs/where-names-go.md;
 * issue 21). A table of suffix → the owning link's
 * resolvers, learned from what the OS says (network/name-sources.ts), plus
 * the rules that hold by standard:
 *
 * - `local` (RFC 6762): mDNS's, never sent anywhere as unicast DNS by us:
 *   answered NXDOMAIN here.
 * - `home.arpa` (RFC 8375) and `internal` (reserved for private use): the
 *   LAN's resolver (the primary link's), NXDOMAIN here when none is known.
 * - The private and special reverse zones (RFC 6303, RFC 1918, RFC 6598,
 *   ULA `d.f.ip6.arpa`, link-local): a link that claims them by name; else
 *   the link whose prefix the address is (one of its own addresses'
 *   networks, or a route over it, as the kernel says: the most specific
 *   wins, so a VPN's 10.8.0.0/16 beats the LAN's 10.0.0.0/8); else the
 *   LAN's resolver when it sits on a private address itself (it is then on
 *   this network); else NXDOMAIN here. Never the public resolver.
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

/**
 * A prefix the kernel puts on a link: one of its addresses with its prefix
 * length, or a route's destination over it (`ip -j addr`, `ip -j route`).
 */
export interface LinkPrefix {
  /** The interface: `vpn0`, `tun0`. */
  readonly link: string;
  /** As the kernel printed it, for people: `10.8.0.2/24`, `10.8.0.0/16`. */
  readonly text: string;
  readonly how: 'address' | 'route';
}

/** A link's own prefix whose private reverse zone goes to that link's resolvers. */
interface ReverseOwner {
  readonly link: string;
  readonly servers: readonly NetworkServer[];
  readonly source: string;
  readonly prefix: Prefix;
  /** For people: `the route 10.8.0.0/16 over vpn0`. */
  readonly why: string;
}

/** An address prefix as bits: 4 or 16 bytes, of which the first `length` bits count. */
interface Prefix {
  readonly bytes: readonly number[];
  readonly length: number;
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
  /** The network we're on (tests); network-key.ts otherwise. */
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

/** An IPv4 or IPv6 address's bytes (4 or 16), or null when it isn't one. */
function addressBytes(text: string): number[] | null {
  const h = text.replace(/%.*$/, '').toLowerCase();
  if (net.isIPv4(h)) return h.split('.').map(Number);
  if (!net.isIPv6(h)) return null;
  let v4: number[] = [];
  let v6 = h;
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (dotted) {
    v4 = (dotted[1] as string).split('.').map(Number);
    v6 = `${h.slice(0, dotted.index)}:0:0`; // two groups' room for the dotted quad
  }
  const [head = '', tail] = v6.split('::');
  const groups = (x: string): string[] => (x === '' ? [] : x.split(':'));
  const all = tail === undefined ? groups(head) : [...groups(head), ...Array<string>(8 - groups(head).length - groups(tail).length).fill('0'), ...groups(tail)];
  const bytes = all.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 255];
  });
  if (v4.length) bytes.splice(12, 4, ...v4);
  return bytes.length === 16 ? bytes : null;
}

/** `10.8.0.0/16`, `fd42:8::/48`, or an address alone (all its bits): as a Prefix, or null. */
function parsePrefix(text: string): Prefix | null {
  const [address = '', len] = text.split('/');
  const bytes = addressBytes(address);
  if (!bytes) return null;
  const length = len === undefined ? bytes.length * 8 : Number(len);
  return Number.isInteger(length) && length >= 0 && length <= bytes.length * 8 ? { bytes, length } : null;
}

/** `a` covers `b`: the same family, `a` no longer than `b`, and their first `a.length` bits equal. */
function covers(a: Prefix, b: Prefix): boolean {
  if (a.bytes.length !== b.bytes.length || a.length > b.length) return false;
  for (let bit = 0; bit < a.length; bit += 8) {
    const mask = a.length - bit >= 8 ? 255 : (255 << (8 - (a.length - bit))) & 255;
    if (((a.bytes[bit >> 3] as number) & mask) !== ((b.bytes[bit >> 3] as number) & mask)) return false;
  }
  return true;
}

const LINK_LOCAL: readonly Prefix[] = [parsePrefix('169.254.0.0/16') as Prefix, parsePrefix('fe80::/10') as Prefix];

/** The addresses a reverse name stands for (`20.0.8.10.in-addr.arpa`: 10.8.0.20/32; `8.10.in-addr.arpa`: 10.8.0.0/16), or null. */
function reversePrefix(name: string): Prefix | null {
  if (name.endsWith('.in-addr.arpa')) {
    const labels = name.slice(0, -'.in-addr.arpa'.length).split('.').reverse();
    if (labels.length > 4 || !labels.every((l) => /^\d{1,3}$/.test(l) && Number(l) <= 255)) return null;
    return { bytes: [0, 1, 2, 3].map((i) => Number(labels[i] ?? 0)), length: labels.length * 8 };
  }
  if (name.endsWith('.ip6.arpa')) {
    const nibbles = name.slice(0, -'.ip6.arpa'.length).split('.').reverse();
    if (nibbles.length > 32 || !nibbles.every((n) => /^[0-9a-f]$/.test(n))) return null;
    const bytes = Array<number>(16).fill(0);
    nibbles.forEach((n, i) => (bytes[i >> 1] = (bytes[i >> 1] as number) | (parseInt(n, 16) << (i % 2 === 0 ? 4 : 0))));
    return { bytes, length: nibbles.length * 4 };
  }
  return null;
}

/** The reverse zone a prefix lies in, to whole labels (10.8.0.0/16: `8.10.in-addr.arpa`; 172.16.0.0/12: `172.in-addr.arpa`). */
function reverseZone(p: Prefix): string {
  if (p.bytes.length === 4) return [...p.bytes.slice(0, p.length >> 3).reverse(), 'in-addr', 'arpa'].join('.');
  const nibbles = p.bytes.flatMap((b) => [(b >> 4).toString(16), (b & 15).toString(16)]).slice(0, p.length >> 2);
  return [...nibbles.reverse(), 'ip6', 'arpa'].join('.');
}

/**
 * Which links' prefixes own private reverse zones: each prefix whose link
 * has known resolvers (`links`: what the OS says per link, most specific
 * source first), but not
 * - a default route: it says where the rest of the world is, not whose
 *   names an address has (what no link's prefix covers falls back to the
 *   LAN, as before);
 * - link-local prefixes: every link has fe80::/64, so the address doesn't
 *   say whose it is;
 * - a link whose resolvers are neither on a private address nor reached
 *   over that link itself (a public resolver over the default route would
 *   get the lookup in cleartext across the internet).
 */
export function reverseOwners(links: readonly Lan[], prefixes: readonly LinkPrefix[]): ReverseOwner[] {
  const byLink = new Map<string, Lan>();
  for (const l of links) if (!byLink.has(l.link)) byLink.set(l.link, l);
  const parsed = prefixes.flatMap((p) => {
    const prefix = parsePrefix(p.text);
    return prefix && prefix.length > 0 && !LINK_LOCAL.some((ll) => covers(ll, prefix)) ? [{ ...p, prefix }] : [];
  });
  const out: ReverseOwner[] = [];
  for (const p of parsed) {
    const link = byLink.get(p.link);
    if (!link) continue;
    const reached = link.servers.some((s) => {
      const server = parsePrefix(s.host.replace(/%.*$/, ''));
      return isPrivateAddress(s.host) || (server !== null && parsed.some((q) => q.link === p.link && covers(q.prefix, server)));
    });
    if (!reached) continue;
    const why = p.how === 'address' ? `its address ${p.text} on ${p.link}` : `the route ${p.text} over ${p.link}`;
    out.push({ link: p.link, servers: link.servers, source: link.source, prefix: p.prefix, why });
  }
  return out;
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
  /** Links' own prefixes (reverseOwners), most specific first: among equals the LAN's, then in the order given. */
  readonly reverse: readonly ReverseOwner[];

  constructor(owners: readonly NameOwner[], lan: Lan | null, reverse: readonly ReverseOwner[] = []) {
    // Longest suffix first; the first listed wins among equals (sources are listed most specific first).
    this.owners = [...owners].map((o, i) => ({ o, i })).sort((a, b) => b.o.suffix.length - a.o.suffix.length || a.i - b.i).map((x) => x.o);
    this.lan = lan;
    const lanFirst = (r: ReverseOwner): number => (r.link === lan?.link ? 0 : 1);
    this.reverse = [...reverse].map((r, i) => ({ r, i })).sort((a, b) => b.r.prefix.length - a.r.prefix.length || lanFirst(a.r) - lanFirst(b.r) || a.i - b.i).map((x) => x.r);
  }

  static readonly empty = new NameOwners([], null);

  /** The learned suffixes, for status and the log: `lan → 10.99.0.1 (veth0, systemd-resolved)`. */
  describe(): string[] {
    const out = this.owners.map((o) => `${o.search ? '' : '~'}${o.suffix} → ${o.servers.map((s) => s.host).join(', ')} (${o.link}, ${o.source})`);
    for (const r of this.reverse) out.push(`~${reverseZone(r.prefix)} → ${r.servers.map((s) => s.host).join(', ')} (${r.why}, ${r.source})`);
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
      const asked = this.reverse.length > 0 ? reversePrefix(name) : null;
      const mine = asked ? this.reverse.find((r) => covers(r.prefix, asked)) : undefined;
      if (mine) {
        // The zone, for people: the prefix's to whole labels, or the private zone asked in when that is narrower.
        const zone = reverseZone(mine.prefix);
        const suffix = zone.length > reverse.length ? zone : reverse;
        return { kind: 'link', owner: { suffix, servers: mine.servers, link: mine.link, source: `${mine.source}; ${mine.why}`, search: false } };
      }
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
