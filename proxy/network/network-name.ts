/**
 * The network we're on, by the name its owner gave it, where the OS knows
 * one (issue 29: a remembered network was labelled "gateway 192.168.1.1",
 * which nobody recognises): NetworkManager's connection on the default
 * route's interface (for Wi-Fi, named after the SSID unless the user renamed
 * it), else iwd's connected network (the SSID). For the label only: the
 * network's key stays the hashed gateway MAC (network-key.ts), and
 * the name never leaves the machine.
 */
import fs from 'node:fs';
import { runCommand, type RunCommand } from './name-sources.js';

/** The default route's interface (/proc/net/route); null: none. */
export function defaultRouteInterface(routeFile = '/proc/net/route'): string | null {
  try {
    for (const l of fs.readFileSync(routeFile, 'utf8').split('\n').slice(1)) {
      const f = l.trim().split(/\s+/);
      if (f[1] === '00000000' && f[0]) return f[0];
    }
  } catch {
    // no routing table to read
  }
  return null;
}

/** At most this long: a label, not an essay (and what the memory file keeps). */
const MAX_NAME = 64;

/** Terminal colours out (iwctl colours its table): a name is shown as text, never as terminal codes. */
function plain(text: string): string {
  // eslint-disable-next-line no-control-regex -- the escape codes are exactly what is removed
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

function clean(name: string | undefined): string | null {
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  const text = plain(name ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return text === '' || text === '--' ? null : text.slice(0, MAX_NAME);
}

/** The network's name as NetworkManager or iwd knows it; null when neither runs or knows one. */
export async function networkName(run: RunCommand = runCommand, routeFile = '/proc/net/route'): Promise<string | null> {
  const dev = defaultRouteInterface(routeFile);
  if (dev === null) return null;
  // -g prints the value alone, terse: a colon or backslash in it comes escaped.
  const nm = clean((await run(['nmcli', '-g', 'GENERAL.CONNECTION', 'device', 'show', dev]))?.split('\n')[0]?.replace(/\\([:\\])/g, '$1'));
  if (nm !== null) return nm;
  const iwd = await run(['iwctl', 'station', dev, 'show']);
  return clean(/^\s*Connected network\s+(.+?)\s*$/m.exec(plain(iwd ?? ''))?.[1]);
}
