/**
 * `dotstub ctl`: drive the installed dotstub service over its control
 * socket, without sudo, as a member of the dotstub group. Exit codes: 0 done,
 * 1 the service refused or can't be reached (the message says what to do),
 * 2 bad usage.
 */
import { parseArgs } from 'node:util';
import type { ApiError, DashboardLinkView, LocalNamesView, ResolversView, StatusView, SystemDnsView } from '../control/api-types.js';
import { DEFAULT_CONTROL_SOCKET, SocketAccessError, socketRequest, type SocketAnswer, type SocketPlace } from '../control/socket-access.js';

export const CTL_HELP = `dotstub ctl: control the dotstub service on this machine, without sudo.

Usage: dotstub ctl status                 private DNS on or off, why, the resolver
       dotstub ctl enable                 point this machine's DNS at dotstub
       dotstub ctl disable                give the machine its old DNS back
       dotstub ctl pause [DURATION]       the old DNS for a while (default 5m; 30s, 10m, 1h, up to 24h),
                                          then private DNS again by itself
       dotstub ctl resume                 end a pause now
       dotstub ctl use RESOLVER           switch resolver (an id or a name status lists, e.g. quad9)
       dotstub ctl dashboard              print the browser dashboard's link (it holds the access token)
       dotstub ctl local-names [allow|deny]
                                          this network's own names (printer.lan, a VPN's intranet) and where
                                          they go; allow: to the network's own resolver, unencrypted; deny: never
                                          (remembered for this network)

  --socket PATH   the service's control socket (default $DOTSTUB_CONTROL_SOCKET or ${DEFAULT_CONTROL_SOCKET})
  --json          print the API's answer as JSON

Who may: root and members of the dotstub group (the socket is root:dotstub 0660).
An administrator adds a user with: sudo adduser USER dotstub (then log in again).
`;

export interface CtlOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly out?: (line: string) => void;
  readonly err?: (line: string) => void;
  /** Unit files that mean "installed" (tests). */
  readonly unitFiles?: readonly string[];
}

class Usage extends Error {}
class Refused extends Error {}

/** "5m" → 300; a bare number is minutes. Throws Usage outside 1 s..24 h. */
export function parseDuration(text: string): number {
  const m = /^(\d+)(s|m|h)?$/.exec(text.trim());
  if (!m) throw new Usage(`pause ${text}: give a duration like 30s, 5m or 1h`);
  const seconds = Number(m[1]) * ({ s: 1, m: 60, h: 3600 }[(m[2] ?? 'm') as 's' | 'm' | 'h']);
  if (seconds < 1 || seconds > 86_400) throw new Usage(`pause ${text}: from 1s to 24h`);
  return seconds;
}

function apiMessage(a: SocketAnswer): string {
  const e = (a.body as Partial<ApiError> | undefined)?.error;
  if (!e || typeof e.message !== 'string') return `the service answered ${a.status}`;
  // What happened, then what to do (error-codes.ts), and the code for scripts and bug reports.
  return `${e.message}${typeof e.hint === 'string' ? `${/[.?!]$/.test(e.message) ? '' : '.'} ${e.hint}` : ''} (${e.code})`;
}

function until(ms: number): string {
  return new Date(ms).toLocaleTimeString('en-GB').slice(0, 5);
}

