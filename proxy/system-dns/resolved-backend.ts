/**
 * systemd-resolved in stub mode (/etc/resolv.conf → stub-resolv.conf, or
 * `nameserver 127.0.0.53`): a global drop-in routes every domain (`~.`) to
 * dotstub. `DNS=` takes a port, so dotstub needs no privilege to bind 53.
 *
 * Why a drop-in and not per-link D-Bus settings: NetworkManager wipes
 * per-link settings on every reconnect (NextDNS #1108); the drop-in in /run
 * survives reconnects and is gone after a reboot, as a takeover should be.
 * Queries matching `~.` go only to scopes with `~.`, so links' DHCP servers
 * are not asked — unless a link carries `~.` too: that is a leak we report.
 *
 * With dotstub on port 53 (the service), /etc/resolv.conf is also pointed at
 * dotstub itself: behind resolved's stub, a name under a link's search
 * domain (NAME.lan, and a public name glibc glued `lan` onto after it
 * failed) goes to that link's server in cleartext, around dotstub, before
 * dotstub could judge it. dotstub learns the links' servers and domains from
 * resolved (network/name-sources.ts) and sends each link's names there
 * itself; resolved keeps serving its own API's clients through the drop-in.
 * The file keeps resolved's search list (and follows it: rewrite-watch.ts).
 */
import type { Backend, Detection, Target } from './backend.js';
import { fileState, readState } from './file-state.js';
import { socketListening, type SystemHost } from './host.js';
import { describeResolvConf, RESOLV_CONF, readResolvText, resolvConfStep } from './resolv-conf-backend.js';
import { parseResolvConf, RESOLVED_STUBS, STUB_ADDRESSES } from './resolv-conf.js';
import type { Step } from './steps.js';

export const DROP_IN = '/run/systemd/resolved.conf.d/50-dotstub.conf';
export const RESOLVED_SOCKET = '/run/systemd/resolve/io.systemd.Resolve';
const UPLINK = '/run/systemd/resolve/resolv.conf';

export function dropInText(port: number): string {
  return [
    '# Written by dotstub: every domain goes to dotstub on loopback.',
    '# Removed by `dotstub system-dns disable` or `restore`; /run is empty after a reboot.',
    '[Resolve]',
    `DNS=127.0.0.1:${port}`,
    'Domains=~.',
    // dotstub speaks plain DNS on loopback (it does the TLS): a global
    // DNSOverTLS=yes in the user's resolved.conf would otherwise fail every query.
    'DNSOverTLS=no',
    '',
  ].join('\n');
}

export type ResolvConfMode = 'stub' | 'uplink' | 'dotstub' | 'other';

export function resolvConfMode(host: SystemHost): ResolvConfMode {
  const state = readState(host.at(RESOLV_CONF));
  if (state.type === 'symlink') {
    if (state.target.endsWith('/systemd/resolve/stub-resolv.conf') || state.target.endsWith('/systemd/resolve/stub-resolv.conf'.slice(1))) return 'stub';
    if (state.target.endsWith(UPLINK) || state.target.endsWith(UPLINK.slice(1))) return 'uplink';
  }
  const text = readResolvText(host);
  const servers = text === undefined ? [] : parseResolvConf(text).nameservers;
  if (servers.length > 0 && servers.every((s) => RESOLVED_STUBS.has(s))) return 'stub';
  if (servers.length > 0 && servers.every((s) => STUB_ADDRESSES.has(s))) return 'dotstub';
  return 'other';
}

/** On port 53 glibc can be pointed at dotstub itself (see the header); resolv.conf has no port, so only there. */
const directToo = (target: Target): boolean => target.port === 53;

/** `resolvectl domain` lines → scope → domains. */
function parseResolvectlLines(out: string): { scope: string; values: string[] }[] {
  return out
    .split('\n')
    .map((l) => /^(Global|Link \d+ \([^)]*\)):\s*(.*)$/.exec(l.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ scope: m[1] as string, values: (m[2] as string).split(/\s+/).filter(Boolean) }));
}

/**
 * A server as any resolvectl prints it, as "ADDRESS:PORT" (port 53 when
 * none is printed): systemd 252 (Debian 12) prints `127.0.0.1` for
 * `DNS=127.0.0.1:53` and `127.0.0.1:5300` for another port; later versions
 * may print the port always, an interface (`%2`, `%eth0`) and a TLS server
 * name (`#dns.example`); IPv6 with a port is bracketed (`[::1]:53`).
 */
export function normalizeServer(printed: string): string | null {
  const s = printed.replace(/#.*$/, '');
  const v6 = /^\[([0-9A-Fa-f:.]+)\](?::(\d+))?(?:%\S*)?$/.exec(s) ?? /^([0-9A-Fa-f]*:[0-9A-Fa-f:.]*)(?:%\S*)?()$/.exec(s);
  if (v6) return `[${(v6[1] as string).toLowerCase()}]:${v6[2] || '53'}`;
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3})(?::(\d+))?(?:%\S*)?$/.exec(s);
  if (v4) return `${v4[1] as string}:${v4[2] ?? '53'}`;
  return null;
}

/** resolved's global DNS servers from `resolvectl dns` output, normalised ("127.0.0.1:53"). */
export function globalServers(resolvectlDns: string): string[] {
  const global = parseResolvectlLines(resolvectlDns).find((s) => s.scope === 'Global');
  return (global?.values ?? []).flatMap((v) => normalizeServer(v) ?? []);
}

