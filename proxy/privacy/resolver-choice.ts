/**
 * Which resolver runs: the one owner of that decision. Everything else asks
 * it (`running`, `chosen`) or tells it:
 *
 *   - the user picks a resolver (the control API, the tray, `ctl use`):
 *     `choose`. It runs at once, and is the user's own resolver everywhere.
 *     On a network whose own encrypted resolver the user chose ("Use it on
 *     this network"), the pick sets that choice aside for this join only:
 *     the choice stays remembered, and joining the network again goes back
 *     to its own (the Resolvers page says so).
 *   - the network we're on changed, or its choices did (network/current-network.ts
 *     'changed'), or its offer was checked again (ddr-check.ts: `offerChecked`):
 *     the network's own resolver runs where the user chose it and it still
 *     verifies; elsewhere the user's own. Every such switch is told
 *     (`told`), never a silent one.
 *   - the user chose the network's own again ("Use it on this network"):
 *     `networkOwnChosen`, before the choice is written, ends a set-aside.
 *   - settings that rebuild the upstream: `rebuild` (the same resolver, new pool).
 *
 * A retired preset's move is made before the proxy starts (config/resolver-store.ts
 * moves the saved choice; the run starts on it): it is the first `chosen`.
 *
 * The owner decides; the wiring (dotstub.ts) carries a decision out
 * (`run`: a new upstream behind the cache and the gate, the old one drained).
 * Decisions apply only between start() and stop().
 */
import type { CurrentNetwork, NetworkChanged } from '../network/current-network.js';
import type { DdrOffer } from '../network/network-memory.js';
import type { ResolverSpec } from '../config/resolvers.js';
import { resolverForOffer } from './ddr-check.js';

/** A switch the owner made by itself, in words (the proxy's 'network-resolver' event: events.ts). */
export interface ResolverSwitchTold {
  readonly from: { readonly id: string; readonly label: string };
  readonly to: { readonly id: string; readonly label: string };
  readonly reason: string;
}

export interface ResolverChoiceInit {
  /** The user's own resolver at start (the run's configuration). */
  readonly first: ResolverSpec;
  readonly network: CurrentNetwork;
  /** Makes `spec` the running resolver (the wiring's switch); resolves once the old upstream drained. */
  readonly run: (spec: ResolverSpec) => Promise<void>;
  /** A switch the owner made by itself (a network's own resolver, or back from it), in words. */
  readonly told: (e: ResolverSwitchTold) => void;
  readonly warning: (w: string) => void;
}

const same = (a: ResolverSpec | null, b: ResolverSpec | null): boolean => JSON.stringify(a) === JSON.stringify(b);

export class ResolverChoice {
  readonly #o: ResolverChoiceInit;
  /** The user's own resolver: what runs unless the network's own was chosen for the network we're on. */
  #chosen: ResolverSpec;
  /** The resolver running now (the last one handed to `run`). */
  #running: ResolverSpec;
  /** The network's own resolver running now instead of #chosen; null: the user's own. */
  #networkOwn: ResolverSpec | null = null;
  /** The user picked a resolver on this join while the network's own was chosen here: it waits for the next join. */
  #setAside = false;
  #started = false;
  readonly #onChanged = (c: NetworkChanged): void => {
    if (c.why === 'moved') this.#setAside = false;
    this.#apply();
  };

  constructor(init: ResolverChoiceInit) {
    this.#o = init;
    this.#chosen = init.first;
    this.#running = init.first;
  }

  /** The resolver the user chose (the one running unless this network's own was chosen for it). */
  get chosen(): ResolverSpec {
    return this.#chosen;
  }

  /** The proxy started: a choice remembered for this network applies at once. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#o.network.on('changed', this.#onChanged);
    this.#apply();
  }

  stop(): void {
    this.#started = false;
    this.#o.network.off('changed', this.#onChanged);
  }

  /** The user's pick: runs now; where this network's own was chosen, instead of it until the network is joined again. */
  async choose(spec: ResolverSpec): Promise<void> {
    this.#chosen = spec;
    if (this.#networkOwn !== null || this.#o.network.ownResolver() !== null) this.#setAside = true;
    this.#networkOwn = null;
    await this.#switch(spec);
  }

  /** The user chose this network's own resolver again ("Use it on this network"): a pick made on this join no longer sets it aside. */
  networkOwnChosen(): void {
    this.#setAside = false;
  }

  /** The network's offer was checked again (it may have stopped designating, or verifying). */
  offerChecked(): void {
    this.#apply();
  }

  /** The same resolver on a new upstream (settings that rebuild the pool). */
  rebuild(): Promise<void> {
    return this.#switch(this.#running);
  }

  #switch(spec: ResolverSpec): Promise<void> {
    this.#running = spec;
    return this.#o.run(spec);
  }

  #apply(): void {
    if (!this.#started) return;
    const offer: DdrOffer | null = this.#setAside ? null : this.#o.network.ownResolver();
    const next = offer ? resolverForOffer(offer) : null;
    if (same(next, this.#networkOwn)) return;
    this.#networkOwn = next;
    const to = next ?? this.#chosen;
    const from = this.#running;
    if (same(to, from)) return;
    // Said on the timeline: a switch the user chose, made now (joining the network, or the click), never a silent one.
    // Just after a change of network its key is not known yet (network/current-network.ts: at most 3 s), so the
    // choice made for a network can't apply yet: say that, not that it was another network's (it may be this one).
    const reason = next
      ? `Now using ${next.label}, as you chose for this network`
      : this.#o.network.provisional
        ? `Back to ${to.label} while the network is identified: ${from.label} is used only on the network you chose it for`
        : `Back to ${to.label}: ${from.label} was your choice for another network, or you stopped it`;
    this.#o.told({ from: { id: from.id, label: from.label }, to: { id: to.id, label: to.label }, reason });
    void this.#switch(to).catch((err: unknown) => this.#o.warning(`could not switch to ${to.label}: ${(err as Error).message}`));
  }
}
