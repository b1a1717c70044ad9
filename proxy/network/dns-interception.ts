/**
 * Does this network answer DNS for every address? (issue 33, item 6;
 * docs/networks.md#a-network-that-answers-dns-for-every-address.)
 *
 * One UDP query to port 53 of each documentation address (192.0.2.1,
 * TEST-NET-1, RFC 5737; 2001:db8::1, RFC 3849): no DNS server can be there,
 * on any network, so an answer, any answer (NOERROR, NXDOMAIN, REFUSED),
 * means something on the path catches port 53 and answers for everyone: a
 * hotspot or a router that DNATs every DNS packet to its own resolver. No
 * answer within the timeout is only that: not seen. It proves nothing about
 * what was not measured (TCP, other addresses, later), and is never called
 * "clean".
 *
 * The question is a constant, the same for every user and every network:
 * CHECK_NAME A, RD set, no EDNS, a random ID (as every query has, to match its
 * answer). It carries nothing of the user's: not a name they looked up, not
 * dotstub's name, not a random label that could tell one machine from
 * another. The name is under `.invalid` (RFC 6761 §6.4): it can never exist,
 * and a resolver that follows RFC 6761 answers NXDOMAIN at once without
 * asking anyone else, so even a rewritten probe goes no further than the
 * box that caught it. (`.test` would do as well, but the lab's own names live
 * there; `.invalid` says what the name is.)
 *
 * This module only measures; when it may run (once per join; in strict mode
 * only with the user's consent) is privacy/dns-check.ts's decision.
 */
import { askOverUdp, decodedAnswer } from '../dns/ask-udp.js';

/** The one name the check asks: a constant, under a TLD that can never exist. */
export const CHECK_NAME = 'dns-intercept-check.invalid';

export interface DnsCheckTarget {
  /** Where no DNS server can be: the documentation addresses (tests may point it elsewhere). */
  readonly addresses: readonly string[];
  /** 53; tests use another. */
  readonly port: number;
  /** How long to wait for an answer, ms. */
  readonly timeoutMs: number;
}

export const DEFAULT_DNS_CHECK: DnsCheckTarget = {
  addresses: ['192.0.2.1', '2001:db8::1'],
  port: 53,
  // A DNAT to the LAN's resolver answers in a LAN round trip (a few ms); 1.5 s
  // allows a slow Wi-Fi and a resolver that asks upstream before answering.
  timeoutMs: 1500,
};

/** What one address gave. */
export type AddressOutcome =
  | { readonly address: string; readonly answered: true; readonly rcode: string; readonly addresses: readonly string[]; readonly afterMs: number }
  | {
      readonly address: string;
      readonly answered: false;
      readonly detail: string;
      /** Why nothing could be asked there (no route for its family, a socket error): that address was not checked at all. */
      readonly notChecked?: string;
    };

export interface DnsCheckResult {
  /** The first address that answered (someone intercepts port 53); null: none did (not seen). */
  readonly answered: Extract<AddressOutcome, { answered: true }> | null;
  readonly outcomes: readonly AddressOutcome[];
}

/**
 * What the check could not look at, in words for the card ("IPv6 not checked:
 * no route to it from this network (ENETUNREACH)"), or null when every
 * address was asked. An IPv4-only network has no route for the IPv6 address:
 * that half was not measured, and is not "not seen".
 */
export function notCheckedWords(result: DnsCheckResult): string | null {
  const words = result.outcomes.flatMap((o) => (!o.answered && o.notChecked !== undefined ? [`${o.address.includes(':') ? 'IPv6' : 'IPv4'} not checked: ${o.notChecked}`] : []));
  return words.length > 0 ? words.join('; ') : null;
}

/** The header's response codes (RFC 1035, RFC 2136), by number. */
const RCODES: readonly string[] = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH', 'NOTZONE'];

/** "NXDOMAIN", "NOERROR with 10.53.1.1": what came back, in a few words for the network's card. */
export function answerWords(o: Extract<AddressOutcome, { answered: true }>): string {
  return o.addresses.length > 0 ? `${o.rcode} with ${o.addresses.slice(0, 2).join(', ')}` : o.rcode;
}

/**
 * Sends the one query to each address in parallel; settles at the first
 * answer (one is a verdict: the others are not waited for) or within the
 * timeout.
 */
export async function checkDnsInterception(target: DnsCheckTarget = DEFAULT_DNS_CHECK): Promise<DnsCheckResult> {
  const stop = new AbortController();
  const outcomes = await Promise.all(
    target.addresses.map((a) =>
      askOne(a, target, stop.signal).then((o) => {
        if (o.answered) stop.abort();
        return o;
      }),
    ),
  );
  const answered = outcomes.find((o): o is Extract<AddressOutcome, { answered: true }> => o.answered) ?? null;
  return { answered, outcomes };
}

async function askOne(address: string, target: DnsCheckTarget, signal: AbortSignal): Promise<AddressOutcome> {
  // Only the answer to this query counts: from the address asked (the socket is connected), with its ID and its question.
  const r = await askOverUdp({ host: address, port: target.port, name: CHECK_NAME, type: 'A', timeoutMs: target.timeoutMs, signal, read: decodedAnswer(CHECK_NAME) });
  if (!r.answered) {
    const detail = { 'not-an-address': 'not an address', timeout: `no answer in ${target.timeoutMs} ms (as on a network that leaves port 53 alone)`, stopped: 'not waited for: another address answered' };
    if (r.why === 'failed') return { address, answered: false, detail: r.detail, notChecked: r.detail.replace(/^not sent( or not answered)?: /, '') };
    return { address, answered: false, detail: detail[r.why] };
  }
  const { message, decoded } = r.answer;
  const addresses = (decoded.answers ?? []).filter((a) => a.type === 'A' || a.type === 'AAAA').map((a) => String((a as { data: unknown }).data));
  const rcode = (message[3] ?? 0) & 0xf;
  return { address, answered: true, rcode: RCODES[rcode] ?? `RCODE ${rcode}`, addresses, afterMs: r.afterMs };
}
