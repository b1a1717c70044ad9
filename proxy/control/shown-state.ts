/**
 * The privacy state the user is shown, and since when: the proxy's own
 * state, or `off` while the system-DNS takeover it manages is not in force
 * (privacy-state.ts withTakeover). `since` moves on every change of the
 * shown state, whichever part changed it (issue 24: "Private since" after
 * enabling private DNS is the enable, not the proxy's first connection).
 * It listens to both parts itself; close() stops that.
 */
import type { StubProxy } from '../dotstub.js';
import { withTakeover, type PrivacyState } from '../privacy/privacy-state.js';
import type { SystemDnsManager } from '../system-dns/manager.js';

export class ShownState {
  readonly #proxy: StubProxy;
  readonly #systemDns: SystemDnsManager | undefined;
  #state: PrivacyState;
  #since: number;
  readonly #observe = (): void => this.observe();

  constructor(proxy: StubProxy, systemDns: SystemDnsManager | undefined) {
    this.#proxy = proxy;
    this.#systemDns = systemDns;
    this.#state = this.now().state;
    this.#since = proxy.state.since;
    proxy.on('state', this.#observe);
    systemDns?.on('change', this.#observe);
  }

  close(): void {
    this.#proxy.off('state', this.#observe);
    this.#systemDns?.off('change', this.#observe);
  }

  /** The shown state and its reason, now. */
  now(): { readonly state: PrivacyState; readonly reason: string } {
    return withTakeover(this.#proxy.state, this.#systemDns ? { inForce: this.#systemDns.inForce, reason: this.#systemDns.reason } : null);
  }

  /** Notes a change of the shown state (on each event of either part, and before `since` is read). */
  observe(): void {
    const state = this.now().state;
    if (state !== this.#state) {
      this.#state = state;
      this.#since = Date.now();
    }
  }

  get since(): number {
    this.observe();
    return this.#since;
  }
}
