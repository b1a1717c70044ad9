/**
 * Plain /etc/resolv.conf: glibc (and most resolvers that read the file) ask
 * the servers it lists. The takeover replaces it with one naming only
 * 127.0.0.1; the journal keeps the original bytes, or the symlink and its
 * target, to put back.
 */
import fs from 'node:fs';
import type { Backend, Detection, Target } from './backend.js';
import { SystemDnsError } from './errors.js';
import { fileState, readState, type FileState } from './file-state.js';
import type { SystemHost } from './host.js';
import path from 'node:path';
import { foreignNameservers, MANAGED_MARKER, parseResolvConf, renderStubResolvConf, searchDomains, STUB_ADDRESSES } from './resolv-conf.js';
import type { Step } from './steps.js';

export const RESOLV_CONF = '/etc/resolv.conf';
/** resolvconf's per-interface records (`resolvconf -a tun0`: a VPN's hook, wg-quick). */
export const RESOLVCONF_RECORDS = '/run/resolvconf/interface';

/** Links resolvconf puts first (its interface-order: VPNs and tunnels before the LAN). */
const TUNNEL = /^(tun|tap|wg|vpn|ppp|tailscale|nebula)/;

/**
 * The search domains of the links registered with resolvconf, tunnels first,
 * then by name: what resolvconf itself would put in its search line. While
 * dotstub holds resolv.conf, resolvconf's own file is not the one glibc
 * reads, so the stub's search line carries these (a VPN's short names).
 */
export function resolvconfSearch(host: SystemHost): string[] {
  const dir = host.at(RESOLVCONF_RECORDS);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return []; // no resolvconf here
  }
  names.sort((a, b) => Number(TUNNEL.test(b)) - Number(TUNNEL.test(a)) || a.localeCompare(b));
  return names.flatMap((name) => {
    try {
      return searchDomains(parseResolvConf(fs.readFileSync(path.join(dir, name), 'utf8')));
    } catch {
      return [];
    }
  });
}

/** The text glibc reads (through a symlink if it is one), or undefined when there is none. */
export function readResolvText(host: SystemHost): string | undefined {
  try {
    return fs.readFileSync(host.at(RESOLV_CONF), 'utf8');
  } catch {
    return undefined;
  }
}

export function describeResolvConf(host: SystemHost): string {
  const state = readState(host.at(RESOLV_CONF));
  const text = readResolvText(host);
  const servers = text === undefined ? [] : parseResolvConf(text).nameservers;
  const list = servers.length ? `nameserver ${servers.join(', ')}` : 'no nameserver lines';
  if (state.type === 'symlink') return `${RESOLV_CONF} → ${state.target} (${text === undefined ? 'dangling' : list})`;
  if (state.type === 'absent') return `${RESOLV_CONF} does not exist`;
  return `${RESOLV_CONF} is a file (${list})`;
}

/** The resolv.conf step shared by this backend and NetworkManager's. */
export function resolvConfStep(host: SystemHost, target: Target, backend: string): Step {
  if (target.port !== 53) {
    throw new SystemDnsError(
      'SYSDNS_BACKEND_UNAVAILABLE',
      `the ${backend} backend needs dotstub on 127.0.0.1:53 (resolv.conf has no port; you asked for ${target.port}): run dotstub on port 53 (the service has the capability), or use systemd-resolved, which takes a port`,
    );
  }
  const file = host.at(RESOLV_CONF);
  const before: FileState = readState(file);
  const text = readResolvText(host);
  if (text?.includes(MANAGED_MARKER)) {
    // Recording our own file as "the original" would make a restore put back
    // a resolv.conf pointing at a dotstub that may not be running.
    throw new SystemDnsError(
      'SYSDNS_JOURNAL',
      `${RESOLV_CONF} was written by dotstub, but no journal records what it replaced: put your own resolv.conf back (or run your network manager's reconnect), then enable again`,
    );
  }
  const after = fileState(renderStubResolvConf(parseResolvConf(text ?? ''), resolvconfSearch(host)), 0o644);
  return { kind: 'file', path: file, before, after, why: 'send every lookup to dotstub at 127.0.0.1:53, no other nameserver' };
}

export function resolvConfLeaks(host: SystemHost): string[] {
  const text = readResolvText(host);
  if (text === undefined) return [];
  return foreignNameservers(parseResolvConf(text)).map((n) => `${RESOLV_CONF} still names nameserver ${n}: programs that read it may ask ${n} directly`);
}

export class ResolvConfBackend implements Backend {
  readonly name = 'resolv.conf' as const;
  readonly #host: SystemHost;

  constructor(host: SystemHost) {
    this.#host = host;
  }

  async detect(): Promise<Detection> {
    const state = readState(this.#host.at(RESOLV_CONF));
    if (state.type === 'absent') return { usable: true, why: `${RESOLV_CONF} does not exist yet; dotstub would create it` };
    return { usable: true, why: `${describeResolvConf(this.#host)}: glibc reads it directly` };
  }

  async describeCurrent(): Promise<string[]> {
    return [describeResolvConf(this.#host)];
  }

  async plan(target: Target): Promise<Step[]> {
    return [resolvConfStep(this.#host, target, this.name)];
  }

  async inForce(_target: Target): Promise<{ inForce: boolean; why: string }> {
    const text = readResolvText(this.#host);
    const servers = text === undefined ? [] : parseResolvConf(text).nameservers;
    const ours = servers.length > 0 && servers.every((s) => STUB_ADDRESSES.has(s));
    return ours
      ? { inForce: true, why: `${RESOLV_CONF} names only ${servers.join(', ')}` }
      : { inForce: false, why: `${RESOLV_CONF} names ${servers.length ? servers.join(', ') : 'no nameserver'}` };
  }

  async leaks(_target: Target): Promise<string[]> {
    return resolvConfLeaks(this.#host);
  }
}
