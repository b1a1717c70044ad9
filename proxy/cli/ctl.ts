/**
 * `dotstub ctl`: drive the installed dotstub service over its control
 * socket, without sudo, as a member of the dotstub group. Exit codes: 0 done,
 * 1 the service refused or can't be reached (the message says what to do),
 * 2 bad usage.
 */
import { parseArgs } from 'node:util';
import type { ApiError, StatusView, SystemDnsView } from '../control/api-types.js';
import { API, endpointPath, type Endpoint, type RequestOf, type ResponseOf } from '../control/api-client/endpoints.js';
import { DEFAULT_CONTROL_SOCKET, SocketAccessError, socketRequest, type SocketAnswer, type SocketPlace } from '../control/socket-access.js';
import { clockHhmm, leakLines, type RunningLeaks } from '../network/leak-words.js';
import { PAUSED_WORDS, PRIVACY_WORDS } from '../privacy/privacy-words.js';

export const CTL_HELP = `dotstub ctl: control the dotstub service on this machine, without sudo.

Usage: dotstub ctl status                 private DNS on, paused or off, and why; the state in the
                                          dashboard's words; the resolver; whether lookups can go
                                          around dotstub (the leak watch's reading)
       dotstub ctl enable                 point this machine's DNS at dotstub
       dotstub ctl disable                give the machine its old DNS back (ends a pause too)
       dotstub ctl pause [DURATION]       the old DNS for a while (default 5m; 30s, 10m, 1h, up to 24h),
                                          then private DNS again by itself
       dotstub ctl resume                 end a pause now
       dotstub ctl use RESOLVER [--anyway]
                                          switch resolver (an id or a name status lists, e.g. quad9);
                                          it is asked first (about a second), and a resolver that
                                          doesn't answer is not switched to (exit 1) unless --anyway
       dotstub ctl dashboard              print the browser dashboard's link (it holds the access token)
       dotstub ctl local-names [allow|deny]
                                          this network's own names (printer.lan, a VPN's intranet) and where
                                          they go; allow: to the network's own resolver, unencrypted; deny: never
                                          (remembered for this network)

  --socket PATH   the service's control socket (default $DOTSTUB_CONTROL_SOCKET or ${DEFAULT_CONTROL_SOCKET})
  --anyway        use: switch even when the resolver doesn't answer (lookups then fail until it does)
  --json          print the API's answer as JSON (use: {"probe": …, "status": …}, the probe's and the switch's)

Who may: root and members of the dotstub group (the socket is _dotstub:dotstub 0660).
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

/** The system-DNS takeover in the dashboard's words (renderer/src/lib/system-dns.ts): on, paused until when and how to end it, or off. */
function systemDnsLine(v: SystemDnsView): string {
  if (v.inForce) return `private DNS: on — ${v.reason}`;
  if (v.pausedUntil !== null) {
    return `private DNS: paused until ${clockHhmm(v.pausedUntil)} — this machine asks its usual resolver, unencrypted, until then; then private DNS comes back by itself. To turn it back on now: dotstub ctl resume`;
  }
  return `private DNS: off — ${v.reason}`;
}

/** The proxy's phrases as a sentence, as the dashboard's banner shows them. */
function sentence(text: string): string {
  const t = text.trim();
  if (t === '') return '';
  const s = `${t[0]?.toUpperCase() ?? ''}${t.slice(1)}`;
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/** A resolver as typed back to the shell: quoted when it has a space. */
function shellWord(w: string): string {
  return /^[\w.:@%+-]+$/.test(w) ? w : `"${w.replace(/(["\\$`])/g, '\\$1')}"`;
}

function msText(ms: number): string {
  return ms < 10 ? ms.toFixed(1) : String(Math.round(ms));
}

/**
 * Asks the dotstub service (its control socket: $DOTSTUB_CONTROL_SOCKET, or
 * the default when the system itself is the one looked at) for its leak
 * watch's view. A copy of the system files (--root) is not what the service
 * watches: then it is asked only when the socket is named.
 */
