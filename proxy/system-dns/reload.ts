/**
 * Making a service re-read its configuration, with what this machine has.
 */
import { SystemDnsError } from './errors.js';
import { socketListening, type SystemHost } from './host.js';
import { RESOLVED_SOCKET } from './resolved-backend.js';
import type { ReloadTarget } from './steps.js';

async function waitListening(file: string, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await socketListening(file, 500)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

export async function reloadService(host: SystemHost, target: ReloadTarget): Promise<void> {
  if (target === 'systemd-resolved') {
    const socket = host.at(RESOLVED_SOCKET);
    const wasRunning = await socketListening(socket);
    // resolved 253+ reloads on SIGHUP; 252 (Debian 12) has no reload and is
    // restarted. try-: does nothing when it isn't running (at boot, a
    // replayed journal finds it not started yet, and it reads the restored
    // files when it starts).
    const r = await host.run(['systemctl', 'try-reload-or-restart', 'systemd-resolved.service'], 30_000);
    if (r.code !== 0) {
      throw new SystemDnsError(
        'SYSDNS_APPLY_FAILED',
        `could not reload systemd-resolved (systemctl ${r.missing ? 'not found' : `said: ${r.stderr.trim() || `exit ${String(r.code)}`}`}): run "systemctl restart systemd-resolved" by hand`,
      );
    }
    if (wasRunning && !(await waitListening(socket, 10_000))) {
      throw new SystemDnsError('SYSDNS_APPLY_FAILED', 'systemd-resolved did not come back within 10 s after the reload: check "systemctl status systemd-resolved"');
    }
    // Answers cached from before the switch would otherwise still come from the old servers.
    await host.run(['resolvectl', 'flush-caches'], 5000);
    return;
  }
  const nm = await host.run(['nmcli', 'general', 'reload'], 15_000);
  if (nm.code === 0) return;
  const sc = await host.run(['systemctl', 'reload', 'NetworkManager.service'], 15_000);
  if (sc.code !== 0) {
    throw new SystemDnsError('SYSDNS_APPLY_FAILED', `could not reload NetworkManager (nmcli: ${nm.stderr.trim() || 'failed'}; systemctl: ${sc.stderr.trim() || 'failed'}): run "systemctl reload NetworkManager" by hand`);
  }
}
