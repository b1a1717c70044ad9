/**
 * The checks made once per network joined (once-per-join.ts), started and
 * stopped together: whether the network answers DNS for every address
 * (dns-check.ts), its own encrypted resolver (ddr-check.ts: what it finds
 * is told to the resolver's owner, resolver-choice.ts, which decides), and
 * on a network without IPv4 the NAT64 prefix an IPv4 resolver is reached
 * through (nat64-check.ts). Each reads the run's configuration as it is now.
 */
import type { CurrentNetwork } from '../network/current-network.js';
import type { DnsCheckTarget } from '../network/dns-interception.js';
import { discoverNetworkResolver, type DiscoveryPaths } from '../network/network-resolver.js';
import type { AuthPolicy } from '../upstream/auth-policy.js';
import { DdrCheck, type DdrPolicy } from './ddr-check.js';
import { DnsCheck, type DnsCheckPolicy } from './dns-check.js';
import { Nat64Check } from './nat64-check.js';

/** What the checks read of the run's configuration (run/proxy-config.ts's ProxyConfig has this shape). */
interface NetworkChecksConfig {
  readonly auth: Pick<AuthPolicy, 'mode' | 'ca'>;
  /** The network's resolver as configured (empty: discovered). */
  readonly networkDns: readonly string[];
  readonly captive: { readonly networkDns: readonly string[]; readonly paths?: DiscoveryPaths } | null;
  /** The DNS-interception check's target; null: off. */
  readonly dnsCheck: DnsCheckTarget | null;
  /** The question for the network's own resolver; null: never asked (network checks off). */
  readonly ddrCheck: { readonly timeoutMs: number } | null;
}

export interface NetworkChecksInit {
  readonly network: CurrentNetwork;
  /** The run's configuration now (settings change it at run time). */
  readonly config: () => NetworkChecksConfig;
  /** The running resolver's addresses (the NAT64 check asks whether an IPv4 one needs the network's prefix). */
  readonly addresses: () => readonly string[];
  /** The NAT64 prefix found or lost: the upstream is steered again (privacy-controller.ts). */
  readonly nat64Changed: () => void;
  /** The network's own resolver was checked again (resolver-choice.ts). */
  readonly offerChecked: () => void;
}

export class NetworkChecks {
  readonly #dns: DnsCheck | null;
  readonly #ddr: DdrCheck;
  readonly #nat64: Nat64Check;

  constructor(init: NetworkChecksInit) {
    const { network, config } = init;
    const first = config();
    const mode = (): AuthPolicy['mode'] => config().auth.mode;
    this.#dns = first.dnsCheck ? new DnsCheck({ network, mode, target: first.dnsCheck }) : null;
    const ddr = first.ddrCheck;
    this.#ddr = new DdrCheck({
      network,
      mode,
      networkResolver: () => {
        const c = config();
        const captiveDns = c.captive?.networkDns ?? [];
        return discoverNetworkResolver(captiveDns.length ? captiveDns : c.networkDns, c.captive?.paths)?.servers[0] ?? null;
      },
      options: ddr ? () => ({ ca: config().auth.ca, timeoutMs: ddr.timeoutMs }) : null,
      checked: init.offerChecked,
    });
    this.#nat64 = new Nat64Check({
      network,
      mode,
      addresses: init.addresses,
      networkResolver: () => discoverNetworkResolver(config().networkDns)?.servers[0] ?? null,
      apply: init.nat64Changed,
      mayAsk: () => config().ddrCheck !== null,
    });
  }

  /** Where the DNS-interception check runs in this run (every network, only where local names are allowed, or nowhere). */
  get dnsCheck(): DnsCheckPolicy {
    return this.#dns?.policy ?? 'off';
  }

  /** Where this run asks networks for their own encrypted resolver. */
  get ddrCheck(): DdrPolicy {
    return this.#ddr.policy;
  }

  start(): void {
    this.#dns?.start();
    this.#ddr.start();
    this.#nat64.start();
  }

  stop(): void {
    this.#dns?.stop();
    this.#ddr.stop();
    this.#nat64.stop();
  }

  /** Settings changed (strict → opportunistic may allow a check this join had not been allowed). */
  settingsChanged(): void {
    this.#dns?.settingsChanged();
    this.#ddr.settingsChanged();
    this.#nat64.settingsChanged();
  }
}