/** resolved's global DNS servers now, read from resolved itself; null when it can't be asked. */
export async function resolvedGlobalServers(host: SystemHost): Promise<string[] | null> {
  const dns = await host.run(['resolvectl', 'dns'], 5000);
  return dns.code === 0 ? globalServers(dns.stdout) : null;
}

export class ResolvedBackend implements Backend {
  readonly name = 'systemd-resolved' as const;
  readonly #host: SystemHost;

  constructor(host: SystemHost) {
    this.#host = host;
  }

  running(): Promise<boolean> {
    return socketListening(this.#host.at(RESOLVED_SOCKET));
  }

  async detect(): Promise<Detection> {
    const mode = resolvConfMode(this.#host);
    const running = await this.running();
    const conf = describeResolvConf(this.#host);
    if (mode === 'uplink') {
      return { usable: false, why: `${conf}: "uplink" mode, programs ask the network's servers directly and bypass resolved` };
    }
    if (mode !== 'stub') return { usable: false, why: `${conf}: not resolved's stub` };
    // Tailscale #2136: resolv.conf says resolved, but resolved isn't running.
    if (!running) return { usable: false, why: `${conf} points at resolved's stub, but resolved is not running (nothing listens on ${RESOLVED_SOCKET})` };
    return { usable: true, why: `${conf} points at resolved's stub and resolved is running` };
  }

  async describeCurrent(): Promise<string[]> {
    const lines = [describeResolvConf(this.#host)];
    const dns = await this.#host.run(['resolvectl', 'dns'], 5000);
    if (dns.code === 0) lines.push(...dns.stdout.trim().split('\n').map((l) => `resolved DNS ${l.trim()}`));
    const dropIn = readState(this.#host.at(DROP_IN));
    lines.push(dropIn.type === 'absent' ? `no ${DROP_IN}` : `${DROP_IN} exists`);
    return lines;
  }

  async plan(target: Target): Promise<Step[]> {
    const file = this.#host.at(DROP_IN);
    return [
      { kind: 'file', path: file, before: readState(file), after: fileState(dropInText(target.port)), why: `route every domain (~.) to 127.0.0.1:${target.port}` },
      ...(directToo(target) ? [resolvConfStep(this.#host, target, this.name)] : []),
      { kind: 'reload', target: 'systemd-resolved', why: 'make resolved read the drop-in' },
    ];
  }

  async inForce(target: Target): Promise<{ inForce: boolean; why: string }> {
    const dropIn = readState(this.#host.at(DROP_IN));
    if (dropIn.type !== 'file' || Buffer.from(dropIn.base64, 'base64').toString() !== dropInText(target.port)) {
      return { inForce: false, why: `${DROP_IN} is not dotstub's (for port ${target.port})` };
    }
    const mode = resolvConfMode(this.#host);
    if (directToo(target) && mode !== 'dotstub') return { inForce: false, why: `${RESOLV_CONF} no longer names only dotstub` };
    if (!directToo(target) && mode !== 'stub') return { inForce: false, why: `${RESOLV_CONF} no longer points at resolved's stub` };
    if (!(await this.running())) return { inForce: false, why: 'resolved is not running' };
    // resolved's own state, not the file: the drop-in only counts once resolved has read it.
    const servers = await resolvedGlobalServers(this.#host);
    if (servers !== null && !servers.includes(`127.0.0.1:${target.port}`)) {
      return { inForce: false, why: `resolved has not loaded the drop-in (global DNS: ${servers.join(' ') || 'none'})` };
    }
    return { inForce: true, why: `resolved sends every domain to 127.0.0.1:${target.port}${directToo(target) ? `, and ${RESOLV_CONF} names dotstub itself` : ''}` };
  }

  async leaks(target: Target): Promise<string[]> {
    const leaks: string[] = [];
    const mode = resolvConfMode(this.#host);
    if (mode === 'uplink') leaks.push(`${RESOLV_CONF} is in "uplink" mode (→ ${UPLINK}): programs bypass resolved and dotstub`);
    else if (mode === 'other') leaks.push(`${RESOLV_CONF} does not point at resolved's stub: programs that read it bypass resolved`);
    else if (mode === 'stub' && directToo(target)) leaks.push(`${RESOLV_CONF} points at resolved's stub again: names under a link's search domain go to that link's server around dotstub`);
    const domains = await this.#host.run(['resolvectl', 'domain'], 5000);
    const dns = await this.#host.run(['resolvectl', 'dns'], 5000);
    if (domains.code === 0) {
      const servers = new Map(parseResolvectlLines(dns.code === 0 ? dns.stdout : '').map((s) => [s.scope, s.values]));
      for (const s of parseResolvectlLines(domains.stdout)) {
        if (s.scope !== 'Global' && s.values.includes('~.')) {
          leaks.push(`${s.scope} also routes every domain (~.) to its own servers (${servers.get(s.scope)?.join(' ') || 'none listed'}): some queries go there instead of dotstub`);
        }
      }
    } else if (!domains.missing) {
      leaks.push(`could not ask resolved for its links (resolvectl: ${domains.stderr.trim() || `exit ${String(domains.code)}`})`);
    }
    return leaks;
  }
}
