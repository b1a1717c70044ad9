/**
 * The `dotstub` command: parse flags, start the proxy, log, stop cleanly.
 * Only wiring lives here.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, isDotstubError } from './errors.js';
import { DEFAULT_LISTEN, parseListenArg, type ListenAddress } from './listeners.js';
import { formatRecord } from './metrics.js';
import { DEFAULT_POOL_OPTIONS } from './pool.js';
import { defaultConfig, StubProxy, type ProxyConfig } from './proxy.js';
import { parseResolverArg, PRESETS } from './resolvers.js';

export const HELP = `dotstub: private DNS for this machine.
Takes DNS on loopback (UDP and TCP) and forwards it over persistent,
pipelined DNS-over-TLS to the resolver you choose.

Usage: dotstub [options]

  --resolver R        ${Object.keys(PRESETS).join(' | ')}
                      or ADDRESS[:PORT][#AUTHNAME], e.g. 9.9.9.9:853#dns.quad9.net,
                      [2620:fe::fe]#dns.quad9.net (default: quad9)
  --listen ADDR       where to take DNS: 127.0.0.1:5300, [::1]:5300, :5300 (both
                      loopbacks); repeatable (default: 127.0.0.1:53 and [::1]:53)
  --strict            require an authenticated resolver (default): a certificate
                      valid for AUTHNAME, or a matching --pin; otherwise refuse
  --opportunistic     use TLS even if the certificate doesn't verify (recorded
                      as unverified); never falls back to cleartext
  --pin SPKI          base64 SHA-256 SPKI pin; authenticates on its own; repeatable
  --ca FILE           extra trust anchor (PEM) for a private resolver
  --pool-size N       connections per resolver (default ${DEFAULT_POOL_OPTIONS.size})
  --max-in-flight N   queries in flight per connection (default ${DEFAULT_POOL_OPTIONS.maxInFlight})
  --idle-timeout S    close an idle connection after S seconds (default ${DEFAULT_POOL_OPTIONS.idleTimeoutMs / 1000})
  --no-padding        don't pad queries (RFC 8467 padding is on by default)
  --log               print one line per query: latency, connection, reuse
  --help              this text
  --version           print the version

Examples:
  dotstub --listen 127.0.0.1:5300 --resolver quad9 --log
  dotstub --listen 127.0.0.1:5300 --resolver 127.0.0.1:8853#dns.test --ca test-ca.pem
`;

function positiveInt(value: string | undefined, flag: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new ConfigError(`${flag} ${value}: expected a whole number from 1 to ${max}`);
  }
  return Number(value);
}

/** Parses argv into a proxy configuration. Throws ConfigError/ResolverSpecError with a message for the user. */
export function parseCli(argv: readonly string[]): { config: ProxyConfig; log: boolean; help: boolean; version: boolean } {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        resolver: { type: 'string' },
        listen: { type: 'string', multiple: true },
        strict: { type: 'boolean' },
        opportunistic: { type: 'boolean' },
        pin: { type: 'string', multiple: true },
        ca: { type: 'string', multiple: true },
        'pool-size': { type: 'string' },
        'max-in-flight': { type: 'string' },
        'idle-timeout': { type: 'string' },
        'no-padding': { type: 'boolean' },
        log: { type: 'boolean' },
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
  const resolver = parseResolverArg(values.resolver ?? 'quad9', values.pin ?? []);
  const mode = values.opportunistic ? 'opportunistic' : 'strict';
  if (mode === 'strict' && resolver.authName === undefined && resolver.pins.length === 0) {
    throw new ConfigError(
      `strict mode needs a way to authenticate ${values.resolver}: add its name (ADDRESS#AUTHNAME), a --pin, or use --opportunistic`,
    );
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
  const listen: ListenAddress[] = values.listen ? values.listen.flatMap(parseListenArg) : [...DEFAULT_LISTEN];
  const config = defaultConfig(resolver, {
    listen,
    auth: { mode, ca },
    padding: !values['no-padding'],
    pool: {
      ...DEFAULT_POOL_OPTIONS,
      size: positiveInt(values['pool-size'], '--pool-size', DEFAULT_POOL_OPTIONS.size, 16),
      maxInFlight: positiveInt(values['max-in-flight'], '--max-in-flight', DEFAULT_POOL_OPTIONS.maxInFlight, 65535),
      idleTimeoutMs: positiveInt(values['idle-timeout'], '--idle-timeout', DEFAULT_POOL_OPTIONS.idleTimeoutMs / 1000, 86400) * 1000,
    },
  });
  return { config, log: values.log ?? false, help: values.help ?? false, version: values.version ?? false };
}

function hostPort(a: ListenAddress): string {
  return `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;
}

/** Runs the CLI; resolves with the exit code once the proxy has stopped. */
export async function main(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCli(argv);
  } catch (err) {
    if (isDotstubError(err)) {
      console.error(`dotstub: ${err.message}`);
      return 2;
    }
    throw err;
  }
  if (parsed.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (parsed.version) {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    console.log(pkg.version);
    return 0;
  }
  const proxy = new StubProxy(parsed.config);
  proxy.on('state', (s) => console.error(`dotstub: ${s.state}: ${s.reason}`));
  proxy.on('connection', (e) => {
    if (e.type === 'open') {
      console.error(
        `dotstub: connection ${e.connectionId} to ${e.address} open (${e.resumed ? 'resumed' : 'full'} handshake, ${e.tlsVersion}, ${e.handshakeMs.toFixed(1)} ms)`,
      );
    } else if (e.type === 'close') {
      console.error(`dotstub: connection ${e.connectionId} closed (${e.reason}, carried ${e.queriesCarried} queries)`);
    } else if (e.type === 'connect-failed') {
      console.error(`dotstub: cannot reach ${e.address}: ${e.message}`);
    }
  });
  if (parsed.log) proxy.on('query', (r) => console.log(formatRecord(r)));
  try {
    const bound = await proxy.start();
    console.error(`dotstub: listening on ${bound.map(hostPort).join(', ')} (UDP and TCP), forwarding to ${proxy.describe()} over TLS`);
  } catch (err) {
    if (isDotstubError(err)) {
      console.error(`dotstub: ${err.message}`);
      return 1;
    }
    throw err;
  }
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      console.error(`dotstub: ${signal}: answering ${proxy.inFlight} queries in flight, then stopping`);
      void proxy.stop().then(() => {
        const c = proxy.counters;
        console.error(`dotstub: stopped after ${c.queries} queries (${c.answers} answered, ${c.servfails} SERVFAIL)`);
        resolve(0);
      });
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}
