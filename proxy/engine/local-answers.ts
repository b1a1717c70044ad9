/**
 * Names dotstub answers itself, never forwarded (NETWORK.md, "Names dotstub
 * answers itself"):
 * - `resolver.arpa` and everything under it (RFC 9462 DDR, e.g.
 *   `_dns.resolver.arpa` SVCB): NODATA, so an OS that discovers designated
 *   resolvers doesn't upgrade past the stub to the network's resolver; a
 *   forwarder must not forward them (§6.4).
 * - `use-application-dns.net` (Firefox's canary): NXDOMAIN while "keep
 *   browsers on dotstub" is on, so Firefox's default-on DoH stays off and its
 *   lookups come here.
 */
import type { ClientQuery } from '../dns/client-query.js';

export type LocalVerdict = 'NOERROR' | 'NXDOMAIN' | null;

export interface LocalAnswerPolicy {
  /** Answer Firefox's canary NXDOMAIN (default on). */
  readonly keepBrowsersOnStub: boolean;
}

function canonical(name: string): string {
  const n = name.toLowerCase();
  return n.endsWith('.') ? n.slice(0, -1) : n;
}

export function localVerdict(query: ClientQuery, policy: LocalAnswerPolicy): LocalVerdict {
  const name = canonical(query.question.name);
  if (name === 'resolver.arpa' || name.endsWith('.resolver.arpa')) return 'NOERROR';
  if (policy.keepBrowsersOnStub && name === 'use-application-dns.net') return 'NXDOMAIN';
  return null;
}
