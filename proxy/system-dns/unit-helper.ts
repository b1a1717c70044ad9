/**
 * The service's way to change the machine's DNS without root: the proxy
 * runs as its own system user, and asks systemd to run one of two root
 * units whose command lines are fixed (packaging/dotstub-enable.service,
 * packaging/dotstub-disable.service). polkit lets the service's user do
 * exactly these two things (packaging/50-dotstub.rules); the request
 * carries no data, so a compromised proxy can at most turn private DNS on
 * or off.
 *
 * Invariant: each call returns when the unit has finished (systemctl waits
 * for a oneshot's start job), and throws when it failed, with what to do.
 */
import { SystemDnsError } from './errors.js';
import type { SystemHost } from './host.js';

/** What the proxy asks of the root part. */
export interface PrivilegedHelper {
  /** Point the system at this dotstub (the root part's enable, with its watchdog). */
  enable(): Promise<void>;
  /** Give the old DNS back. */
  disable(): Promise<void>;
}

const ENABLE_UNIT = 'dotstub-enable.service';
const DISABLE_UNIT = 'dotstub-disable.service';

export function unitHelper(host: SystemHost): PrivilegedHelper {
  const run = async (verb: 'restart' | 'start', unit: string, what: string): Promise<void> => {
    // Bounded by the units' TimeoutStartSec (30 s) plus systemctl's own start.
    const r = await host.run(['systemctl', verb, unit], 40_000);
    if (r.code === 0) return;
    const said = r.missing ? 'systemctl is not installed' : r.stderr.trim() || `exit ${String(r.code)}`;
    throw new SystemDnsError(
      r.stderr.includes('Access denied') || r.stderr.includes('authentication') ? 'SYSDNS_NEEDS_ROOT' : 'SYSDNS_APPLY_FAILED',
      `could not ${what}: systemctl ${verb} ${unit} said: ${said}. An administrator sees why with "journalctl -u ${unit}"; the dotstub package's polkit rule (/usr/share/polkit-1/rules.d/50-dotstub.rules) must be installed, and polkit running`,
    );
  };
  return {
    enable: () => run('restart', ENABLE_UNIT, "point this machine's DNS at dotstub"),
    disable: () => run('start', DISABLE_UNIT, 'give this machine its old DNS back'),
  };
}
