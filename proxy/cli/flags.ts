/**
 * The `dotstub` command's flags: the help text, and argv → ParsedCli with
 * every value checked (ConfigError with a message that says what to give).
 *
 * Precedence, per field: an explicit flag (this run only, not saved) >
 * the config dir's settings.json / resolvers.json > built-in defaults
 * (run/run-config.ts combines them).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultConfigDir } from '../files/config-file.js';
import { parseResolverArg, PRESETS } from '../config/resolvers.js';
import type { RunFlags } from '../run/run-config.js';
import type { Settings } from '../run/settings.js';
import { DEFAULT_CONTROL_PORT, isLoopbackHost } from '../control/server.js';
import { ConfigError } from '../errors.js';
import { DEFAULT_LISTEN, parseListenArg } from '../listen/address.js';
import { parseServer } from '../network/network-resolver.js';
import { DEFAULT_POOL_OPTIONS } from '../upstream/pool/options.js';

export const HELP = `dotstub: private DNS for this machine.
Takes DNS on loopback (UDP and TCP) and forwards it over persistent,
pipelined DNS-over-TLS to the resolver you choose.

Usage: dotstub [options]
       dotstub system-dns enable|disable|status|restore [options]   (see dotstub system-dns --help)
       dotstub leak-test [options]                                   (see dotstub leak-test --help)
       dotstub ctl status|enable|disable|pause|resume|use|dashboard     (see dotstub ctl --help)

  --resolver R        ${Object.keys(PRESETS).join(' | ')}
                      or ADDRESS[:PORT][#AUTHNAME], e.g. 9.9.9.9:853#dns.quad9.net,
                      [2620:fe::fe]#dns.quad9.net; several addresses, comma-separated,
                      are raced IPv6 first (9.9.9.9,[2620:fe::fe]#dns.quad9.net)
                      (default: the resolver last chosen in the dashboard, else
                      quad9). Given here, it overrides the
                      saved choice for this run only.
  --doh URL           the resolver's DNS-over-HTTPS endpoint, e.g.
                      https://dns.quad9.net/dns-query: used only while port 853
                      is blocked, reached at the resolver's own addresses and
                      authenticated by the URL host's certificate (presets have
                      their operator's URL already; this replaces it)
  --listen ADDR       where to take DNS: 127.0.0.1:5300, [::1]:5300, :5300 (both
                      loopbacks); repeatable (default: 127.0.0.1:53 and [::1]:53)
  --strict            require an authenticated resolver (default): a certificate
                      valid for AUTHNAME, or a matching --pin; otherwise refuse
  --opportunistic     use TLS even if the certificate doesn't verify (recorded
                      as unverified); never falls back to cleartext
  --pin SPKI          base64 SHA-256 SPKI pin; authenticates on its own; repeatable
  --ca FILE           extra trust anchor (PEM) for a private resolver
  --pool-size N       connections per resolver (default ${DEFAULT_POOL_OPTIONS.size})
  --burst-connections N  extra connections opened when a burst of lookups needs more
                      than the open ones' first round trip carries (~13 KB: ~26 padded
                      answers each); closed when idle; 0-8, but never more than 4
                      connections to a resolver at once (default ${DEFAULT_POOL_OPTIONS.burstConnections ?? 0})
  --max-in-flight N   queries in flight per connection (default ${DEFAULT_POOL_OPTIONS.maxInFlight})
  --idle-timeout S    close an idle connection after S seconds (default ${DEFAULT_POOL_OPTIONS.idleTimeoutMs / 1000})
  --no-padding        don't pad queries (RFC 8467 padding is on by default: queries in
                      128-octet blocks, answers padded by the resolver to 468; about
                      6x the bytes per answer, a round trip or two more for a burst
                      on a slow link)
  --cache-size MB     answer cache size in MiB, 0 for none (default 4); answers are
                      served until their TTL ends, stale ones only when the
                      resolver fails (RFC 8767); flushed when you switch resolvers
  --network-dns ADDR  this network's own resolver (e.g. 192.168.1.1), the only server
                      ever asked in cleartext: for a Wi-Fi sign-in page's names while
                      you sign in; repeatable (default: found from the system: what
                      resolv.conf had before dotstub took over, systemd-resolved, DHCP)
  --cleartext-fallback  with --opportunistic only: while encrypted DNS is blocked
                      on a network, let its own resolver answer, unencrypted (state
                      "degraded"; off by default; back to encrypted DNS as soon as
                      it connects)
  --no-portal-check   don't look for Wi-Fi sign-in pages (captive portals) when
                      encrypted DNS fails after a network change, nor check
                      whether a network answers DNS for every address
  --capport-url URL   this network's RFC 8908 captive-portal API (HTTPS), if known
  --log               print one line per query: latency, connection, reuse
  --control ADDR      control API and dashboard address, loopback only
                      (default 127.0.0.1:${DEFAULT_CONTROL_PORT}; 127.0.0.1:0 picks a free port)
  --no-control        no control API or dashboard
  --control-any-port  when the default control port is held by another program,
                      serve the dashboard on a free port instead (said in the
                      log; the link from dotstub ctl dashboard or the ready file
                      names it). Without it dotstub never moves: with a control
                      socket it serves the API there only and says why,
                      without one it does not start
  --control-socket PATH  also serve the control API on this Unix socket (the
                      service: /run/dotstub/control.sock); whoever may open it
                      may use it, no token (see dotstub ctl --help)
  --control-socket-group GROUP  the group whose members may (mode 0660, owner
                      the proxy's user; the service: dotstub)
  --measure-only-local  "Test resolvers" measures only resolvers on this machine
                      (loopback addresses) and lists the others as not measured,
                      sending them nothing: for test labs without the Internet
  --config-dir DIR    where the token, settings.json and resolvers.json live
                      (default $XDG_CONFIG_HOME/dotstub or ~/.config/dotstub)
  --system-dns        offer the system-DNS takeover through the control API and
                      the dashboard (PUT /api/system-dns); while it is not in
                      force the privacy state is off. Changing DNS needs root
                      (the dotstub service); quitting gives the old DNS back
  --system-dns-state-dir DIR  the takeover's journal (default /var/lib/dotstub as
                      root, else the config dir)
  --system-dns-backend NAME   systemd-resolved | networkmanager | resolv.conf
  --system-dns-via-units      change the system's DNS by asking systemd for the
                      root units dotstub-enable.service and dotstub-disable.service
                      (the service: the proxy runs without root)
  --system-dns-root DIR       act on copies of the system files under DIR (tests):
                      the copy is pointed at 127.0.0.1:53 as a real system
                      would be, and lookups through it reach this dotstub
  --ready-file FILE   once listening, write {"dns":[…],"control":URL,"token":…,"dashboard":URL,"pid":…}
                      to FILE (atomically, mode 0600) for scripts and tests
  --help              this text
  --version           print the version

Settings changed in the dashboard are saved in the config dir and used at the
next start; the flags above override them for one run without saving.

Examples:
  dotstub --listen 127.0.0.1:5300 --resolver quad9 --log
  dotstub --listen 127.0.0.1:5300 --resolver 127.0.0.1:8853#dns.test --ca test-ca.pem
  dotstub --resolver 127.0.0.1:8853#dns.test --doh https://dns.test:8443/dns-query --ca test-ca.pem
  curl -N -H "Authorization: Bearer $(cat ~/.config/dotstub/token)" http://127.0.0.1:${DEFAULT_CONTROL_PORT}/api/stream
`;

function positiveInt(value: string | undefined, flag: string, max: number, min = 1): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${flag} ${value}: expected a whole number from ${min} to ${max}`);
  }
  return Number(value);
}

export interface ParsedCli extends RunFlags {
  readonly pins: readonly string[];
  /** null: --no-control. */
  readonly control: {
    readonly host: string;
    readonly port: number;
    readonly explicit: boolean;
    readonly socket?: { readonly path: string; readonly group?: string };
  } | null;
  readonly readyFile: string | undefined;
  /** --system-dns: null when this run does not manage the system's DNS. */
  readonly systemDns: { readonly stateDir: string | undefined; readonly backend: string | undefined; readonly root: string; readonly viaUnits: boolean } | null;
  readonly log: boolean;
  /** --measure-only-local: "Test resolvers" sends nothing to resolvers off this machine. */
  readonly measureOnlyLocal: boolean;
  readonly help: boolean;
  readonly version: boolean;
}

