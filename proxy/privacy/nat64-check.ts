/**
 * On a network with no IPv4 (an IPv6-only mobile or campus network, RFC
 * 6146/6147), a resolver given by its IPv4 addresses is reached through the
 * network's NAT64: which prefix, decided once per network joined
 * (once-per-join.ts) and handed to the upstream as its hint
 * (upstream/pool/connections.ts throughNat64):
 *
 *   - an IPv4 route here, a resolver with an IPv6 address, or no IPv6 route
 *     (offline): nothing to do;
 *   - opportunistic mode, or strict mode where the user allowed local names
 *     (a standing agreement to plain DNS with this network): the network's
 *     resolver is asked ipv4only.arpa (network/nat64.ts, RFC 7050), and the
 *     prefix it names is used;
 *   - strict mode otherwise, or no answer: the well-known prefix
 *     64:ff9b::/96 (RFC 6052), which most NAT64s use; trying it sends
 *     nothing but the TLS handshake to the resolver itself, so strict mode
 *     loses nothing. Where it fails too, the connection's failure says so.
 *
 * What was used is written to the network's memory (its card says it), and
 * the upstream reconnects with it at once.
 */
import type { CurrentNetwork } from '../network/current-network.js';
import { discoverNat64, type Nat64Discovery } from '../network/nat64.js';
import type { NetworkServer } from '../network/network-resolver.js';
import { WELL_KNOWN_NAT64 } from '../runtime/nat64-address.js';
import type { AuthMode } from '../upstream/auth-policy.js';
import { hasDefaultRoute } from '../runtime/default-route.js';
import { OncePerJoin } from './once-per-join.js';

export interface Nat64Result {
  readonly prefix: string;
  readonly how: 'ipv4only.arpa' | 'well-known';
  readonly detail: string;
}

export interface Nat64CheckInit {
  readonly network: CurrentNetwork;
  readonly mode: () => AuthMode;
  /** The active resolver's addresses. */
  readonly addresses: () => readonly string[];
  /** The network's own resolver; null: none known. */
  readonly networkResolver: () => NetworkServer | null;
  /** Reconnect with the network's hint now (the prefix is in it). */
  readonly apply: () => void;
  /** Whether this machine has a default route of a family (tests give their own). */
  readonly route?: (family: 4 | 6) => boolean;
  /** The question (tests give their own). */
  readonly discover?: (server: NetworkServer, timeoutMs: number) => Promise<Nat64Discovery>;
  /** The network checks are on (--no-portal-check turns them off: then no question leaves, the well-known prefix is tried). */
  readonly mayAsk: () => boolean;
  readonly timeoutMs?: number;
}

export class Nat64Check extends OncePerJoin<Nat64Result> {
  constructor(init: Nat64CheckInit) {
    const route = init.route ?? hasDefaultRoute;
    const discover = init.discover ?? discoverNat64;
    const network = init.network;
    // Remembered and unchanged: the connections already use it (the join's hint), nothing to redo.
    const found = (prefix: string, how: Nat64Result['how'], detail: string): void => {
      const before = network.hint().nat64Prefix;
      network.nat64Found(prefix, how, detail);
      if (before !== prefix) init.apply();
    };
    super({
      name: "the search for this network's NAT64",
      network,
      allowed: () => true,
      measure: () => {
        const addrs = init.addresses();
        if (addrs.some((a) => a.includes(':')) || !addrs.some((a) => !a.includes(':'))) return null;
        if (route(4) || !route(6)) return null;
        const wellKnown = (why: string): Nat64Result => ({ prefix: WELL_KNOWN_NAT64, how: 'well-known', detail: `${why}; trying the well-known prefix ${WELL_KNOWN_NAT64}` });
        const consented = init.mode() !== 'strict' || network.localNames() === 'allow';
        if (!consented) return Promise.resolve(wellKnown('strict mode: the network was not asked (ipv4only.arpa would be a plain DNS question; allow local names here to let it be asked)'));
        if (!init.mayAsk()) return Promise.resolve(wellKnown('the network checks are off: the network was not asked'));
        const server = init.networkResolver();
        if (!server) return Promise.resolve(wellKnown("no resolver of this network's is known to ask"));
        return discover(server, init.timeoutMs ?? 1500).then((d) =>
          d.found ? { prefix: d.prefix, how: 'ipv4only.arpa' as const, detail: `${d.asked} named the prefix for ipv4only.arpa (its DNS64)` } : wellKnown(d.why),
        );
      },
      done: (r) => found(r.prefix, r.how, r.detail),
      failed: (why) => found(WELL_KNOWN_NAT64, 'well-known', `not checked: ${why}; trying the well-known prefix`),
    });
  }
}
