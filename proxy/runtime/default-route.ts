/**
 * Whether this machine has a default route of a family, read from the
 * kernel's tables (/proc/net/route, /proc/net/ipv6_route: the network
 * namespace of this process). A connect that fails with ENETUNREACH means one
 * of two things: offline, or a path the network doesn't route; the words for
 * the user differ (tls.ts). Where the tables can't be read (not Linux), the
 * answer is true: nothing is claimed that wasn't read.
 */
import fs from 'node:fs';

function read(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

export function hasDefaultRoute(family: 4 | 6, files = { v4: '/proc/net/route', v6: '/proc/net/ipv6_route' }): boolean {
  if (family === 4) {
    const text = read(files.v4);
    if (text === null) return true;
    // Iface Destination Gateway Flags … Mask: the default route's destination and mask are 0.
    return text
      .split('\n')
      .slice(1)
      .some((l) => {
        const f = l.trim().split(/\s+/);
        return f.length >= 8 && f[1] === '00000000' && f[7] === '00000000';
      });
  }
  const text = read(files.v6);
  if (text === null) return true;
  // dest prefixlen src srcprefixlen nexthop metric refcnt use flags iface; lo's ::/0 is the kernel's "unreachable" route.
  return text.split('\n').some((l) => {
    const f = l.trim().split(/\s+/);
    return f.length >= 10 && /^0{32}$/.test(f[0] ?? '') && f[1] === '00' && f[9] !== 'lo';
  });
}
