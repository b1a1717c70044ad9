/**
 * Flags + saved settings → the run's configuration (the proxy's
 * ProxyConfig and the settings in effect), and the one place settings
 * become pool options.
 *
 * Precedence, per field: an explicit flag (this run only, not saved) >
 * the config dir's settings.json / resolvers.json > built-in defaults.
 */
import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { ListenAddress } from '../listen/address.js';
import { DEFAULT_PROBES } from '../network/captive/probe.js';
import { DEFAULT_DNS_CHECK } from '../network/dns-interception.js';
import { DEFAULT_DDR_TIMEOUT_MS } from '../network/ddr.js';
import { SYSTEM_PATHS, type DiscoveryPaths } from '../network/network-resolver.js';
import { DEFAULT_POOL_OPTIONS, type PoolOptions } from '../upstream/pool/options.js';
import { defaultConfig, type ProxyConfig } from './proxy-config.js';
import { canAuthenticate } from '../config/resolver-store.js';
import { PRESETS, type ResolverSpec } from '../config/resolvers.js';
import type { Settings } from './settings.js';

/** The pool options a user sets (Settings: pool size, burst connections, in-flight cap, idle timeout). */
export type PoolSettings = Pick<PoolOptions, 'size' | 'burstConnections' | 'maxInFlight' | 'idleTimeoutMs'>;

export function poolSettingsFrom(settings: Settings): PoolSettings {
  return { size: settings.poolSize, burstConnections: settings.burstConnections, maxInFlight: settings.maxInFlight, idleTimeoutMs: settings.idleTimeoutSec * 1000 };
}

/** Settings → the pools' options (the defaults for what settings don't hold). */
export function poolOptionsFrom(settings: Settings): PoolOptions {
  return { ...DEFAULT_POOL_OPTIONS, ...poolSettingsFrom(settings) };
}

/** What the command line says about this run (cli/flags.ts parses it). */
export interface RunFlags {
  /** The explicit --resolver, if given. */
  readonly resolver: ResolverSpec | undefined;
  readonly resolverArg: string | undefined;
  readonly listen: readonly ListenAddress[];
  readonly ca: readonly string[];
  /** Settings given as flags: override the saved ones for this run. */
  readonly overrides: Partial<Settings>;
  readonly configDir: string;
  /** --capport-url: the network's RFC 8908 API; null: none known. */
  readonly capportUrl: string | null;
  /** False when the environment forbids portal probes (DOTSTUB_PORTAL_CHECK=off, set by test rigs). */
  readonly portalCheckAllowed: boolean;
  /** False when the environment forbids routing names to the networks' own resolvers (DOTSTUB_NAME_ROUTING=off, set by test rigs). */
  readonly nameRoutingAllowed?: boolean;
  /** --system-dns with --system-dns-root: the copy of the system files the takeover acts on (tests); names are read there too. */
  readonly systemDns?: { readonly root: string } | null;
  /** --cache-size in MiB; undefined: the default; 0: no cache. */
  readonly cacheMb: number | undefined;
}

/** Combines flags with what is saved: the proxy's configuration and the settings in effect. */
export function resolveRun(flags: RunFlags, settings: Settings, savedResolver: ResolverSpec | undefined): { config: ProxyConfig; effective: Settings } {
  const effective: Settings = { ...settings, ...flags.overrides };
  if (flags.overrides.cleartextFallback && effective.mode === 'strict') {
    throw new ConfigError('--cleartext-fallback needs opportunistic mode (--opportunistic): strict mode never sends a lookup unencrypted');
  }
  const resolver = flags.resolver ?? savedResolver ?? (PRESETS.quad9 as ResolverSpec);
  if (effective.mode === 'strict' && !canAuthenticate(resolver)) {
    throw new ConfigError(
      `strict mode needs a way to authenticate ${flags.resolverArg ?? resolver.label}: add its name (ADDRESS#AUTHNAME), a --pin, or use --opportunistic`,
    );
  }
  const config = defaultConfig(resolver, {
    listen: flags.listen,
    auth: { mode: effective.mode, ca: flags.ca },
    padding: effective.padding,
    recordNames: effective.recordNames,
    pool: poolOptionsFrom(effective),
    cache: flags.cacheMb === 0 ? null : flags.cacheMb !== undefined ? { maxBytes: Math.round(flags.cacheMb * 1024 * 1024) } : {},
    captive:
      effective.portalCheck && flags.portalCheckAllowed
        ? {
            probes: { ...DEFAULT_PROBES, capportUrl: flags.capportUrl },
            networkDns: effective.networkDns,
            consentFile: path.join(flags.configDir, 'captive-consent.json'),
          }
        : null,
    // The network checks go together: the one switch (and the test rigs' DOTSTUB_PORTAL_CHECK=off) keeps every probe in.
    dnsCheck: effective.portalCheck && flags.portalCheckAllowed ? DEFAULT_DNS_CHECK : null,
    ddrCheck: effective.portalCheck && flags.portalCheckAllowed ? { timeoutMs: DEFAULT_DDR_TIMEOUT_MS } : null,
    // Over the encrypted connection to the chosen resolver, as the user's own lookups go: the root's SOA (the root zone
    // is signed) and a domain kept broken on purpose for such checks since 2010.
    dnssecCheck: { signed: '.', bogus: 'dnssec-failed.org' },
    allowDegraded: effective.cleartextFallback && effective.mode === 'opportunistic',
    networkDns: effective.networkDns,
    // Routing by name owner: the networks' own names to their links (the journal may also be in the config dir, without root).
    // With --system-dns-root (a copy of the system files: tests), the names are read from that copy too, as the takeover acts on it.
    names: flags.nameRoutingAllowed !== false
      ? {
          paths: { ...underRoot(SYSTEM_PATHS, flags.systemDns?.root ?? '/'), stateDirs: [...SYSTEM_PATHS.stateDirs, flags.configDir] },
          localNames: 'ask',
          memoryFile: path.join(flags.configDir, 'networks.json'),
          // A copy of the system files is all a test root shows: this machine's resolved and NetworkManager are not asked.
          ...((flags.systemDns?.root ?? '/') !== '/' ? { run: () => Promise.resolve(null) } : {}),
        }
      : null,
    networkMemory: { file: path.join(flags.configDir, 'networks.json') },
  });
  return { config, effective };
}

/** The system's discovery paths under `root` (`/`: as they are). */
function underRoot(paths: DiscoveryPaths, root: string): DiscoveryPaths {
  if (root === '/') return paths;
  const at = (p: string): string => path.join(root, p);
  return {
    ...paths,
    resolvConf: at(paths.resolvConf),
    resolvedUplink: at(paths.resolvedUplink),
    leases: paths.leases.map(at),
    ...(paths.resolvconfInterfaces !== undefined ? { resolvconfInterfaces: at(paths.resolvconfInterfaces) } : {}),
  };
}
