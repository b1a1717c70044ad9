/**
 * Addresses nothing the network hands us may lead to (issue 43): this
 * machine (loopback, "this host", the unspecified address, which the kernel
 * connects to loopback), link-local neighbours and the cloud metadata
 * service on it, multicast and broadcast. A captive portal's page and its
 * DNS answers are the network's to choose, so the sign-in proxy checks
 * every address after resolving, and a portal URL is checked before it is
 * recorded. Private ranges (10/8, 192.168/16, fd00::/8) stay reachable:
 * that is where portals live.
 *
 * net.BlockList matches IPv4-mapped IPv6 (::ffff:127.0.0.1, ::ffff:7f00:1)
 * against the IPv4 rules, so each rule is written once.
 */
import net from 'node:net';

interface Rule {
  readonly list: net.BlockList;
  /** Why, in words that follow "X is …". */
  readonly why: string;
}

function rule(why: string, subnets: readonly (readonly [string, number])[]): Rule {
  const list = new net.BlockList();
  for (const [address, prefix] of subnets) list.addSubnet(address, prefix, net.isIPv6(address) ? 'ipv6' : 'ipv4');
  return { list, why };
}

/** In order: the first that matches says why (the metadata address before the link-local range that holds it). */
const RULES: readonly Rule[] = [
  rule('the cloud metadata service (it hands out this machine’s credentials)', [
    ['169.254.169.254', 32],
    ['fd00:ec2::254', 128],
  ]),
  rule('this machine (loopback)', [
    ['127.0.0.0', 8],
    ['::1', 128],
  ]),
  rule('the unspecified address, which reaches this machine', [
    ['0.0.0.0', 32],
    ['::', 128],
  ]),
  rule('"this host" (0.0.0.0/8), which reaches this machine', [['0.0.0.0', 8]]),
  rule('an IPv4-compatible IPv6 address (deprecated; no page lives there)', [['::', 96]]),
  rule('link-local (a neighbour on this link, not a web page)', [
    ['169.254.0.0', 16],
    ['fe80::', 10],
  ]),
  rule('multicast', [
    ['224.0.0.0', 4],
    ['ff00::', 8],
  ]),
  rule('broadcast or reserved (240.0.0.0/4)', [['240.0.0.0', 4]]),
];

/**
 * Why `address` (an IP literal, brackets allowed) is off limits to what the
 * network hands us, in words ("127.0.0.1 is this machine (loopback)"); null
 * when it may be reached. Anything that isn't an IP literal is off limits
 * too: callers check addresses, after resolving.
 */
export function whyOffLimits(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = net.isIP(bare);
  if (family === 0) return `${address} is not an IP address`;
  const type = family === 6 ? 'ipv6' : 'ipv4';
  for (const r of RULES) if (r.list.check(bare, type)) return `${bare} is ${r.why}`;
  return null;
}

/**
 * Why a URL's host (as the URL parser writes it: 2130706433 and 0x7f.1
 * become 127.0.0.1) is this machine or otherwise off limits; null when it
 * names the network. Names are judged by name only (localhost and
 * *.localhost, RFC 6761 §6.3); what they resolve to is checked where they
 * are resolved.
 */
export function whyHostOffLimits(hostname: string): string | null {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (net.isIP(h) !== 0) return whyOffLimits(h);
  if (h === 'localhost' || h.endsWith('.localhost')) return `${h} is this machine (localhost)`;
  if (h === '') return 'the address names no host';
  return null;
}
