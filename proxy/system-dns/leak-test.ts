/**
 * The leak self-test: resolve a fresh random name through the OS
 * (getaddrinfo, as every program does) and check that it reached dotstub;
 * list every other resolver the OS still knows. Decoupled from the proxy:
 * "did dotstub see this name?" is a hook (the control API's query log from
 * the CLI, the engine's query events in-process, a test server in tests).
 */
import crypto from 'node:crypto';
import { osLookup, type LookupReport } from './os-lookup.js';

export interface LeakTestHooks {
  /** Whether dotstub received a query for `name` (it may have answered NXDOMAIN: that's fine). */
  readonly arrived: (name: string) => Promise<boolean>;
  /** Other resolvers the OS still knows, in words (backend leaks). */
  readonly otherResolvers: () => Promise<string[]>;
  /** Defaults to getaddrinfo through node:dns. */
  readonly lookup?: (name: string) => Promise<LookupReport>;
  /** The zone the random name is made in. Default: LEAK_TEST_ZONE. */
  readonly zone?: string;
  /**
   * Whether dotstub answered `name` itself (never forwarded). When given, the
   * test also looks up the names that must stay on this machine through the
   * system: DDR's _dns.resolver.arpa (else the OS may discover the network's
   * encrypted resolver and go around dotstub, RFC 9462) and Firefox's canary
   * use-application-dns.net (else Firefox turns on its own DoH).
   */
  readonly answeredLocally?: (name: string) => Promise<boolean>;
}

/**
 * Where the random probe name is made: under resolver.arpa (RFC 9462), which
 * dotstub answers itself (NODATA, engine/local-answers.ts), so the probe never
 * leaves the machine. Not under .invalid: systemd-resolved answers RFC 6761's
 * .invalid itself without asking any server, so behind resolved the probe
 * never reached dotstub and every leak test said "can leak".
 */
export const LEAK_TEST_ZONE = 'leak-test.resolver.arpa';

/** Names that must be answered by dotstub itself, with what goes wrong otherwise. */
const LOCAL_NAMES = [
  { name: '_dns.resolver.arpa', what: 'Encrypted-resolver discovery (_dns.resolver.arpa)', otherwise: 'the system could discover the network\'s resolver and go around dotstub' },
  { name: 'use-application-dns.net', what: 'Firefox\'s canary (use-application-dns.net)', otherwise: 'Firefox may send its lookups to its own DNS-over-HTTPS provider' },
] as const;

export interface LeakTestResult {
  /** True when the name reached dotstub and no other resolver is known. */
  readonly passed: boolean;
  readonly name: string;
  readonly arrived: boolean;
  readonly lookup: LookupReport;
  readonly otherResolvers: readonly string[];
  /** Per local name: answered by dotstub itself through the system (absent when not checked). */
  readonly local?: readonly { readonly name: string; readonly answeredLocally: boolean }[];
  /** Plain-words lines for the user. */
  readonly lines: readonly string[];
}

export async function runLeakTest(hooks: LeakTestHooks): Promise<LeakTestResult> {
  // Random so no cache anywhere (the OS's, a browser's, the resolver's) can answer it.
  const name = `${crypto.randomBytes(6).toString('hex')}.${hooks.zone ?? LEAK_TEST_ZONE}`;
  const lookup = await (hooks.lookup ?? ((n: string) => osLookup(n, 8000)))(name);
  const arrived = await hooks.arrived(name);
  const others = await hooks.otherResolvers();
  const local: { name: string; answeredLocally: boolean }[] = [];
  const localLines: string[] = [];
  if (hooks.answeredLocally) {
    for (const l of LOCAL_NAMES) {
      await (hooks.lookup ?? ((n: string) => osLookup(n, 8000)))(l.name);
      const ok = await hooks.answeredLocally(l.name);
      local.push({ name: l.name, answeredLocally: ok });
      localLines.push(ok ? `${l.what} was answered by dotstub itself.` : `${l.what} was NOT answered by dotstub: ${l.otherwise}.`);
    }
  }
  const passed = arrived && others.length === 0 && local.every((l) => l.answeredLocally);
  const lines = [
    arrived
      ? `A lookup of ${name} through the system reached dotstub.`
      : `A lookup of ${name} through the system did NOT reach dotstub: the system asks another resolver (${lookup.error ?? 'answered without dotstub'}).`,
    ...(others.length === 0 ? ['The system knows no other resolver.'] : others.map((o) => `Another way around dotstub: ${o}`)),
    ...localLines,
    passed ? 'Result: no leak found.' : 'Result: lookups can leak past dotstub.',
  ];
  return { passed, name, arrived, lookup, otherResolvers: others, ...(hooks.answeredLocally ? { local } : {}), lines };
}
