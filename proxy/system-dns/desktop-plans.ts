/**
 * macOS and Windows backends as plans: the commands they would run, built
 * from the outputs of the read commands. They run for real only on those
 * systems (the journal and restore are the same as on Linux: command steps
 * with their exact inverses); here they are tested against hand-written
 * samples (fixtures/): outputs written by us in each command's documented
 * format, not captured from a real Mac or PC (none is available here).
 *
 * The rule that peers break (Simple DNSCrypt #304, #465; NextDNS on both):
 * restore puts back what the user HAD — their manual servers, in order, per
 * family — and "DHCP" only where it was DHCP.
 */
import net from 'node:net';
import type { Target } from './backend.js';
import { SystemDnsError } from './errors.js';
import type { Step } from './steps.js';

function needPort53(target: Target, os: string): void {
  if (target.port !== 53) {
    throw new SystemDnsError('SYSDNS_BACKEND_UNAVAILABLE', `${os} has no port in its DNS server settings: dotstub must listen on 127.0.0.1:53 (you asked for ${target.port})`);
  }
}

// ---- macOS: networksetup per enabled service ----

export interface MacosRecorded {
  /** `networksetup -listallnetworkservices` */
  readonly listAllNetworkServices: string;
  /** service → `networksetup -getdnsservers SERVICE` */
  readonly getDnsServers: Readonly<Record<string, string>>;
}

/** Enabled services (a leading `*` marks a disabled one; the first line is a legend). */
function macosServices(list: string): string[] {
  return list
    .split('\n')
    .slice(1)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('*'));
}

