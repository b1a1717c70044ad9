/**
 * What a network's card says about plain DNS there (issue 33, item 6):
 * whether something on the network answers DNS sent to any address, as
 * dotstub's check measured it (network/dns-interception.ts: one constant
 * query to port 53 of a documentation address, where no DNS server can be).
 * Pure. Only what was measured is said: an answer is a verdict; no answer is
 * "not seen" at that check, never "clean"; no check is "not checked", and why.
 */
import type { NetworksView, RememberedNetworkView } from '../../../proxy/control/api-types.js';
import { formatDateTime } from './format.js';

export interface Port53Words {
  /** rewrites: the last check got an answer; was-seen: an earlier one did, the last didn't; not-seen: checked, no answer; unchecked. */
  readonly kind: 'rewrites' | 'was-seen' | 'not-seen' | 'unchecked';
  /** The line on the card. */
  readonly text: string;
  /** What it rests on and what it means, for the line below (null: nothing more to say). */
  readonly detail: string | null;
}

const when = (iso: string): string => formatDateTime(Date.parse(iso), 'min');

const WHY_UNCHECKED: Record<NetworksView['dnsCheck'], string> = {
  'every-network': 'Not checked here yet',
  'where-local-names-allowed': 'Not checked: in strict mode dotstub checks only where you allowed local names (the check is one plain DNS packet)',
  off: 'Not checked: network checks are off (Check for Wi-Fi sign-in pages, in Settings)',
};

export function port53Words(
  n: Pick<RememberedNetworkView, 'rewritesDns' | 'dnsCheckedAt'> & Partial<Pick<RememberedNetworkView, 'dnsCheckNote'>>,
  policy: NetworksView['dnsCheck'],
): Port53Words {
  // What the last check could not look at ("IPv6 not checked: no route …"): said under whatever it saw.
  const note = n.dnsCheckNote ?? null;
  const r = n.rewritesDns;
  const consequence = 'dotstub’s encrypted DNS is not affected; plain DNS here (local names, programs that go around dotstub) is answered by the network, whatever server it was sent to.';
  if (r && (n.dnsCheckedAt === null || n.dnsCheckedAt <= r.seenAt)) {
    return {
      kind: 'rewrites',
      text: 'This network answers DNS for every address: it intercepts port 53',
      detail: `${r.asked}, where no DNS server can be, answered ${r.answeredWith} (${when(r.seenAt)}). ${consequence}`,
    };
  }
  if (r && n.dnsCheckedAt !== null) {
    return {
      kind: 'was-seen',
      text: `Answered DNS for every address on ${when(r.seenAt)} (port 53 intercepted); not seen at the last check, ${when(n.dnsCheckedAt)}`,
      detail: `${r.asked}, where no DNS server can be, answered ${r.answeredWith} then.`,
    };
  }
  if (n.dnsCheckedAt !== null) {
    return { kind: 'not-seen', text: `Not seen answering DNS for other addresses (checked ${when(n.dnsCheckedAt)})`, detail: note };
  }
  if (note !== null && policy !== 'off') return { kind: 'unchecked', text: 'Not checked: no address could be asked from this network', detail: note };
  return { kind: 'unchecked', text: WHY_UNCHECKED[policy], detail: null };
}