export async function runCtl(argv: readonly string[], options: CtlOptions = {}): Promise<number> {
  const out = options.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const err = options.err ?? ((l: string) => process.stderr.write(`dotstub ctl: ${l}\n`));
  const env = options.env ?? process.env;
  let values: { socket?: string; json?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      options: { socket: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    }));
  } catch (e) {
    err(`${(e as Error).message}. See dotstub ctl --help.`);
    return 2;
  }
  if (values.help || positionals.length === 0) {
    (values.help ? out : err)(CTL_HELP.trimEnd());
    return values.help ? 0 : 2;
  }
  const place: SocketPlace = {
    socketPath: values.socket ?? env.DOTSTUB_CONTROL_SOCKET ?? DEFAULT_CONTROL_SOCKET,
    ...(options.unitFiles ? { unitFiles: options.unitFiles } : {}),
  };
  const call = async <T>(method: 'GET' | 'PUT', pathname: string, body?: unknown): Promise<T> => {
    const a = await socketRequest(place, method, pathname, body);
    if (a.status < 200 || a.status >= 300) throw new Refused(apiMessage(a));
    return a.body as T;
  };
  const show = (v: unknown, line: string): void => out(values.json ? JSON.stringify(v, null, 2) : line);
  const systemDnsLine = (v: SystemDnsView): string => `private DNS: ${v.inForce ? 'on' : 'off'} — ${v.reason}`;
  const [command, ...rest] = positionals;
  const want = (n: number): void => {
    if (rest.length > n) throw new Usage(`${command ?? ''}: unexpected ${rest.slice(n).join(' ')}. See dotstub ctl --help.`);
  };
  try {
    switch (command) {
      case 'status': {
        want(0);
        const status = await call<StatusView>('GET', '/api/status');
        // A dotstub started without --system-dns doesn't manage the machine's DNS (404): said, not an error.
        const sysAnswer = await socketRequest(place, 'GET', '/api/system-dns');
        const sys = sysAnswer.status === 200 ? (sysAnswer.body as SystemDnsView) : null;
        const list = await call<ResolversView>('GET', '/api/resolvers');
        if (values.json) out(JSON.stringify({ status, systemDns: sys, resolvers: list }, null, 2));
        else {
          out(sys ? systemDnsLine(sys) : "private DNS: off — this dotstub doesn't manage the machine's DNS");
          out(`state: ${status.state} — ${status.reason}`);
          out(`resolver: ${status.resolver.label} (${status.resolver.id})`);
          if (sys?.pausedUntil != null) out(`paused until ${until(sys.pausedUntil)}`);
          out(`resolvers: ${list.resolvers.map((r) => r.id).join(', ')} (dotstub ctl use ID)`);
        }
        return 0;
      }
      case 'enable':
      case 'resume': {
        want(0);
        const now = await call<SystemDnsView>('GET', '/api/system-dns');
        const v = now.enabled && now.pausedUntil === null ? now : await call<SystemDnsView>('PUT', '/api/system-dns', { enabled: true });
        show(v, systemDnsLine(v));
        return 0;
      }
      case 'disable': {
        want(0);
        const now = await call<SystemDnsView>('GET', '/api/system-dns');
        const v = !now.enabled ? now : await call<SystemDnsView>('PUT', '/api/system-dns', { enabled: false });
        show(v, systemDnsLine(v));
        return 0;
      }
      case 'pause': {
        want(1);
        const seconds = parseDuration(rest[0] ?? '5m');
        const v = await call<SystemDnsView>('PUT', '/api/system-dns', { enabled: false, pauseSeconds: seconds });
        show(v, systemDnsLine(v));
        return 0;
      }
      case 'use': {
        want(1);
        const wanted = rest[0];
        if (wanted === undefined) throw new Usage('use: which resolver? e.g. dotstub ctl use quad9 (dotstub ctl status lists them)');
        const list = await call<ResolversView>('GET', '/api/resolvers');
        const w = wanted.toLowerCase();
        const found =
          list.resolvers.find((r) => r.id.toLowerCase() === w) ??
          list.resolvers.find((r) => r.id.toLowerCase() === `preset:${w}`) ??
          list.resolvers.filter((r) => r.label.toLowerCase() === w || r.label.toLowerCase().startsWith(w)).at(0);
        if (!found) throw new Refused(`no resolver "${wanted}"; choose one of: ${list.resolvers.map((r) => r.id).join(', ')}`);
        const status = await call<StatusView>('PUT', '/api/resolvers/active', { id: found.id });
        show(status, `resolver: ${found.label} (${found.id})`);
        return 0;
      }
      case 'local-names': {
        want(1);
        const choice = rest[0];
        if (choice !== undefined && choice !== 'allow' && choice !== 'deny') throw new Usage(`local-names ${choice}: allow or deny`);
        const v =
          choice === undefined
            ? await call<LocalNamesView>('GET', '/api/network/local-names')
            : await call<LocalNamesView>('PUT', '/api/network/local-names', { allow: choice === 'allow' });
        const words = { allow: 'sent to the network’s own resolver, unencrypted', deny: 'never sent (answered with an error here)', ask: 'not decided for this network (strict mode refuses them until you allow them)' };
        const owned = v.owners.map((o) => `  ${o.suffix} → ${o.servers.join(', ') || 'no resolver'} (${o.link}; from ${o.source})`);
        show(v, [`local names on this network: ${words[v.policy]}${v.remembered ? ' (remembered for this network)' : ''}`, ...owned].join('\n'));
        return 0;
      }
      case 'dashboard': {
        want(0);
        const link = await call<DashboardLinkView>('GET', '/api/dashboard-link');
        show(link, link.url);
        return 0;
      }
      default:
        throw new Usage(`unknown command "${command ?? ''}". See dotstub ctl --help.`);
    }
  } catch (e) {
    if (e instanceof Usage) {
      err(e.message);
      return 2;
    }
    if (e instanceof Refused || e instanceof SocketAccessError) {
      err(e.message);
      return 1;
    }
    throw e;
  }
}
