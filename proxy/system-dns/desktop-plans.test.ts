/**
 * macOS and Windows plans against hand-written sample outputs (fixtures/:
 * written in each read command's documented format — `networksetup
 * -listallnetworkservices` / `-getdnsservers`, PowerShell's
 * Get-DnsClientServerAddress, the adapters' static NameServer registry
 * values, Get-DnsClientNrptRule as JSON — never captured from a real
 * machine), run through the same
 * journal, enable and restore as Linux, on a model of each OS's settings
 * that the commands act on. What the user notices: their own manual servers
 * come back exactly (order, both families), DHCP stays DHCP, and the cache
 * flush runs after everything is back.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { Backend } from './backend.js';
import { macosPlan, windowsNrptGaps, windowsPlan, type MacosRecorded, type WindowsRecorded } from './desktop-plans.js';
import { systemHost, type RunResult, type SystemHost } from './host.js';
import type { Step } from './steps.js';
import { enable, restore } from './takeover.js';

const FIX = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures');
const fixture = (f: string): string => fs.readFileSync(path.join(FIX, f), 'utf8');

const MAC: MacosRecorded = {
  listAllNetworkServices: fixture('macos-listallnetworkservices.txt'),
  getDnsServers: JSON.parse(fixture('macos-getdnsservers.json')) as Record<string, string>,
};
const WIN: WindowsRecorded = {
  serverAddresses: JSON.parse(fixture('windows-dnsclientserveraddress.json')) as WindowsRecorded['serverAddresses'],
  staticNameServers: JSON.parse(fixture('windows-static-nameservers.json')) as WindowsRecorded['staticNameServers'],
  nrpt: JSON.parse(fixture('windows-nrpt.json')) as WindowsRecorded['nrpt'],
};

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function planBackend(name: 'macos' | 'windows', steps: Step[]): Backend {
  return { name, detect: async () => ({ usable: true, why: 'recorded' }), describeCurrent: async () => [], plan: async () => steps, inForce: async () => ({ inForce: true, why: '' }), leaks: async () => [] };
}

/** A host whose programs act on an in-memory model; `failOn` makes one command fail (a crash mid-enable). */
function modelHost(exec: (argv: readonly string[]) => boolean): { host: SystemHost; state: string; log: string[] } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-plans-'));
  dirs.push(root);
  const log: string[] = [];
  const run = async (argv: readonly string[]): Promise<RunResult> => {
    log.push(argv.join(' '));
    return exec(argv) ? { code: 0, stdout: '', stderr: '', missing: false } : { code: 1, stdout: '', stderr: 'failed', missing: false };
  };
  return { host: { ...systemHost(root), run }, state: path.join(root, 'state'), log };
}

describe('macOS plan (networksetup)', () => {
  test('enable points every enabled service at dotstub; restore gives back the manual servers in order and DHCP as DHCP; flush last', async () => {
    // The model: service → servers ([] = DHCP's).
    const dns = new Map<string, string[]>([['Wi-Fi', []], ['USB 10/100/1000 LAN', ['192.168.7.2', '2001:db8:7::2']], ['iPhone USB', []], ['Thunderbolt Bridge', []]]);
    const before = structuredClone([...dns]);
    const { host, state, log } = modelHost((argv) => {
      if (argv[0] === 'networksetup' && argv[1] === '-setdnsservers') {
        const rest = argv.slice(3);
        dns.set(argv[2] as string, rest[0] === 'Empty' ? [] : [...rest]);
      }
      return true;
    });
    const steps = macosPlan(MAC, { port: 53 });
    await enable({ host, stateDir: state }, { chosen: planBackend('macos', steps), why: '', all: [] }, { port: 53 }, process.pid);
    expect(dns.get('Wi-Fi')).toEqual(['127.0.0.1', '::1']);
    expect(dns.get('USB 10/100/1000 LAN')).toEqual(['127.0.0.1', '::1']);
    expect(dns.get('Thunderbolt Bridge')).toEqual([]); // disabled: untouched
    log.length = 0;
    await restore({ host, stateDir: state });
    expect([...dns]).toEqual(before);
    expect(log.slice(-2)).toEqual(['dscacheutil -flushcache', 'killall -HUP mDNSResponder']);
    expect(log).toContain('networksetup -setdnsservers USB 10/100/1000 LAN 192.168.7.2 2001:db8:7::2');
    expect(log).toContain('networksetup -setdnsservers Wi-Fi Empty');
  });

  test('a port other than 53 is refused before anything runs', () => {
    expect(() => macosPlan(MAC, { port: 5300 })).toThrow(/must listen on 127\.0\.0\.1:53/);
  });
});

describe('Windows plan (per adapter, both families, NRPT)', () => {
  test("enable sets every adapter and an NRPT rule for '.'; a failure mid-way restores what ran; the user's manual servers come back, DHCP stays DHCP", async () => {
    // The model: index → { static servers, or null for DHCP }, and NRPT rules by comment.
    const adapters = new Map<number, string[] | null>([[12, null], [7, ['9.9.9.9', '149.112.112.112', '2620:fe::fe']]]);
    const nrpt = new Set<string>(['VPN']);
    const before = structuredClone([...adapters]);
    let failFlush = true;
    const { host, state } = modelHost((argv) => {
      const cmd = argv[argv.length - 1] as string;
      if (argv[0] === 'ipconfig') return !failFlush;
      let m = /^Set-DnsClientServerAddress -InterfaceIndex (\d+) -ResetServerAddresses$/.exec(cmd);
      if (m) return adapters.set(Number(m[1]), null), true;
      m = /^Set-DnsClientServerAddress -InterfaceIndex (\d+) -ServerAddresses \((.*)\)$/.exec(cmd);
      if (m) return adapters.set(Number(m[1]), (m[2] as string).split(',').map((s) => s.replace(/'/g, ''))), true;
      if (cmd.startsWith('Add-DnsClientNrptRule')) return nrpt.add(/-Comment '([^']+)'/.exec(cmd)?.[1] as string), true;
      if (cmd.startsWith('Get-DnsClientNrptRule')) return nrpt.delete(/-eq '([^']+)'/.exec(cmd)?.[1] as string), true;
      return false;
    });
    const steps = windowsPlan(WIN, { port: 53 });
    const backend = planBackend('windows', steps);
    // The last step (flush) fails: everything before it must be undone.
    await expect(enable({ host, stateDir: state }, { chosen: backend, why: '', all: [] }, { port: 53 }, process.pid)).rejects.toMatchObject({ code: 'SYSDNS_APPLY_FAILED' });
    expect([...adapters]).toEqual(before);
    expect([...nrpt]).toEqual(['VPN']);

    failFlush = false;
    await enable({ host, stateDir: state }, { chosen: backend, why: '', all: [] }, { port: 53 }, process.pid);
    expect(adapters.get(7)).toEqual(['127.0.0.1', '::1']);
    expect(adapters.get(12)).toEqual(['127.0.0.1', '::1']);
    expect(adapters.has(1)).toBe(false); // loopback pseudo-interface never touched
    expect(nrpt.has('dotstub')).toBe(true);
    await restore({ host, stateDir: state });
    expect([...adapters]).toEqual(before);
    expect([...nrpt]).toEqual(['VPN']);
  });

  test('an NRPT rule that sends names elsewhere is reported as a gap', () => {
    expect(windowsNrptGaps(WIN)).toEqual(['NRPT rule for .corp.example sends those names to 10.1.1.1 (VPN), not to dotstub']);
  });
});
