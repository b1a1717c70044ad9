/**
 * A resolver → the upstream that carries its queries: one DoT pool, or
 * Fallback(DoT; DoH) when the resolver has a DoH URL (the ladder,
 * docs/networks.md#the-fallback-ladder). The proxy's root builds its
 * upstream here; "Test resolvers" (control/resolver-test.ts) builds one
 * pool per transport with `poolFor`, so both reach a resolver the same way.
 */
import { dohEndpoint, type ResolverSpec } from '../config/resolvers.js';
import type { AuthPolicy } from './auth-policy.js';
import type { UpstreamCounters } from './counters.js';
import { dohConnectionFactory } from './doh/connection.js';
import { dotConnectionFactory } from './dot/connection.js';
import { Fallback } from './fallback.js';
import type { ManagedUpstream, Transport } from './managed.js';
import { Pool } from './pool.js';
import type { PoolOptions } from './pool/options.js';

export interface UpstreamSettings {
  readonly auth: AuthPolicy;
  readonly options: PoolOptions;
  /** Shared with the engine; the pools are the only writers of their fields. */
  readonly counters?: UpstreamCounters;
  /** Numbers the pool's connections; absent: the process's one sequence (the start's warm-up keeps its own). */
  readonly connectionIds?: () => number;
}

/** One transport's pool to `resolver`; `selfRetry` false when its owner re-probes it (a fallback, a test). */
export function poolFor(resolver: ResolverSpec, transport: Transport, s: UpstreamSettings, selfRetry = true): Pool {
  const factory = transport === 'dot' ? dotConnectionFactory(resolver, s.auth, s.options) : dohConnectionFactory(resolver, s.auth, s.options);
  return new Pool({
    transport,
    resolver,
    options: s.options,
    factory,
    ...(s.counters ? { counters: s.counters } : {}),
    ...(s.connectionIds ? { connectionIds: s.connectionIds } : {}),
    selfRetry,
  });
}

export function upstreamFor(resolver: ResolverSpec, s: UpstreamSettings): ManagedUpstream {
  // With a DoH URL the fallback owns DoT's re-probing (5 s → 60 s).
  const dot = poolFor(resolver, 'dot', s, resolver.dohUrl === undefined);
  if (resolver.dohUrl === undefined) return dot;
  const doh = poolFor(resolver, 'doh', s);
  return new Fallback({ primary: dot, secondary: doh, primaryPort: resolver.port, secondaryPort: dohEndpoint(resolver.dohUrl).port });
}
