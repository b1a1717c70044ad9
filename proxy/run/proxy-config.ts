/**
 * The proxy's configuration for one run (run-config.ts makes it from
 * flags and settings): where to listen, which resolver, how to authenticate
 * it, the pools' bounds, the cache, captive-portal handling, degraded mode.
 */
import type { AnswerCacheOptions } from '../cache/answer-cache.js';
import { DEFAULT_LISTEN, type ListenAddress } from '../listen/address.js';
import type { ProbeTargets } from '../network/captive/probe.js';
import type { DnsCheckTarget } from '../network/dns-interception.js';
import type { NameRouting } from '../network/name-owners.js';
import type { DiscoveryPaths } from '../network/network-resolver.js';
import type { AuthPolicy } from '../upstream/auth-policy.js';
import { DEFAULT_POOL_OPTIONS, type PoolOptions } from '../upstream/pool/options.js';
import type { ResolverSpec } from '../config/resolvers.js';

/** The two names the DNSSEC check asks the resolver (privacy/dnssec-check.ts). */
export interface DnssecProbeNames {
  /** A name in a signed zone: a validating resolver sets AD on its answer. */
  readonly signed: string;
  /** A name whose signatures are broken on purpose: a validating resolver answers SERVFAIL. */
  readonly bogus: string;
}

/** Captive-portal handling (issue 9): where to probe and whom to ask in cleartext. */
export interface CaptiveConfig {
  readonly probes: ProbeTargets;
  /** The network's own resolver, when the user set it (`--network-dns`); empty: discovered. */
  readonly networkDns: readonly string[];
  /** Strict mode's "allow sign-in" answers per network; null: not remembered. */
  readonly consentFile: string | null;
  /** Where discovery looks (tests point it at their own files). */
  readonly paths?: DiscoveryPaths;
  /** A fixed network key (tests); the gateway's hashed MAC otherwise. */
  readonly networkKey?: () => string | null;
  readonly exceptionMs?: number;
  readonly reprobeMs?: number;
}

/** What dotstub remembers per network (network/network-memory.ts): what worked there, and the user's choices. */
interface NetworkMemoryConfig {
  readonly file: string;
  /** A fixed network key (tests); the gateway's hashed MAC otherwise. */
  readonly networkKey?: () => string | null;
  /** The gateway's address, for the network's label (tests); /proc/net/route otherwise. */
  readonly gateway?: () => string | null;
  /** The network's name, for its label (tests); NetworkManager or iwd otherwise (network/network-name.ts). */
  readonly name?: () => Promise<string | null>;
}

export interface ProxyConfig {
  readonly listen: readonly ListenAddress[];
  readonly resolver: ResolverSpec;
  readonly auth: AuthPolicy;
  readonly pool: PoolOptions;
  readonly padding: boolean;
  readonly recordNames: boolean;
  /** Answer Firefox's DoH canary (use-application-dns.net) NXDOMAIN so its lookups stay here. */
  readonly keepBrowsersOnStub: boolean;
  /** Open connections at start so the first query doesn't pay the handshake. */
  readonly warm: boolean;
  /** Watch routes, addresses and sleep, and reconnect at once when they change (network/watch.ts). */
  readonly watchNetwork: boolean;
  /** The answer cache's bounds; null: no cache (every query goes to the resolver). */
  readonly cache: Partial<AnswerCacheOptions> | null;
  /** Captive-portal detection and the sign-in exception; null: off (no probe ever leaves). */
  readonly captive: CaptiveConfig | null;
  /**
   * Whether the network answers DNS for every address, checked once per
   * network joined (privacy/dns-check.ts; in strict mode only where local
   * names are allowed); null: off (no probe leaves). On with the portal checks.
   */
  readonly dnsCheck: DnsCheckTarget | null;
  /**
   * Ask the network for its own encrypted resolver (privacy/ddr-check.ts,
   * RFC 9462), once per network joined (in strict mode only where local
   * names are allowed or it was chosen): how long to wait for each step;
   * null: off (no query leaves). On with the portal checks.
   */
  readonly ddrCheck: { readonly timeoutMs: number } | null;
  /**
   * Whether the resolver validates DNSSEC, measured once per resolver over
   * its first authenticated connection (privacy/dnssec-check.ts): the names
   * it asks; null: not measured (the dashboard says so).
   */
  readonly dnssecCheck: DnssecProbeNames | null;
  /**
   * Opportunistic mode only: while encrypted DNS is blocked, let the
   * network's own resolver answer in cleartext (state `degraded`). Off by
   * default; never in strict mode.
   */
  readonly allowDegraded: boolean;
  /** The network's own resolver for degraded mode when captive handling is off (empty: discovered). */
  readonly networkDns: readonly string[];
  /** Routing by name owner (engine/router.ts): local and VPN names to their link's resolver; null: every name to the resolver. */
  readonly names: NameRouting | null;
  /** Per-network memory (start on what worked there); null: nothing remembered. */
  readonly networkMemory: NetworkMemoryConfig | null;
}

export function defaultConfig(resolver: ResolverSpec, overrides: Partial<ProxyConfig> = {}): ProxyConfig {
  return {
    listen: DEFAULT_LISTEN,
    resolver,
    auth: { mode: 'strict', ca: [] },
    pool: DEFAULT_POOL_OPTIONS,
    padding: true,
    recordNames: true,
    keepBrowsersOnStub: true,
    watchNetwork: true,
    warm: true,
    cache: {},
    captive: null,
    dnsCheck: null,
    ddrCheck: null,
    dnssecCheck: null,
    allowDegraded: false,
    networkDns: [],
    names: null,
    networkMemory: null,
    ...overrides,
  };
}

/** What settings may change while the proxy runs (ControlService.updateSettings). */
export interface RuntimeChanges {
  readonly pool?: Partial<PoolOptions>;
  readonly auth?: AuthPolicy;
  readonly padding?: boolean;
  readonly recordNames?: boolean;
  /** The network's own resolver for captive sign-in (empty: discovered); used from the next portal check. */
  readonly networkDns?: readonly string[];
  /** Opportunistic mode's cleartext fallback (state `degraded`). */
  readonly allowDegraded?: boolean;
}

/** `config` with `changes` applied; padding and record-names as the engine now has them. */
export function withChanges(config: ProxyConfig, changes: RuntimeChanges, engine: { readonly padding: boolean; readonly recordNames: boolean }): ProxyConfig {
  return {
    ...config,
    pool: { ...config.pool, ...changes.pool },
    auth: changes.auth ?? config.auth,
    padding: engine.padding,
    recordNames: engine.recordNames,
    captive: config.captive && changes.networkDns ? { ...config.captive, networkDns: changes.networkDns } : config.captive,
    allowDegraded: changes.allowDegraded ?? config.allowDegraded,
    networkDns: changes.networkDns ?? config.networkDns,
  };
}
