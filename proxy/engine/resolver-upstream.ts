/**
 * The engine's upstream, and a switch of it that drops no query: the
 * running resolver's upstream (upstream/for-resolver.ts) behind the captive
 * gate (`gate`: privacy/captive/gate.ts) and, when there is one, the answer
 * cache, so cached private answers, and stale ones, still serve while
 * signing in. On a switch the cache is flushed (the old resolver's answers
 * must not be served as the new one's), new queries go to the new upstream
 * at once, and the old one finishes its in-flight queries, then closes
 * (upstream/active.ts). Which resolver runs is decided elsewhere
 * (privacy/resolver-choice.ts); this carries a decision out.
 */
import { AnswerCache, type AnswerCacheOptions } from '../cache/answer-cache.js';
import { CachingUpstream } from '../cache/caching-upstream.js';
import type { ResolverSpec } from '../config/resolvers.js';
import { ActiveUpstream } from '../upstream/active.js';
import { upstreamFor, type UpstreamSettings } from '../upstream/for-resolver.js';
import type { ConnectionSnapshot, ManagedUpstream } from '../upstream/managed.js';
import type { Upstream } from '../upstream/upstream.js';
import type { Counters } from './query-record.js';

export interface ResolverUpstreamInit {
  readonly first: ResolverSpec;
  /** The answer cache's bounds; null: no cache. */
  readonly cache: Partial<AnswerCacheOptions> | null;
  /** One object, each field with one writer: the engine, the cache or the upstream pools. */
  readonly counters: Counters;
  /** How a resolver is reached now (the run's settings: authentication, the pools' bounds). */
  readonly reach: () => Pick<UpstreamSettings, 'auth' | 'options'>;
  /** The captive gate in front of an upstream; called when one is put in service. */
  readonly gate: (upstream: ManagedUpstream) => Upstream;
}

export class ResolverUpstream {
  readonly #o: ResolverUpstreamInit;
  /** Answers from every resolver used so far are flushed on a switch: one cache, per proxy. */
  readonly #cache: AnswerCache | null;
  readonly #active: ActiveUpstream;

  constructor(init: ResolverUpstreamInit) {
    this.#o = init;
    this.#cache = init.cache ? new AnswerCache(init.cache) : null;
    this.#active = new ActiveUpstream(this.#make(init.first));
  }

  /** The running resolver's upstream. */
  get current(): ManagedUpstream {
    return this.#active.current;
  }

  /** What the engine sends to: the running upstream behind the gate and the cache. */
  front(): Upstream {
    return this.#front(this.current);
  }

  /**
   * Makes `resolver` the running one: `use` puts the new upstream in service
   * (the engine's front, the privacy controller) before the old one drains;
   * resolves once it has drained and closed.
   */
  async switchTo(resolver: ResolverSpec, use: (front: Upstream, next: ManagedUpstream) => void): Promise<void> {
    const next = this.#make(resolver);
    this.#cache?.clear();
    use(this.#front(next), next);
    await this.#active.replace(next);
  }

  connections(): ConnectionSnapshot[] {
    return this.#active.connections();
  }

  /** Entries and bytes in the answer cache (null without one). */
  get cacheSize(): { readonly entries: number; readonly bytes: number; readonly maxBytes: number } | null {
    return this.#cache ? { entries: this.#cache.entries, bytes: this.#cache.bytes, maxBytes: this.#cache.options.maxBytes } : null;
  }

  destroy(): void {
    this.#active.destroy();
  }

  #make(resolver: ResolverSpec): ManagedUpstream {
    return upstreamFor(resolver, { ...this.#o.reach(), counters: this.#o.counters });
  }

  #front(upstream: ManagedUpstream): Upstream {
    const gated = this.#o.gate(upstream);
    return this.#cache ? new CachingUpstream(this.#cache, gated, this.#o.counters) : gated;
  }
}
