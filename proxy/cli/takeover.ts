/** --system-dns: the takeover this run offers, following the journal; a stale one is replayed first. */
import { ConfigError } from '../errors.js';
import type { ListenAddress } from '../listen/address.js';
import type { SystemDnsManager } from '../system-dns/manager.js';
import type { ParsedCli } from './flags.js';
import { say } from './log.js';

export async function startSystemDns(
  opts: NonNullable<ParsedCli['systemDns']>,
  configDir: string,
  bound: readonly ListenAddress[],
  /** A crash loop (runtime/stops.ts): taking over again waits until then. */
  holdResume?: { readonly until: number; readonly words: string },
): Promise<SystemDnsManager> {
  const { SystemDnsManager } = await import('../system-dns/manager.js');
  const { systemHost } = await import('../system-dns/host.js');
  const { resolvConfLookup } = await import('../system-dns/os-lookup.js');
  const { unitHelper } = await import('../system-dns/unit-helper.js');
  const v4 = bound.find((a) => a.host === '127.0.0.1');
  if (!v4) throw new ConfigError('--system-dns needs a DNS listener on 127.0.0.1 (e.g. --listen 127.0.0.1:53): that is where the system is pointed');
  const host = systemHost(opts.root);
  const stateDir = opts.stateDir ?? (host.root === '/' && process.geteuid?.() === 0 ? '/var/lib/dotstub' : configDir);
  const manager = new SystemDnsManager({
    host,
    stateDir,
    port: host.root === '/' ? v4.port : 53,
    ...(opts.backend !== undefined ? { backend: opts.backend } : {}),
    ...(host.root !== '/' ? { lookup: resolvConfLookup(host.at('/etc/resolv.conf'), v4.port) } : {}),
    // The service runs the proxy as its own user: the root units change the DNS, and run the watchdog.
    ...(opts.viaUnits ? { helper: unitHelper(host) } : { watchdogProbePort: v4.port }),
    log: (line) => say(`system DNS: ${line}`),
    ...(holdResume ? { holdResume } : {}),
  });
  await manager.start();
  say(`system DNS: ${manager.reason}`);
  return manager;
}
