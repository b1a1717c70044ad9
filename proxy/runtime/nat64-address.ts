/**
 * IPv4 addresses inside IPv6 (RFC 6052), for a network that has only IPv6
 * and reaches IPv4 through a NAT64 (RFC 6146): the address that reaches an
 * IPv4 resolver is the network's prefix with the 32 bits placed after it
 * (bits 64–71 are the "u" octet, always zero). And back: the prefix a
 * network uses, found in its DNS64's answer for ipv4only.arpa (RFC 7050),
 * whose AAAA records carry 192.0.0.170 or 192.0.0.171 at the prefix's end.
 * Pure; the question is network/nat64.ts's.
 */
import net from 'node:net';

/** The well-known prefix (RFC 6052 §2.1): used by most NAT64s, and tried without asking anyone. */
export const WELL_KNOWN_NAT64 = '64:ff9b::/96';

const LENGTHS = [96, 64, 56, 48, 40, 32] as const;
type PrefixLength = (typeof LENGTHS)[number];

/** The 16 bytes of an IPv6 address (no zone). */
function bytes6(address: string): Buffer | null {
  const a = address.replace(/%.*$/, '');
  if (!net.isIPv6(a)) return null;
  const [head = '', tail] = a.split('::') as [string, string | undefined];
  const groups = (s: string): string[] => (s === '' ? [] : s.split(':'));
  let parts = groups(head);
  let rest = tail === undefined ? [] : groups(tail);
  // An embedded dotted IPv4 (::ffff:1.2.3.4) as two groups.
  const dotted = (list: string[]): string[] => {
    const last = list.at(-1);
    if (last === undefined || !last.includes('.')) return list;
    const [p, q, r, s] = last.split('.').map(Number) as [number, number, number, number];
    return [...list.slice(0, -1), ((p << 8) | q).toString(16), ((r << 8) | s).toString(16)];
  };
  if (tail === undefined) parts = dotted(parts);
  else rest = dotted(rest);
  const fill = tail === undefined ? [] : new Array<string>(8 - parts.length - rest.length).fill('0');
  const all = [...parts, ...fill, ...rest];
  if (all.length !== 8) return null;
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

function text6(b: Buffer): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(b.readUInt16BE(i).toString(16));
  // The longest run of zero groups (two or more) becomes '::' (RFC 5952).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

/** Where the 32 bits of IPv4 go in a prefix of `length` bits (RFC 6052 §2.2: skipping bits 64–71). */
function ipv4Offsets(length: PrefixLength): number[] {
  const first = length / 8;
  const out: number[] = [];
  for (let i = first; out.length < 4; i++) if (i !== 8) out.push(i);
  return out;
}

function parsePrefix(prefix: string): { readonly base: Buffer; readonly length: PrefixLength } | null {
  const [addr = '', len] = prefix.split('/');
  const length = Number(len) as PrefixLength;
  const base = bytes6(addr);
  if (!base || !LENGTHS.includes(length)) return null;
  return { base, length };
}

/** The IPv6 address that reaches `ipv4` through the NAT64 at `prefix` ("2001:db8:64::/96"); null: not a prefix RFC 6052 allows, or not IPv4. */
export function synthesizeNat64(prefix: string, ipv4: string): string | null {
  const p = parsePrefix(prefix);
  if (!p || !net.isIPv4(ipv4)) return null;
  const out = Buffer.alloc(16);
  p.base.copy(out, 0, 0, p.length / 8);
  const octets = ipv4.split('.').map(Number);
  ipv4Offsets(p.length).forEach((at, i) => (out[at] = octets[i] as number));
  return text6(out);
}

/** The IPv4 addresses a DNS64 embeds for ipv4only.arpa (RFC 7050 §2). */
const WELL_KNOWN_IPV4 = ['192.0.0.170', '192.0.0.171'];

/**
 * The prefixes in a DNS64's AAAA answers for ipv4only.arpa (RFC 7050 §3):
 * for each answer, the longest prefix length at whose place one of the
 * well-known IPv4 addresses sits. Deduplicated, in answer order.
 */
export function nat64PrefixesFrom(answers: readonly string[]): string[] {
  const found: string[] = [];
  for (const a of answers) {
    const b = bytes6(a);
    if (!b) continue;
    for (const length of LENGTHS) {
      const v4 = ipv4Offsets(length).map((i) => b[i]).join('.');
      if (!WELL_KNOWN_IPV4.includes(v4)) continue;
      const base = Buffer.alloc(16);
      b.copy(base, 0, 0, length / 8);
      const prefix = `${text6(base)}/${length}`;
      if (!found.includes(prefix)) found.push(prefix);
      break;
    }
  }
  return found;
}
