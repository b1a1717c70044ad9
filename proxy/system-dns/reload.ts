/**
 * Making a service re-read its configuration, with what this machine has.
 *
 * Never waits on a systemd job: dotstub runs as a service itself, and at its
 * stop a restart job of resolved can be queued behind dotstub's own stop job
 * (units ordered with each other), so a blocking `systemctl` there waits for
 * the stop that is waiting for it (15 s to the stop timeout, then SIGKILL).
 * Jobs are queued with --no-block; whether the change took is then read
 * from resolved's own state, for a bounded time.
 */
import { SystemDnsError } from './errors.js';
import { socketListening, type SystemHost } from './host.js';
import { RESOLVED_SOCKET, resolvedGlobalServers } from './resolved-backend.js';
import type { ReloadTarget } from './steps.js';

export interface ReloadExpectation {
  /** The server resolved should (not) list once it has read the files, "127.0.0.1:53". */
  readonly server: string;
  readonly present: boolean;
  /** How long to wait for it (ms). */
  readonly waitMs: number;
}

/** True once resolved lists (or no longer lists) the server; polls resolved itself. */
async function waitResolved(host: SystemHost, e: ReloadExpectation): Promise<boolean> {
  const end = Date.now() + e.waitMs;
  for (;;) {
    if (await socketListening(host.at(RESOLVED_SOCKET), 500)) {
      const servers = await resolvedGlobalServers(host);
      if (servers !== null && servers.includes(e.server) === e.present) return true;
    }
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Returns false when resolved was running and did not show the expected
 * state within the wait (the queued restart may still come: e.g. at our own
 * stop, when something orders it after us).
 */
export async function reloadService(host: SystemHost, target: ReloadTarget, expect?: ReloadExpectation): Promise<boolean> {
  if (target === 'systemd-resolved') {
    const wasRunning = await socketListening(host.at(RESOLVED_SOCKET));
    // Taking over, resolved 256+ reloads (SIGHUP: Debian 13's 257); 252
    // (Debian 12) has no reload and is restarted. Giving back, it is always
    // restarted: 257's reload drops the servers of a drop-in that is gone
    // but keeps its Domains= (measured in the install lab: `Global: ~.`
    // stayed until resolved restarted), so the configuration would not be
    // the one before. Per-link settings survive a restart (resolved keeps
    // them in /run/systemd/resolve/netif). try-: does nothing when it isn't
    // running (at boot, a replayed journal finds it not started yet, and it
    // reads the restored files when it starts).
    const verb = expect?.present === false ? 'try-restart' : 'try-reload-or-restart';
    const r = await host.run(['systemctl', '--no-block', verb, 'systemd-resolved.service'], 10_000);
    if (r.code !== 0) {
      throw new SystemDnsError(
        'SYSDNS_APPLY_FAILED',
        `could not reload systemd-resolved (systemctl ${r.missing ? 'not found' : `said: ${r.stderr.trim() || `exit ${String(r.code)}`}`}): run "systemctl restart systemd-resolved" by hand`,
      );
    }
    const took = !wasRunning || expect === undefined || (await waitResolved(host, expect));
    // Answers cached from before the switch would otherwise still come from the old servers.
    if (took) await host.run(['resolvectl', 'flush-caches'], 5000);
    return took;
  }
  // A D-Bus call to NetworkManager: no systemd job.
  const nm = await host.run(['nmcli', 'general', 'reload'], 15_000);
  if (nm.code === 0) return true;
  // try-: a no-op when it isn't running (the boot-time restore runs before it starts; it reads the restored files then).
  const sc = await host.run(['systemctl', '--no-block', 'try-reload-or-restart', 'NetworkManager.service'], 15_000);
  if (sc.code !== 0) {
    throw new SystemDnsError('SYSDNS_APPLY_FAILED', `could not reload NetworkManager (nmcli: ${nm.stderr.trim() || 'failed'}; systemctl: ${sc.stderr.trim() || 'failed'}): run "systemctl reload NetworkManager" by hand`);
  }
  return true;
}