function parseControlArg(arg: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(arg);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new ConfigError(`--control ${arg}: expected ADDRESS:PORT, e.g. 127.0.0.1:${DEFAULT_CONTROL_PORT}`);
  const host = (m[1] as string).replace(/^\[(.*)\]$/, '$1');
  if (!isLoopbackHost(host) || host.toLowerCase() === 'localhost') {
    throw new ConfigError(`--control ${arg}: the control API listens on a loopback address only (127.0.0.1 or [::1]), so only this machine can reach it`);
  }
  return { host, port };
}

/** Parses argv. Throws ConfigError/ResolverSpecError with a message for the user. */
export function parseCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): ParsedCli {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        resolver: { type: 'string' },
        doh: { type: 'string' },
        listen: { type: 'string', multiple: true },
        strict: { type: 'boolean' },
        opportunistic: { type: 'boolean' },
        pin: { type: 'string', multiple: true },
        ca: { type: 'string', multiple: true },
        'pool-size': { type: 'string' },
        'burst-connections': { type: 'string' },
        'max-in-flight': { type: 'string' },
        'idle-timeout': { type: 'string' },
        'no-padding': { type: 'boolean' },
        'cache-size': { type: 'string' },
        log: { type: 'boolean' },
        control: { type: 'string' },
        'no-control': { type: 'boolean' },
        'control-socket': { type: 'string' },
        'control-socket-group': { type: 'string' },
        'control-any-port': { type: 'boolean' },
        'measure-only-local': { type: 'boolean' },
        'config-dir': { type: 'string' },
        'ready-file': { type: 'string' },
        'network-dns': { type: 'string', multiple: true },
        'no-portal-check': { type: 'boolean' },
        'cleartext-fallback': { type: 'boolean' },
        'capport-url': { type: 'string' },
        'system-dns': { type: 'boolean' },
        'system-dns-state-dir': { type: 'string' },
        'system-dns-backend': { type: 'string' },
        'system-dns-via-units': { type: 'boolean' },
        'system-dns-root': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new ConfigError(`${(err as Error).message}. See dotstub --help.`);
  }
  if (values.strict && values.opportunistic) throw new ConfigError('choose one of --strict and --opportunistic');
  if (values.control !== undefined && values['no-control']) throw new ConfigError('choose one of --control and --no-control');
  const pins = values.pin ?? [];
  const resolver = values.resolver !== undefined ? parseResolverArg(values.resolver, pins, values.doh) : undefined;
  if (resolver === undefined && pins.length > 0) throw new ConfigError('--pin needs --resolver: say which resolver the pin is for');
  if (resolver === undefined && values.doh !== undefined) {
    throw new ConfigError('--doh needs --resolver: the DNS-over-HTTPS URL is reached at that resolver\'s addresses (e.g. --resolver 9.9.9.9#dns.quad9.net --doh https://dns.quad9.net/dns-query)');
  }
  const ca = (values.ca ?? []).map((file) => {
    let pem: string;
    try {
      pem = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`--ca ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError(`--ca ${file}: not a PEM certificate`);
    return pem;
  });
  const overrides: { -readonly [K in keyof Settings]?: Settings[K] } = {};
  if (values.strict) overrides.mode = 'strict';
  if (values.opportunistic) overrides.mode = 'opportunistic';
  if (values['no-padding']) overrides.padding = false;
  const poolSize = positiveInt(values['pool-size'], '--pool-size', 16);
  if (poolSize !== undefined) overrides.poolSize = poolSize;
  const burst = positiveInt(values['burst-connections'], '--burst-connections', 8, 0);
  if (burst !== undefined) overrides.burstConnections = burst;
  const maxInFlight = positiveInt(values['max-in-flight'], '--max-in-flight', 65535);
  if (maxInFlight !== undefined) overrides.maxInFlight = maxInFlight;
  const idle = positiveInt(values['idle-timeout'], '--idle-timeout', 86400);
  if (idle !== undefined) overrides.idleTimeoutSec = idle;
  if (values['network-dns']) {
    for (const a of values['network-dns']) {
      if (parseServer(a) === null) throw new ConfigError(`--network-dns ${a}: expected an address like 192.168.1.1, 192.168.1.1:53 or [fe80::1%wlan0]:53`);
    }
    overrides.networkDns = values['network-dns'];
  }
  if (values['no-portal-check']) overrides.portalCheck = false;
  if (values['cleartext-fallback']) {
    if (values.strict) throw new ConfigError('--cleartext-fallback needs opportunistic mode: strict mode never sends a lookup unencrypted');
    overrides.cleartextFallback = true;
  }
  let capportUrl: string | null = null;
  if (values['capport-url'] !== undefined) {
    let u: URL | undefined;
    try {
      u = new URL(values['capport-url']);
    } catch {
      u = undefined;
    }
    if (u?.protocol !== 'https:') throw new ConfigError(`--capport-url ${values['capport-url']}: the captive-portal API must be an https:// URL (RFC 8908)`);
    capportUrl = u.toString();
  }
  let cacheMb: number | undefined;
  if (values['cache-size'] !== undefined) {
    const text = values['cache-size'];
    cacheMb = Number(text);
    if (!/^\d+(\.\d+)?$/.test(text) || cacheMb > 1024) throw new ConfigError(`--cache-size ${text}: give the size in MiB, from 0 (no cache) to 1024`);
  }
  const sysFlags = (['system-dns-state-dir', 'system-dns-backend', 'system-dns-root', 'system-dns-via-units'] as const).filter((k) => values[k] !== undefined);
  if (!values['system-dns'] && sysFlags.length > 0) throw new ConfigError(`--${sysFlags[0] ?? ''} goes with --system-dns`);
  if (values['system-dns'] && values['no-control']) throw new ConfigError('--system-dns is offered through the control API: drop --no-control');
  if (values['control-socket-group'] !== undefined && values['control-socket'] === undefined) throw new ConfigError('--control-socket-group goes with --control-socket');
  if (values['control-socket'] !== undefined && values['no-control']) throw new ConfigError('--control-socket serves the control API: drop --no-control');
  if (values['control-any-port'] && (values['no-control'] || values.control !== undefined)) throw new ConfigError('--control-any-port goes with the default control port: drop --no-control or --control');
  const socket =
    values['control-socket'] !== undefined
      ? { path: path.resolve(values['control-socket']), ...(values['control-socket-group'] !== undefined ? { group: values['control-socket-group'] } : {}) }
      : undefined;
  const control = values['no-control']
    ? null
    : {
        ...(values.control !== undefined ? { ...parseControlArg(values.control), explicit: true } : { host: '127.0.0.1', port: DEFAULT_CONTROL_PORT, explicit: false, anyPort: values['control-any-port'] ?? false }),
        ...(socket ? { socket } : {}),
      };
  return {
    resolver,
    resolverArg: values.resolver,
    pins,
    listen: values.listen ? values.listen.flatMap(parseListenArg) : [...DEFAULT_LISTEN],
    ca,
    overrides,
    cacheMb,
    control,
    configDir: values['config-dir'] !== undefined ? path.resolve(values['config-dir']) : defaultConfigDir(env),
    capportUrl,
    // Test rigs set DOTSTUB_PORTAL_CHECK=off so no probe can ever leave the machine from a test.
    portalCheckAllowed: env.DOTSTUB_PORTAL_CHECK !== 'off',
    // And DOTSTUB_NAME_ROUTING=off, so no name a test asks is routed to this machine's own network resolver (a namespace lab turns it on).
    nameRoutingAllowed: env.DOTSTUB_NAME_ROUTING !== 'off',
    readyFile: values['ready-file'],
    systemDns: values['system-dns']
      ? {
          stateDir: values['system-dns-state-dir'] !== undefined ? path.resolve(values['system-dns-state-dir']) : undefined,
          backend: values['system-dns-backend'],
          root: path.resolve(values['system-dns-root'] ?? '/'),
          viaUnits: values['system-dns-via-units'] ?? false,
        }
      : null,
    log: values.log ?? false,
    measureOnlyLocal: values['measure-only-local'] ?? false,
    help: values.help ?? false,
    version: values.version ?? false,
  };
}
