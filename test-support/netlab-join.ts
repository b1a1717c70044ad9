/**
 * The client joining another network behind the same router (netlab.ts), as
 * the network-memory and key-agreement labs roam: the router's client-side
 * MAC becomes the new gateway's, the client learns it (or, as a laptop
 * rejoining, forgets its neighbours and learns it from the first traffic),
 * and a new address comes up on the client, so dotstub's network watch sees
 * a change.
 */
import type { Netlab } from './netlab.js';

export type JoinNetwork = (mac: string, o?: { readonly arpKnown: boolean }) => Promise<number>;

/** A join for `lab`'s client; each call returns when the change was made (test clock, ms), 300 ms before it returns. */
export function networkJoiner(lab: Netlab): JoinNetwork {
  let extra = 0;
  return async (mac, o = { arpKnown: true }) => {
    const ok = (r: { code: number | null; stderr: string }, what: string): void => {
      if (r.code !== 0) throw new Error(`${what}: ${r.stderr}`);
    };
    ok(await lab.router.exec(['ip', 'link', 'set', 'dev', 'lan0', 'address', mac]), 'router MAC');
    // As a laptop rejoining: the gateway's MAC is learnt from the first traffic through it (ARP), not known at the change.
    if (o.arpKnown) ok(await lab.client.exec(['ip', 'neigh', 'replace', lab.addresses.routerClientSide4, 'lladdr', mac, 'dev', 'eth0', 'nud', 'reachable']), 'client neighbour');
    else ok(await lab.client.exec(['ip', 'neigh', 'flush', 'dev', 'eth0']), 'client neighbours forgotten');
    if (extra > 0) ok(await lab.client.exec(['ip', 'addr', 'del', `10.53.1.${100 + extra}/32`, 'dev', 'eth0']), 'old address');
    extra++;
    ok(await lab.client.exec(['ip', 'addr', 'add', `10.53.1.${100 + extra}/32`, 'dev', 'eth0']), 'new address');
    const at = Date.now();
    // The watch settles kernel events for 100 ms before it looks: ask once it has.
    await new Promise((r) => setTimeout(r, 300));
    return at;
  };
}
