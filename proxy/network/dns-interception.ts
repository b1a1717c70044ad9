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
import dgram from 'node:dgram';
import net from 'node:net';
import { dnsPacket } from '../dns/dns-packet.js';

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
  | { readonly address: string; readonly answered: false; readonly detail: string };

export interface DnsCheckResult {
  /** The first address that answered (someone intercepts port 53); null: none did (not seen). */
  readonly answered: Extract<AddressOutcome, { answered: true }> | null;
  readonly outcomes: readonly AddressOutcome[];
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
  const stops: (() => void)[] = [];
  const outcomes = await Promise.all(
    target.addresses.map((a) =>
      askOne(a, target.port, target.timeoutMs, (stop) => stops.push(stop)).then((o) => {
        if (o.answered) for (const stop of stops) stop();
        return o;
      }),
    ),
  );
  const answered = outcomes.find((o): o is Extract<AddressOutcome, { answered: true }> => o.answered) ?? null;
  return { answered, outcomes };
}

function askOne(address: string, port: number, timeoutMs: number, onStop: (stop: () => void) => void): Promise<AddressOutcome> {
  return new Promise((resolve) => {
    const family = net.isIP(address);
    if (family === 0) {
      resolve({ address, answered: false, detail: 'not an address' });
      return;
    }
    const id = Math.floor(Math.random() * 0x10000);
    const query = dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name: CHECK_NAME }] });
    const socket = dgram.createSocket(family === 6 ? 'udp6' : 'udp4');
    const t0 = Date.now();
    let done = false;
    const finish = (o: AddressOutcome): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.close();
      resolve(o);
    };
    const timer = setTimeout(() => finish({ address, answered: false, detail: `no answer in ${timeoutMs} ms (as on a network that leaves port 53 alone)` }), timeoutMs);
    onStop(() => finish({ address, answered: false, detail: 'not waited for: another address answered' }));
    socket.on('error', (err) => finish({ address, answered: false, detail: `not sent or not answered: ${err.message}` }));
    socket.on('message', (msg, rinfo) => {
      // Only the answer to this query counts: from the address asked, with its ID and its question.
      if (rinfo.address !== address && rinfo.address !== `::ffff:${address}`) return;
      let decoded: ReturnType<typeof dnsPacket.decode>;
      try {
        decoded = dnsPacket.decode(msg);
      } catch {
        return;
      }
      const q = decoded.questions?.[0];
      if (decoded.type !== 'response' || decoded.id !== id || q?.name.toLowerCase() !== CHECK_NAME) return;
      const addresses = (decoded.answers ?? []).filter((r) => r.type === 'A' || r.type === 'AAAA').map((r) => String((r as { data: unknown }).data));
      const rcode = (msg[3] ?? 0) & 0xf;
      finish({ address, answered: true, rcode: RCODES[rcode] ?? `RCODE ${rcode}`, addresses, afterMs: Date.now() - t0 });
    });
    // Connected: the kernel drops datagrams from anyone else, and an ICMP error for this query comes back as 'error'.
    socket.connect(port, address, () => {
      if (done) return;
      socket.send(query, (err) => {
        if (err) finish({ address, answered: false, detail: `not sent: ${err.message}` });
      });
    });
  });
}
