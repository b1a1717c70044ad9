/**
 * Starts the app (proxy/app.ts, without its control API) in-process on 127.0.0.1:0 (UDP and TCP on one port)
 * against a test upstream, with the test CA trusted.
 */
import { DEFAULT_POOL_OPTIONS, type PoolOptions } from '../proxy/upstream/pool/options.js';
import type { EventEmitter } from 'node:events';
import { startApp } from '../proxy/app.js';
import { defaultConfig, type PrivacyState, type StubProxy } from '../proxy/dotstub.js';
import { parseResolverArg } from '../proxy/config/resolvers.js';
import type { AuthMode } from '../proxy/upstream/auth-policy.js';
import type { WarmUpResult } from '../proxy/warm-up.js';
import { testPki } from './certs.js';

export interface HarnessOptions {
  readonly resolverArg: string;
  /** The resolver's DNS-over-HTTPS URL (as --doh): the proxy then runs Fallback(DoT; DoH). */
  readonly dohUrl?: string;
  readonly mode?: AuthMode;
  readonly trustTestCa?: boolean;
  readonly pins?: readonly string[];
  readonly pool?: Partial<PoolOptions>;
  readonly padding?: boolean;
  readonly warm?: boolean;
  /** The answer cache (default on, as dotstub ships); off for tests of the resolver path under load. */
  readonly cache?: boolean;
  /** The start's warm-up of the query path (proxy/warm-up.ts; the CLI always runs it); off unless asked. */
  readonly warmUp?: boolean;
}

export interface Harness {
  readonly proxy: StubProxy;
  readonly port: number;
  /** The warm-up's outcome (null: not asked for). */
  readonly warmedUp: Promise<WarmUpResult> | null;
  stop(): Promise<void>;
}

export async function startProxy(options: HarnessOptions): Promise<Harness> {
  const pki = testPki();
  const config = defaultConfig(parseResolverArg(options.resolverArg, options.pins ?? [], options.dohUrl), {
    listen: [{ host: '127.0.0.1', port: 0 }],
    auth: { mode: options.mode ?? 'strict', ca: options.trustTestCa === false ? [] : [pki.caPem] },
    pool: { ...DEFAULT_POOL_OPTIONS, ...options.pool },
    padding: options.padding ?? true,
    warm: options.warm ?? true,
    cache: options.cache === false ? null : {},
  });
  // The app without its control API: the proxy alone, started and stopped as the CLI does.
  const app = await startApp({ config, control: null, warmUp: options.warmUp ?? false });
  const [bound] = app.bound;
  if (!bound) throw new Error('proxy bound no address');
  return { proxy: app.proxy, port: bound.port, warmedUp: app.warmedUp, stop: () => app.stop(1000) };
}

/**
 * Resolves when the proxy is in `state` (now, or at its next 'state'
 * event); rejects after `ms`. Awaits the event: no polling.
 */
export function waitForState(proxy: StubProxy, state: PrivacyState, ms = 5000): Promise<void> {
  return waitForEvent(proxy, 'state', () => proxy.privacy.state.state === state, ms, `${state} state`);
}

/**
 * Resolves once a connection to the active resolver has opened, whatever the
 * state shown: with a system-DNS takeover that is not in force, the state is
 * `off` (the system asks someone else) however well the upstream connects.
 */
export function waitForConnected(proxy: StubProxy, ms = 5000): Promise<void> {
  return waitFor(() => proxy.privacy.lastVerifiedAt !== null, ms, 'a connection to the resolver');
}

/**
 * Resolves when `predicate` holds, checked now and after each `event` the
 * emitter sends; rejects after `ms`. Use this for anything the proxy
 * announces; `waitFor` only for the outside world (files, processes).
 */
export function waitForEvent(
  emitter: Pick<EventEmitter, 'on' | 'off'>,
  event: string,
  predicate: () => boolean,
  ms = 5000,
  what = event,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (predicate()) {
      resolve();
      return;
    }
    const listener = (): void => {
      if (!predicate()) return;
      clearTimeout(timer);
      emitter.off(event, listener);
      resolve();
    };
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
    }, ms);
    emitter.on(event, listener);
  });
}

/** Resolves when `predicate` holds, polling every 10 ms; rejects after `ms`. For conditions outside the process (files, child output). */
export async function waitFor(predicate: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