export async function runningLeaks(root: string, env: NodeJS.ProcessEnv = process.env): Promise<RunningLeaks | null> {
  const socketPath = env.DOTSTUB_CONTROL_SOCKET ?? (root === '/' ? DEFAULT_CONTROL_SOCKET : null);
  if (socketPath === null) return null;
  try {
    const a = await socketRequest({ socketPath }, API.status.method, API.status.path, undefined, 3000);
    if (a.status !== 200) return { unreachable: `the dotstub on ${socketPath} answered ${a.status}` };
    return { leaks: (a.body as Partial<StatusView> | undefined)?.leaks };
  } catch (e) {
    if (e instanceof SocketAccessError && e.kind === 'denied') return { unreachable: `the dotstub on ${socketPath} could not be asked: ${e.short}` };
    return { unreachable: `no dotstub answered on ${socketPath}` };
  }
}

export async function runCtl(argv: readonly string[], options: CtlOptions = {}): Promise<number> {
  const out = options.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const err = options.err ?? ((l: string) => process.stderr.write(`dotstub ctl: ${l}\n`));
  const env = options.env ?? process.env;
  let values: { socket?: string; json?: boolean; anyway?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      options: { socket: { type: 'string' }, json: { type: 'boolean' }, anyway: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
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
  /** One call of an endpoint of the API's table (control/api-client/endpoints.ts), with its body when it takes one. */
  const call = async <E extends Endpoint>(endpoint: E, ...body: RequestOf<E> extends undefined ? [] : [RequestOf<E>]): Promise<ResponseOf<E>> => {
    const a = await socketRequest(place, endpoint.method, endpointPath(endpoint), body[0]);
    if (a.status < 200 || a.status >= 300) throw new Refused(apiMessage(a));
    return a.body as ResponseOf<E>;
  };
  const show = (v: unknown, line: string): void => out(values.json ? JSON.stringify(v, null, 2) : line);
  const [command, ...rest] = positionals;
  const want = (n: number): void => {
    if (rest.length > n) throw new Usage(`${command ?? ''}: unexpected ${rest.slice(n).join(' ')}. See dotstub ctl --help.`);
  };
  try {
    if (values.anyway && command !== 'use') throw new Usage('--anyway goes with use');
    switch (command) {
      case 'status': {
        want(0);
        const status = await call(API.status);
        // A dotstub started without --system-dns doesn't manage the machine's DNS (404): said, not an error.
        const sysAnswer = await socketRequest(place, API.systemDns.method, API.systemDns.path);
        const sys = sysAnswer.status === 200 ? (sysAnswer.body as SystemDnsView) : null;
        const list = await call(API.resolvers);
        if (values.json) out(JSON.stringify({ status, systemDns: sys, resolvers: list }, null, 2));
        else {
          out(sys ? systemDnsLine(sys) : `private DNS: this dotstub doesn't manage the machine's DNS (it answers programs that ask it, on ${status.listen.join(', ')})`);
          // The words the dashboard's banner and the tray use (privacy/privacy-words.ts), a pause included.
          const paused = status.state === 'off' && sys?.pausedUntil != null;
          const words = paused ? PAUSED_WORDS : (PRIVACY_WORDS[status.state] ?? PRIVACY_WORDS.off);
          // The proxy's reason, unless the line above said it (off while the takeover isn't in force) or a pause (the line above says when it ends).
          const reason = paused || status.reason === sys?.reason ? '' : sentence(status.reason);
          out(`state: ${words.title}${reason ? `. ${reason}` : ''}`);
          out(`resolver: ${status.resolver.label} (${status.resolver.id})`);
          // The leak watch's measurement (network/leak-watch.ts), never a default.
          for (const l of leakLines(status.leaks)) out(`leaks: ${l}`);
          out(`resolvers: ${list.resolvers.map((r) => r.id).join(', ')} (dotstub ctl use ID)`);
        }
        return 0;
      }
      case 'enable':
      case 'resume': {
        want(0);
        const now = await call(API.systemDns);
        const v = now.enabled && now.pausedUntil === null ? now : await call(API.setSystemDns, { enabled: true });
        show(v, systemDnsLine(v));
        return 0;
      }
      case 'disable': {
        want(0);
        const now = await call(API.systemDns);
        // Paused is not off: the pause would bring private DNS back by itself, so disabling ends it.
        const v = !now.enabled && now.pausedUntil === null ? now : await call(API.setSystemDns, { enabled: false });
        show(v, systemDnsLine(v));
        return 0;
      }
      case 'pause': {
        want(1);
        const seconds = parseDuration(rest[0] ?? '5m');
        const v = await call(API.setSystemDns, { enabled: false, pauseSeconds: seconds });
        show(v, systemDnsLine(v));
        return 0;
      }
      case 'use': {
        want(1);
        const wanted = rest[0];
        if (wanted === undefined) throw new Usage('use: which resolver? e.g. dotstub ctl use quad9 (dotstub ctl status lists them)');
        const list = await call(API.resolvers);
        const w = wanted.toLowerCase();
        const found =
          list.resolvers.find((r) => r.id.toLowerCase() === w) ??
          list.resolvers.find((r) => r.id.toLowerCase() === `preset:${w}`) ??
          list.resolvers.filter((r) => r.label.toLowerCase() === w || r.label.toLowerCase().startsWith(w)).at(0);
        if (!found) throw new Refused(`no resolver "${wanted}"; choose one of: ${list.resolvers.map((r) => r.id).join(', ')}`);
        const named = `resolver: ${found.label} (${found.id})`;
        if (found.id === list.active) {
          show({ probe: null, status: await call(API.status) }, `${named} — already in use`);
          return 0;
        }
        // As the dashboard does (control/switch-probe.ts): asked first, so a switch to a resolver that doesn't answer is a refusal, not a half success.
        const probe = await call(API.probeResolver, { id: found.id });
        if (!probe.ok && !values.anyway) {
          const from = list.resolvers.find((r) => r.id === list.active)?.label ?? 'the resolver in use';
          throw new Refused(`${found.label} didn’t answer (${probe.why ?? 'no answer'}). Nothing was changed: ${from} still answers your lookups. To switch anyway: dotstub ctl use ${shellWord(wanted)} --anyway`);
        }
        const status = await call(API.switchResolver, { id: found.id });
        const figure = !probe.probed
          ? 'not asked first (this dotstub measures only resolvers on this machine)'
          : probe.ok
            ? `answered in ${msText(probe.ms ?? 0)} ms just before the switch`
            : `it didn’t answer (${probe.why ?? 'no answer'}); switched anyway: lookups fail until it answers`;
        show({ probe, status }, `${named} — ${figure}`);
        return 0;
      }
      case 'local-names': {
        want(1);
        const choice = rest[0];
        if (choice !== undefined && choice !== 'allow' && choice !== 'deny') throw new Usage(`local-names ${choice}: allow or deny`);
        const v =
          choice === undefined
            ? await call(API.localNames)
            : await call(API.setLocalNames, { allow: choice === 'allow' });
        // The dashboard's words (renderer/src/components/LocalNames.tsx).
        const words = {
          allow: 'sent to this network’s own resolver, unencrypted, as your computer did before dotstub',
          deny: 'never sent: they get an error here, and nothing about them leaves this machine',
          ask: 'not decided for this network yet: in strict mode they get an error until you allow them; in opportunistic mode they go to the network’s resolver',
        };
        const owned = v.owners.map((o) => `  ${o.suffix} → ${o.servers.join(', ') || 'no resolver'} (${o.link}; from ${o.source})`);
        show(v, [`local names on this network: ${words[v.policy]}${v.remembered ? ' (remembered for this network)' : ''}`, ...owned].join('\n'));
        return 0;
      }
      case 'dashboard': {
        want(0);
        const link = await call(API.dashboardLink);
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
