/**
 * The tray's offer of the network's own encrypted resolver (issue 33, item
 * 5; RFC 9462, DDR): shown while the network we're on designates one whose
 * certificate was verified for its resolver's address (the proxy's check,
 * privacy/ddr-check.ts). The tray only offers: "Use it on this network" is
 * the user's click, remembered for this network, as the Network view's
 * button is; "Stop using it here" goes back. A refused (forged) designation
 * is not offered; the Network view says why. Pure.
 */
import type { NetworksView } from '../../proxy/control/api-types.js';
import type { TrayOwnResolver } from './types.js';

export function ownResolverOffer(networks: NetworksView | undefined): TrayOwnResolver | undefined {
  const here = networks?.networks.find((n) => n.current);
  const offer = here?.ownResolver?.offer;
  if (!here || !offer) return undefined;
  return { key: here.key, name: offer.name, verifiedFor: offer.verifiedFor, inUse: here.ownResolver?.inUse === true };
}
