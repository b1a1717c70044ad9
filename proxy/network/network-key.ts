/**
 * The network we're on, privately: SHA-256 of the default gateway's MAC
 * address (from the ARP table), or of its address when the MAC isn't known.
 * Never stored or shown in the clear; strict mode's consent answers are kept
 * under it (current-network.ts, the one owner of the network we're on).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';

/** The default route's IPv4 gateway (dotted quad) from /proc/net/route; null: none. */
export function gatewayAddress(routeFile = '/proc/net/route'): string | null {
  try {
    for (const l of fs.readFileSync(routeFile, 'utf8').split('\n').slice(1)) {
      const f = l.trim().split(/\s+/);
      if (f[1] === '00000000' && f[2]) {
        const hex = f[2];
        // Little-endian hex in /proc/net/route.
        return [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16)).join('.');
      }
    }
  } catch {
    // no routing table to read
  }
  return null;
}

/** The IPv6 default route's next hop with its interface ("fe80::1%wlan0"), from /proc/net/ipv6_route; null: none. */
export function gateway6Address(route6File = '/proc/net/ipv6_route'): string | null {
  try {
    for (const l of fs.readFileSync(route6File, 'utf8').split('\n')) {
      const f = l.trim().split(/\s+/);
      if (f.length < 10 || !/^0{32}$/.test(f[0] ?? '') || f[1] !== '00' || f[9] === 'lo') continue;
      const hop = f[4] ?? '';
      if (/^0{32}$/.test(hop)) continue;
      const groups = (hop.match(/.{4}/g) ?? []).map((g) => parseInt(g, 16).toString(16));
      return `${groups.join(':')}%${f[9]}`;
    }
  } catch {
    // no IPv6 routing table to read
  }
  return null;
}

/**
 * The network we're on: its key, and whether the gateway's MAC was known
 * (`byMac`). Just after a change the MAC isn't in the ARP table until
 * traffic went through the gateway; the key then hashes its address and is
 * provisional (current-network.ts waits a moment for the MAC).
 */
export function networkIdentity(routeFile = '/proc/net/route', arpFile = '/proc/net/arp', route6File = '/proc/net/ipv6_route'): { readonly key: string; readonly byMac: boolean } | null {
  const gateway = gatewayAddress(routeFile);
  if (!gateway) {
    // An IPv6-only network (a mobile network, NAT64): its router, by the link-local address it routes from. That
    // address is the router's own (derived from its MAC, or stable per link), so it tells networks apart as the
    // MAC does, at once: final.
    const v6 = gateway6Address(route6File);
    return v6 ? { key: crypto.createHash('sha256').update(`dotstub-network:v6:${v6}`).digest('hex').slice(0, 32), byMac: true } : null;
  }
  let mac: string | undefined;
  try {
    for (const l of fs.readFileSync(arpFile, 'utf8').split('\n').slice(1)) {
      const f = l.trim().split(/\s+/);
      if (f[0] === gateway && f[3] && f[3] !== '00:00:00:00:00:00') mac = f[3];
    }
  } catch {
    // no ARP table: the gateway's address alone
  }
  return { key: crypto.createHash('sha256').update(`dotstub-network:${mac ?? gateway}`).digest('hex').slice(0, 32), byMac: mac !== undefined };
}

export function networkKey(routeFile = '/proc/net/route', arpFile = '/proc/net/arp', route6File = '/proc/net/ipv6_route'): string | null {
  return networkIdentity(routeFile, arpFile, route6File)?.key ?? null;
}
