/**
 * One pool (DoT, for a resolver without a DoH URL) as a ManagedUpstream.
 * Its transport follows the same rule as a fallback's side: set by an
 * authenticated open, cleared by a connect failure.
 */
import { EventEmitter } from 'node:events';
import type { ResolverSpec } from '../config/resolvers.js';
import type { ManagedUpstream, ManagedUpstreamEvents, Transport, TransportChange, UpstreamSnapshot } from './managed.js';
import type { Pool, RetryOutcome } from './pool.js';
import { snapshotOf, translatePoolEvents } from './pool-events.js';
import type { UpstreamCallback, UpstreamRequest } from './upstream.js';

export class ManagedPool extends EventEmitter<ManagedUpstreamEvents> implements ManagedUpstream {
  readonly #pool: Pool;
  readonly #transport: Transport;
  /** An authenticated connection opened since the last connect failure. */
  #up = false;

  constructor(pool: Pool, transport: Transport) {
    super();
    this.#pool = pool;
    this.#transport = transport;
    pool.on('open', () => (this.#up = true));
    pool.on('connect-failed', () => (this.#up = false));
    translatePoolEvents(pool, transport, this, { speaks: () => true, message: (e) => e.message });
  }

  get name(): string {
    return this.#pool.name;
  }

  get resolver(): ResolverSpec {
    return this.#pool.resolver;
  }

  get transport(): Transport | null {
    return this.#up ? this.#transport : null;
  }

  get lastChange(): TransportChange | null {
    return null;
  }

  resolve<R extends UpstreamRequest>(req: R, done: UpstreamCallback<R>): void {
    this.#pool.resolve(req, done);
  }

  warm(): void {
    this.#pool.warm();
  }

  retryNow(): RetryOutcome {
    return this.#pool.retryNow();
  }

  networkChanged(): void {
    this.#pool.networkChanged();
  }

  /** One transport only: nothing to choose. */
  prefer(): void {}

  snapshot(): UpstreamSnapshot {
    return snapshotOf([this.#pool], this.#pool.resolver.id);
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  destroy(): void {
    this.#pool.destroy();
  }
}
