/**
 * What a network's card says about its own encrypted resolver (issue 33,
 * item 5; RFC 9462, DDR): the offer, verified for the network resolver's
 * address, and whether it is in use; or what was refused and why; or that
 * nothing was asked, and why. Pure. The offer is only ever an offer: the
 * card's button is the one way to take it.
 */
import type { NetworksView, OwnResolverView, ResolversView } from '../../../proxy/control/api-types.js';

export interface OwnResolverWords {
  /** offer: verified, not chosen; in-use: chosen and carrying lookups; chosen: chosen, not on it now; forged: refused; none; unasked. */
  readonly kind: 'offer' | 'in-use' | 'chosen' | 'forged' | 'none' | 'unasked';
  readonly text: string;
  readonly detail: string | null;
}

const WHY_UNASKED: Record<NetworksView['ddrCheck'], string> = {
  'every-network': 'Not asked here yet',
  'where-local-names-allowed': 'Not asked: in strict mode dotstub asks only where you allowed local names (the question is one plain DNS query to the network’s resolver)',
  off: 'Not asked: network checks are off (Check for Wi-Fi sign-in pages, in Settings)',
};

export function ownResolverWords(o: OwnResolverView | null, policy: NetworksView['ddrCheck']): OwnResolverWords {
  if (!o) return { kind: 'unasked', text: WHY_UNASKED[policy], detail: null };
  const f = o.offer;
  if (f) {
    const what = `${f.name} (DNS-over-TLS${f.dohUrl ? ', DNS-over-HTTPS' : ''}, verified for ${f.verifiedFor})`;
    const detail = `Its certificate names ${f.verifiedFor}, the address of this network’s resolver, and ${f.name}: only whoever runs that resolver could have it. Reached at ${f.addresses.join(', ')} port ${f.port}.`;
    if (o.inUse) return { kind: 'in-use', text: `Using this network’s own encrypted resolver: ${what}`, detail };
    if (o.choice === 'use') return { kind: 'chosen', text: `This network’s own encrypted resolver is your choice here: ${what}`, detail };
    return { kind: 'offer', text: `This network offers its own encrypted resolver: ${what}`, detail };
  }
  if (o.rejected) {
    return {
      kind: 'forged',
      text: `This network named an encrypted resolver, ${o.rejected.name}, that could not be verified: not offered`,
      detail: o.rejected.why,
    };
  }
  return { kind: 'none', text: 'No encrypted resolver of its own', detail: `Its resolver (${o.asked}) was asked: ${o.detail}.` };
}

/**
 * The Resolvers page while a network's own encrypted resolver carries the
 * lookups: it is not one of the listed resolvers, so no card could say "in
 * use"; this line does, and says where the user's own choice applies. Null
 * when the resolver in use is listed (the card says it).
 */
export function networkOwnInUse(resolvers: ResolversView, inUseLabel: string | undefined): { readonly text: string; readonly chosenLabel: string } | null {
  if (resolvers.resolvers.some((r) => r.id === resolvers.active)) return null;
  const chosen = resolvers.resolvers.find((r) => r.id === resolvers.chosen);
  const chosenLabel = chosen?.label ?? resolvers.chosen;
  return {
    chosenLabel,
    text:
      `In use on this network: ${inUseLabel ?? resolvers.active}, its own encrypted resolver, as you chose for it. ` +
      `${chosenLabel} is your choice on every other network. Choosing a resolver below uses it here now; joining this network again goes back to its own (Network page: “Stop using it here”).`,
  };
}
