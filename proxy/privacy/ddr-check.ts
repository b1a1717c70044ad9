/**
 * When dotstub asks the network for its own encrypted resolver, and when it
 * uses it (network/ddr.ts measures; docs/networks.md#the-networks-own-encrypted-resolver):
 *
 *   - asked once per network joined, once its key is known (what it says is
 *     remembered under the key): one constant query, `_dns.resolver.arpa`
 *     SVCB, to the network's resolver, and a TLS handshake with each
 *     designation until one verifies; never per query, never on a timer.
 *   - what it found is written to the network's memory by its owner
 *     (network/current-network.ts), only if we're still on that network:
 *     an offer the Network view and the tray show. Nothing switches then.
 *   - used only where the user chose it for this network ("Use it on this
 *     network"), and that is decided by the resolver's owner
 *     (resolver-choice.ts), told after each check: on joining such a network
 *     the remembered offer is used at once (every connection to it is
 *     authenticated by its name, as any resolver's), and the check runs
 *     again; should the network stop designating it, or its certificate stop
 *     covering the network resolver's address, dotstub goes back to the
 *     user's own resolver. On leaving the network, likewise.
 *
 * Strict mode: the query is a cleartext packet to the network's resolver,
 * and strict mode sends none the user didn't agree to. So there it is sent
 * only on a network where the user allowed local names (they agreed that it
 * sees plain DNS from this machine), or chose its own resolver before (they
 * asked to use it; the check only confirms it still holds). Opportunistic
 * mode asks every network. Off with the portal checks (`--no-portal-check`):
 * then no network is asked, and a choice remembered before still applies.
 */
import type { CurrentNetwork } from '../network/current-network.js';
import { discoverDesignatedResolver, type DdrOptions, type DdrResult } from '../network/ddr.js';
import type { NetworkServer } from '../network/network-resolver.js';
import type { DdrOffer } from '../network/network-memory.js';
import type { ResolverSpec } from '../config/resolvers.js';
import type { AuthMode } from '../upstream/auth-policy.js';
import { OncePerJoin } from './once-per-join.js';

/**
 * The offer as a resolver: its addresses and port, authenticated by its name
 * (verified in its certificate with the network resolver's address), its DoH
 * URL as the fallback when the network designated one.
 */
export function resolverForOffer(offer: DdrOffer): ResolverSpec {
  return {
    id: `network:${offer.name}`,
    label: `${offer.name} (this network's own)`,
    addresses: offer.addresses,
    port: offer.port,
    authName: offer.name,
    pins: [],
    ...(offer.dohUrl ? { dohUrl: offer.dohUrl } : {}),
  };
}

export type DdrPolicy = 'every-network' | 'where-local-names-allowed' | 'off';

export interface DdrCheckInit {
  readonly network: CurrentNetwork;
  readonly mode: () => AuthMode;
  /** The network's resolver now (network-resolver.ts); null: not known (nothing to ask). */
  readonly networkResolver: () => NetworkServer | null;
  /** How long each step may take; null: the network is never asked (network checks off), a remembered choice still applies. */
  readonly options: (() => DdrOptions) | null;
  /**
   * The offer was checked again and written to the network's memory: whether
   * it is used is the resolver's owner's to decide (resolver-choice.ts), which
   * hears of the network's changes and choices itself.
   */
  readonly checked: () => void;
  /** The measurement (tests give their own). */
  readonly discover?: (server: NetworkServer, o: DdrOptions) => Promise<DdrResult>;
}

/**
 * The question for the network's own resolver, asked once per network joined
 * (once-per-join.ts: start, stop, settingsChanged, settled); what it finds is
 * remembered, and the resolver's owner told.
 */
export class DdrCheck extends OncePerJoin<DdrResult> {
  readonly #options: DdrCheckInit['options'];
  readonly #mode: () => AuthMode;

  constructor(init: DdrCheckInit) {
    const discover = init.discover ?? discoverDesignatedResolver;
    const network = init.network;
    super({
      network,
      allowed: () => {
        if (!init.options) return false;
        // Strict: where local names are allowed, or the user chose this network's own resolver before (the check confirms it).
        const key = network.key;
        return init.mode() !== 'strict' || network.localNames() === 'allow' || (key !== null && network.remembered(key)?.ownResolver === 'use');
      },
      measure: () => {
        const server = init.networkResolver();
        return server && init.options ? discover(server, init.options()) : null;
      },
      done: (result) => {
        network.ddrChecked(result);
        init.checked();
      },
      failed: (why) => {
        const server = init.networkResolver();
        network.ddrNotChecked(server ? server.host : 'the network resolver', why);
      },
      name: "the question for this network's own encrypted resolver",
    });
    this.#options = init.options;
    this.#mode = init.mode;
  }

  get policy(): DdrPolicy {
    if (!this.#options) return 'off';
    return this.#mode() === 'strict' ? 'where-local-names-allowed' : 'every-network';
  }
}
