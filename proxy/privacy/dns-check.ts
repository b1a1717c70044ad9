/**
 * When dotstub checks whether the network answers DNS for every address
 * (network/dns-interception.ts measures; docs/networks.md#a-network-that-answers-dns-for-every-address):
 *
 *   - once per network joined (start, or a change of network), once its key
 *     is known (a check can't be remembered under a key that may still
 *     change; the key comes within milliseconds of the first traffic); never
 *     per query, never on a timer. Each check is at most one UDP packet per
 *     documentation address and lasts at most its timeout (1.5 s).
 *   - what it saw is written to the network's memory (networks.json) by its
 *     owner (network/current-network.ts), and only if we're still on the
 *     network it was measured on.
 *
 * Strict mode: the check is a cleartext packet, a DNS query (if a
 * meaningless one), and strict mode sends none the user didn't agree to. So
 * there it runs only on a network where the user allowed local names: they
 * agreed that this network sees plain DNS from this machine, and it is where
 * the answer matters to them (those names go to port 53 unencrypted, and an
 * interceptor would answer them). A sign-in allowed for a captive portal is
 * not that agreement: it covers the sign-in's own names, for minutes. The
 * user allowing local names while on the network runs the check then (the
 * owner's 'changed' { why: 'choices' }); opportunistic mode checks every
 * network. Off with the portal checks (`--no-portal-check`, the test rigs'
 * DOTSTUB_PORTAL_CHECK=off): no probe leaves.
 */
import type { CurrentNetwork } from '../network/current-network.js';
import { checkDnsInterception, type DnsCheckResult, type DnsCheckTarget } from '../network/dns-interception.js';
import type { AuthMode } from '../upstream/auth-policy.js';
import { OncePerJoin } from './once-per-join.js';

/** Where the check runs in this run: the networks view says it next to each network's verdict. */
export type DnsCheckPolicy = 'every-network' | 'where-local-names-allowed' | 'off';

export interface DnsCheckInit {
  readonly network: CurrentNetwork;
  readonly mode: () => AuthMode;
  readonly target: DnsCheckTarget;
  /** The measurement (tests give their own); network/dns-interception.ts's otherwise. */
  readonly check?: (target: DnsCheckTarget) => Promise<DnsCheckResult>;
}

/** The DNS-interception check, run once per network joined (once-per-join.ts: start, stop, settingsChanged, settled), where strict mode allows it. */
export class DnsCheck extends OncePerJoin<DnsCheckResult> {
  readonly #mode: () => AuthMode;

  constructor(init: DnsCheckInit) {
    const check = init.check ?? checkDnsInterception;
    super({
      network: init.network,
      allowed: () => init.mode() !== 'strict' || init.network.localNames() === 'allow',
      measure: () => check(init.target),
      done: (result) => init.network.dnsChecked(result),
      failed: (why) => init.network.dnsNotChecked(why),
      name: 'the check whether this network answers DNS for every address',
    });
    this.#mode = init.mode;
  }

  get policy(): DnsCheckPolicy {
    return this.#mode() === 'strict' ? 'where-local-names-allowed' : 'every-network';
  }
}