/** The servers set by hand, or [] when none are (the service uses DHCP's). */
function macosManualServers(out: string): string[] {
  if (/There aren't any DNS Servers set/i.test(out)) return [];
  const servers = out.split('\n').map((l) => l.trim()).filter(Boolean);
  for (const s of servers) if (net.isIP(s) === 0) throw new SystemDnsError('SYSDNS_BACKEND_UNAVAILABLE', `unexpected networksetup output "${s}": not an address`);
  return servers;
}

export function macosPlan(rec: MacosRecorded, target: Target): Step[] {
  needPort53(target, 'macOS');
  const steps: Step[] = [];
  for (const svc of macosServices(rec.listAllNetworkServices)) {
    const out = rec.getDnsServers[svc];
    if (out === undefined) throw new SystemDnsError('SYSDNS_BACKEND_UNAVAILABLE', `no recorded DNS servers for "${svc}": read them before planning`);
    const manual = macosManualServers(out);
    steps.push({
      kind: 'command',
      run: ['networksetup', '-setdnsservers', svc, '127.0.0.1', '::1'],
      // "Empty" is networksetup's word for "back to the servers DHCP gives".
      undo: [['networksetup', '-setdnsservers', svc, ...(manual.length ? manual : ['Empty'])]],
      why: manual.length ? `${svc}: your manual servers ${manual.join(', ')} come back on restore` : `${svc}: uses DHCP's servers; back to DHCP on restore`,
    });
  }
  const flush = [['dscacheutil', '-flushcache'], ['killall', '-HUP', 'mDNSResponder']];
  steps.push({ kind: 'command', run: ['sh', '-c', 'dscacheutil -flushcache; killall -HUP mDNSResponder'], undo: flush, undoLast: true, why: 'forget answers cached from the old servers' });
  return steps;
}

// ---- Windows: per adapter, both families, plus an NRPT rule for "." ----

interface WindowsServerAddress {
  readonly InterfaceAlias: string;
  readonly InterfaceIndex: number;
  /** 2: IPv4, 23: IPv6 */
  readonly AddressFamily: number;
  readonly ServerAddresses: readonly string[];
}

export interface WindowsRecorded {
  /** `Get-DnsClientServerAddress | ConvertTo-Json` */
  readonly serverAddresses: readonly WindowsServerAddress[];
  /** interface index → static NameServer registry values (comma-separated; empty: from DHCP/RA). */
  readonly staticNameServers: Readonly<Record<string, { readonly v4: string; readonly v6: string }>>;
  /** `Get-DnsClientNrptRule | ConvertTo-Json` */
  readonly nrpt: readonly { readonly Namespace: readonly string[]; readonly NameServers: readonly string[]; readonly Comment?: string }[];
}

const NRPT_COMMENT = 'dotstub';

function ps(command: string): string[] {
  return ['powershell.exe', '-NoProfile', '-NonInteractive', '-Command', command];
}

function psList(addrs: readonly string[]): string {
  for (const a of addrs) if (net.isIP(a) === 0) throw new SystemDnsError('SYSDNS_BACKEND_UNAVAILABLE', `recorded server "${a}" is not an address`);
  return `(${addrs.map((a) => `'${a}'`).join(',')})`;
}

function split(v: string): string[] {
  return v.split(/[,\s]+/).filter(Boolean);
}

export function windowsPlan(rec: WindowsRecorded, target: Target): Step[] {
  needPort53(target, 'Windows');
  const steps: Step[] = [];
  const indexes = [...new Set(rec.serverAddresses.map((a) => a.InterfaceIndex))].filter((i) => i !== 1); // 1: loopback
  for (const index of indexes) {
    if (!Number.isInteger(index) || index < 1) throw new SystemDnsError('SYSDNS_BACKEND_UNAVAILABLE', `bad interface index ${String(index)}`);
    const alias = rec.serverAddresses.find((a) => a.InterfaceIndex === index)?.InterfaceAlias ?? String(index);
    const statics = rec.staticNameServers[String(index)];
    if (statics === undefined) throw new SystemDnsError('SYSDNS_BACKEND_UNAVAILABLE', `no recorded static/DHCP state for ${alias}: read it before planning`);
    const manual = [...split(statics.v4), ...split(statics.v6)];
    // Reset first (both families back to DHCP/RA), then the user's own
    // servers for the families that had them: a family that was DHCP stays DHCP.
    const undo = [ps(`Set-DnsClientServerAddress -InterfaceIndex ${index} -ResetServerAddresses`)];
    if (manual.length) undo.push(ps(`Set-DnsClientServerAddress -InterfaceIndex ${index} -ServerAddresses ${psList(manual)}`));
    steps.push({
      kind: 'command',
      run: ps(`Set-DnsClientServerAddress -InterfaceIndex ${index} -ServerAddresses ('127.0.0.1','::1')`),
      undo,
      why: manual.length ? `${alias}: your manual servers ${manual.join(', ')} come back on restore` : `${alias}: uses DHCP's servers; back to DHCP on restore`,
    });
  }
  // Windows 8+ asks every adapter's servers in parallel: without a rule for
  // "." one adapter left out (a VPN's, a new one) still gets every query.
  steps.push({
    kind: 'command',
    run: ps(`Add-DnsClientNrptRule -Namespace '.' -NameServers '127.0.0.1' -Comment '${NRPT_COMMENT}'`),
    undo: [ps(`Get-DnsClientNrptRule | Where-Object { $_.Comment -eq '${NRPT_COMMENT}' } | Remove-DnsClientNrptRule -Force`)],
    why: 'send every name to dotstub, whichever adapter Windows would ask',
  });
  steps.push({ kind: 'command', run: ['ipconfig', '/flushdns'], undo: [['ipconfig', '/flushdns']], undoLast: true, why: 'forget answers cached from the old servers' });
  return steps;
}

/** NRPT rules that send some names elsewhere than dotstub (more specific than ".", so they win). */
export function windowsNrptGaps(rec: WindowsRecorded): string[] {
  return rec.nrpt
    .filter((r) => r.Comment !== NRPT_COMMENT && !r.NameServers.every((s) => s === '127.0.0.1' || s === '::1'))
    .map((r) => `NRPT rule for ${r.Namespace.join(', ')} sends those names to ${r.NameServers.join(', ')}${r.Comment ? ` (${r.Comment})` : ''}, not to dotstub`);
}
