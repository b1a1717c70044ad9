/**
 * What this run is now: its configuration, replaced (never edited) by a
 * switch of resolver and by settings changed at run time, and when it
 * started (0: not running). The proxy's wiring (dotstub.ts) keeps none of
 * this itself; each field has one writer, named on it.
 */
import type { ResolverSpec } from '../config/resolvers.js';
import { withChanges, type ProxyConfig, type RuntimeChanges } from './proxy-config.js';

export class LiveRun {
  #config: ProxyConfig;
  #startedAt = 0;

  constructor(config: ProxyConfig) {
    this.#config = config;
  }

  get config(): ProxyConfig {
    return this.#config;
  }

  get startedAt(): number {
    return this.#startedAt;
  }

  get running(): boolean {
    return this.#startedAt !== 0;
  }

  /** The proxy's start and stop. */
  started(at: number): void {
    this.#startedAt = at;
  }
  stopped(): void {
    this.#startedAt = 0;
  }

  /** The resolver running now (privacy/resolver-choice.ts decides which). */
  switched(resolver: ResolverSpec): void {
    this.#config = { ...this.#config, resolver };
  }

  /** Settings changed at run time; `engine` is what the engine applied. */
  changed(changes: RuntimeChanges, engine: { readonly padding: boolean; readonly recordNames: boolean }): void {
    this.#config = withChanges(this.#config, changes, engine);
  }
}
