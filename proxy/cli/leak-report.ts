/**
 * The leak line of `dotstub system-dns status`, wired into the system-DNS
 * command from here (system-dns/ takes the network's facts from no one:
 * this layer reads them and asks the running dotstub).
 */
import { readBypassPaths } from '../network/leak-watch.js';
import { leakLines, readingLines, type RunningLeaks } from '../network/leak-words.js';
import type { NetworkServer } from '../network/network-resolver.js';
import { systemHost } from '../system-dns/host.js';
import { runningLeaks } from './ctl.js';

/**
 * The leak line of `status`: the running dotstub's leak watch (a
 * measurement, with since when), and when there is none, or it measured
 * nothing, one reading of the system's DNS settings now, said as one.
 * Returns whether anything was measured.
 */
export async function leakReport(root: string, port: number, out: (l: string) => void, ask: (root: string) => Promise<RunningLeaks | null> = runningLeaks): Promise<boolean> {
  const host = systemHost(root);
  const running = await ask(root);
  if (running !== null && 'leaks' in running) {
    for (const l of leakLines(running.leaks)) out(`leaks (the running dotstub's watch): ${l}`);
    if (running.leaks?.measured) return true;
  }
  // dotstub answers at 127.0.0.1 (or ::1) on its port; a copy of the system files (--root) is all a test root shows: this machine's resolved is not asked.
  const ours = (s: NetworkServer): boolean => (s.host === '127.0.0.1' || s.host === '::1') && s.port === port;
  const reading = await readBypassPaths({ resolvConf: host.at('/etc/resolv.conf') }, ours, host.root === '/' ? undefined : () => Promise.resolve(null)).catch(
    (err: unknown) => ({ ok: false as const, why: `reading the system's DNS settings failed (${err instanceof Error ? err.message : String(err)})` }),
  );
  const why = running === null ? '' : 'unreachable' in running ? `: ${running.unreachable}` : '';
  for (const l of readingLines(reading)) out(`leaks (one reading now, not a watch${why}): ${l}`);
  return reading.ok;
}
