/**
 * The one owner of the network we're on (network/current-network.ts), from
 * the parts of the run's configuration that name its files (networks.json,
 * the sign-in answers) and, in tests, its key, gateway and name.
 */
import { CurrentNetwork } from '../network/current-network.js';
import { networkName } from '../network/network-name.js';
import type { ProxyConfig } from './proxy-config.js';

export function currentNetworkFor(config: ProxyConfig): CurrentNetwork {
  const m = config.networkMemory;
  const fixed = m?.networkKey ?? config.names?.networkKey ?? config.captive?.networkKey;
  // A test that gives its own gateway gives its own OS: the network's name is then its to give too.
  const name = m ? (m.name ?? (m.gateway ? undefined : () => networkName())) : undefined;
  return new CurrentNetwork({
    file: m?.file ?? config.names?.memoryFile ?? null,
    signInFile: config.captive?.consentFile ?? null,
    ...(fixed
      ? {
          identify: () => {
            const key = fixed();
            return key === null ? null : { key, final: true };
          },
        }
      : {}),
    ...(m?.gateway ? { gateway: m.gateway } : {}),
    ...(name ? { name } : {}),
  });
}
