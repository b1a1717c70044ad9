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
  /** The zone the random name is made in. Default: dotstub-leak-test.invalid (never exists). */
  readonly zone?: string;
}

export interface LeakTestResult {
  /** True when the name reached dotstub and no other resolver is known. */
  readonly passed: boolean;
  readonly name: string;
  readonly arrived: boolean;
  readonly lookup: LookupReport;
  readonly otherResolvers: readonly string[];
  /** Plain-words lines for the user. */
  readonly lines: readonly string[];
}

export async function runLeakTest(hooks: LeakTestHooks): Promise<LeakTestResult> {
  // Random so no cache anywhere (the OS's, a browser's, the resolver's) can answer it.
  const name = `${crypto.randomBytes(6).toString('hex')}.${hooks.zone ?? 'dotstub-leak-test.invalid'}`;
  const lookup = await (hooks.lookup ?? ((n: string) => osLookup(n, 8000)))(name);
  const arrived = await hooks.arrived(name);
  const others = await hooks.otherResolvers();
  const lines = [
    arrived
      ? `A lookup of ${name} through the system reached dotstub.`
      : `A lookup of ${name} through the system did NOT reach dotstub: the system asks another resolver (${lookup.error ?? 'answered without dotstub'}).`,
    ...(others.length === 0 ? ['The system knows no other resolver.'] : others.map((o) => `Another way around dotstub: ${o}`)),
    arrived && others.length === 0 ? 'Result: no leak found.' : 'Result: lookups can leak past dotstub.',
  ];
  return { passed: arrived && others.length === 0, name, arrived, lookup, otherResolvers: others, lines };
}
