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

/**
 * The network we're on: its key, and whether the gateway's MAC was known
 * (`byMac`). Just after a change the MAC isn't in the ARP table until
 * traffic went through the gateway; the key then hashes its address and is
 * provisional (current-network.ts waits a moment for the MAC).
 */
export function networkIdentity(routeFile = '/proc/net/route', arpFile = '/proc/net/arp'): { readonly key: string; readonly byMac: boolean } | null {
  const gateway = gatewayAddress(routeFile);
  if (!gateway) return null;
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

export function networkKey(routeFile = '/proc/net/route', arpFile = '/proc/net/arp'): string | null {
  return networkIdentity(routeFile, arpFile)?.key ?? null;
}
