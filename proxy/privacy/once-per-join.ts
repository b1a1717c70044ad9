/**
 * When a check of the network runs: the one rule the DNS-interception check
 * (dns-check.ts) and the question for the network's own resolver
 * (ddr-check.ts) share, so it is written once: each check is a OncePerJoin
 * with its own `allowed`, measurement and `done`.
 *
 *   - once per network joined (start, or a change of network), once its key
 *     is known (what it finds is remembered under that key, and a key that
 *     may still change would leave a second entry); never per query, never
 *     on a timer;
 *   - only where `allowed()` says so now (strict mode's rule is each check's
 *     own); a choice or a setting that changes that (the network owner's
 *     'changed', or settingsChanged()) runs a check this join had not run;
 *   - its result is handed to `done` only while the join it was measured in
 *     lasts and the checker runs: a late answer is never written to the next
 *     network.
 */
import type { CurrentNetwork, NetworkChanged } from '../network/current-network.js';
import { sideCheck } from '../runtime/side-check.js';

export interface OncePerJoinInit<T> {
  /** The check's name in words, for the log when it fails ("the DNS-interception check"). */
  readonly name: string;
  readonly network: CurrentNetwork;
  /** Whether a check may run on this network now (the mode's rule; the network checks on). */
  readonly allowed: () => boolean;
  /** Starts the measurement; null when there is nothing to measure now (e.g. no network resolver known). */
  readonly measure: () => Promise<T> | null;
  /** What was measured, on the network it was measured on. */
  readonly done: (result: T) => void;
  /**
   * The measurement failed (it threw, rejected, or an exception escaped from
   * its I/O: runtime/side-check.ts), on the network it ran on: why, for its
   * "not checked: why". The proxy goes on; the check is not run again this join.
   */
  readonly failed: (why: string) => void;
  /** Every change of network or of its choices, before a check is considered (e.g. to apply a remembered choice). */
  readonly changed?: () => void;
}

export class OncePerJoin<T> {
  readonly #o: OncePerJoinInit<T>;
  /** Counts the networks joined; a result is handed on only while the join it was measured in lasts. */
  #join = 0;
  /** The join a check was started in (one per join). */
  #checked = -1;
  #running = false;
  /** The check under way, if any (tests wait for it). */
  #pending: Promise<void> | null = null;
  readonly #onChanged = (c: NetworkChanged): void => {
    if (c.why === 'moved') this.#join++;
    this.#o.changed?.();
    this.#maybe();
  };

  constructor(init: OncePerJoinInit<T>) {
    this.#o = init;
  }

  get running(): boolean {
    return this.#running;
  }

  /** The proxy started: the network we're on is checked (once its key is known, and where allowed). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#o.network.on('changed', this.#onChanged);
    this.#o.changed?.();
    this.#maybe();
  }

  stop(): void {
    this.#running = false;
    this.#o.network.off('changed', this.#onChanged);
  }

  /** Settings changed (strict → opportunistic allows a check this join had not been allowed). */
  settingsChanged(): void {
    this.#maybe();
  }

  /** Settles once the check under way (if any) is handed on. */
  async settled(): Promise<void> {
    await this.#pending;
  }

  #maybe(): void {
    if (!this.#running || this.#checked === this.#join) return;
    // Provisional (the gateway's MAC not known yet: 'known' follows) or no network to tell apart: nothing to remember it under.
    if (this.#o.network.key === null || !this.#o.allowed()) return;
    // sideCheck calls the measurement at once (inside its context), so whether there was one is known here.
    let nothing = false;
    const measuring = sideCheck(this.#o.name, () => {
      const m = this.#o.measure();
      if (m === null) nothing = true;
      return m ?? Promise.resolve(null);
    });
    if (nothing) return;
    const join = this.#join;
    this.#checked = join;
    this.#pending = measuring.then((o) => {
      if (!this.#running || join !== this.#join) return;
      if (o.ok) this.#o.done(o.value as T);
      else this.#o.failed(o.why);
    });
  }
}
