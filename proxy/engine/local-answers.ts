/**
 * Names dotstub answers itself, never forwarded
 * (docs/networks.md#names-dotstub-answers-itself):
 * - `resolver.arpa` and everything under it (RFC 9462 DDR, e.g.
 *   `_dns.resolver.arpa` SVCB): NODATA, so an OS that discovers designated
 *   resolvers doesn't upgrade past the stub to the network's resolver; a
 *   forwarder must not forward them (§6.4).
 * - `use-application-dns.net` (Firefox's canary): NXDOMAIN while "keep
 *   browsers on dotstub" is on, so Firefox's default-on DoH stays off and its
 *   lookups come here.
 *
 * Among them, dotstub's own checks: the system-DNS watchdog asks
 * `liveness.dotstub.resolver.arpa` about once a second to see that dotstub
 * answers. Those lookups are dotstub's, not the user's: their records are
 * tagged `internal` and kept out of the counts, the per-second series and
 * the dashboard's top names (issue 24, item 5).
 */
import type { ClientQuery } from '../dns/client-query.js';

export type LocalVerdict = 'NOERROR' | 'NXDOMAIN' | null;

export interface LocalAnswerPolicy {
  /** Answer Firefox's canary NXDOMAIN (default on). */
  readonly keepBrowsersOnStub: boolean;
}

/** The name the liveness watchdog (system-dns/liveness.ts) asks. */
const LIVENESS_NAME = 'liveness.dotstub.resolver.arpa';

/**
 * Whether `name` (as presentName writes it) is `target` (lower case, no
 * final dot) or, with `under`, a name below it: ASCII letters compared
 * without case, a final dot ignored. Allocates nothing (every query passes here).
 */
function matches(name: string, target: string, under: boolean): boolean {
  const end = name.endsWith('.') ? name.length - 1 : name.length;
  const start = end - target.length;
  if (start < 0 || (start > 0 && (!under || name.charCodeAt(start - 1) !== 0x2e))) return false;
  for (let i = 0; i < target.length; i++) {
    let c = name.charCodeAt(start + i);
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    if (c !== target.charCodeAt(i)) return false;
  }
  return true;
}

export function localVerdict(query: ClientQuery, policy: LocalAnswerPolicy): LocalVerdict {
  const name = query.question.name;
  if (matches(name, 'resolver.arpa', true)) return 'NOERROR';
  if (policy.keepBrowsersOnStub && matches(name, 'use-application-dns.net', false)) return 'NXDOMAIN';
  return null;
}

/** A lookup dotstub makes itself (answered here, under resolver.arpa), not one of the user's programs. */
export function isOwnCheck(name: string): boolean {
  return matches(name, LIVENESS_NAME, false);
}
