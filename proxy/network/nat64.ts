/**
 * Does this network reach IPv4 through a NAT64, and at which prefix?
 * (RFC 7050: a DNS64 answers ipv4only.arpa AAAA with the prefix and
 * 192.0.0.170/171 embedded; RFC 8880: the name is special, any DNS64 knows
 * it.) One constant question to the network's own resolver, UDP, a random
 * ID, nothing of the user's. Whether it may be asked (strict mode asks the
 * user) and what is done with the answer is privacy/nat64-check.ts's.
 */
import { askOverUdp, decodedAnswer } from '../dns/ask-udp.js';
import { nat64PrefixesFrom } from '../runtime/nat64-address.js';
import type { NetworkServer } from './network-resolver.js';

const NAT64_NAME = 'ipv4only.arpa';

export type Nat64Discovery =
  /** The network's DNS64 named its prefix. */
  | { readonly found: true; readonly prefix: string; readonly asked: string }
  /** No prefix in the answer, or no answer: why, in words. */
  | { readonly found: false; readonly why: string; readonly asked: string };

/** Asks `server` for ipv4only.arpa AAAA; never throws. */
export async function discoverNat64(server: NetworkServer, timeoutMs: number): Promise<Nat64Discovery> {
  const asked = server.host;
  const r = await askOverUdp({ host: server.host, port: server.port, name: NAT64_NAME, type: 'AAAA', timeoutMs, read: decodedAnswer(NAT64_NAME) });
  if (!r.answered) {
    const why = r.why === 'failed' ? r.detail : r.why === 'timeout' ? `no answer from ${asked} within ${timeoutMs} ms` : r.why === 'not-an-address' ? `${asked} is not an address` : 'not waited for';
    return { found: false, why, asked };
  }
  const { message, decoded } = r.answer;
  const rcode = (message[3] ?? 0) & 0xf;
  const aaaa = (decoded.answers ?? []).filter((a) => a.type === 'AAAA').map((a) => String((a as { data: unknown }).data));
  const prefix = nat64PrefixesFrom(aaaa)[0];
  if (prefix !== undefined) return { found: true, prefix, asked };
  return { found: false, why: rcode === 3 ? `${asked} knows no ${NAT64_NAME} (NXDOMAIN): no DNS64 on this network` : `${asked} gave no NAT64 prefix for ${NAT64_NAME} (no DNS64 on this network)`, asked };
}
