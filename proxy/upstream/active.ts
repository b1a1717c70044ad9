/**
 * The active resolver's upstream, and the ones being drained after a
 * switch: new queries go to the new one at once; an old one finishes its
 * in-flight queries, then closes. The status API sees all their connections.
 */
import type { ConnectionSnapshot, ManagedUpstream } from './managed.js';

export class ActiveUpstream {
  #current: ManagedUpstream;
  /** Upstreams being drained after a switch; they finish their in-flight queries. */
  readonly #retiring = new Set<ManagedUpstream>();

  constructor(first: ManagedUpstream) {
    this.#current = first;
  }

  get current(): ManagedUpstream {
    return this.#current;
  }

  /** Makes `next` the active one; resolves once the old one has drained and closed. */
  async replace(next: ManagedUpstream): Promise<void> {
    const old = this.#current;
    this.#current = next;
    this.#retiring.add(old);
    await old.close();
    this.#retiring.delete(old);
  }

  connections(): ConnectionSnapshot[] {
    return [this.#current, ...this.#retiring].flatMap((u) => u.snapshot().connections);
  }

  destroy(): void {
    this.#current.destroy();
    for (const u of this.#retiring) u.destroy();
  }
}
