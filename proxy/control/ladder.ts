/**
 * The fallback ladder as it ran (docs/networks.md#the-fallback-ladder; issue 8 item 9): for the active
 * resolver, what each transport got at each address since the resolver was
 * chosen or the network last changed — "853 to 9.9.9.9: no answer after
 * 2.5 s, probably blocked; DoH to dns.quad9.net: OK in 142 ms". Built from
 * the proxy's connection events (the control API aggregates; the proxy's own
 * classification is used as it is).
 *
 * Invariants:
 * - One step per (transport, address): the latest outcome there, with how
 *   many attempts in a row had that outcome. Bounded by the resolver's
 *   addresses times two transports.
 * - Steps are in ladder order: DoT before DoH, then by first attempt.
 */
import type { ConnectionEvent } from '../dotstub.js';
import type { FailureKind } from '../network/classify.js';
import type { Transport } from '../upstream/managed.js';

export interface LadderStep {
  readonly transport: Transport;
  /** The address tried (an IP literal). */
  readonly address: string;
  /** When the latest attempt ended, ms since the epoch. */
  readonly at: number;
  /** Authenticated connection opened. */
  readonly ok: boolean;
  /** ok: the handshake took this long; failed: the attempt took this long to fail. ms. */
  readonly ms: number;
  /** Whether the latest success resumed a TLS session. */
  readonly resumed: boolean | null;
  /** Failed: what the network did (network/classify.ts); null when ok. */
  readonly kind: FailureKind | null;
  readonly classification: string | null;
  readonly sentence: string | null;
  /** Attempts in a row with this outcome at this step. */
  readonly attempts: number;
}

const MAX_STEPS = 64;

export class NetworkLadder {
  #resolverId: string;
  readonly #steps = new Map<string, LadderStep & { readonly first: number }>();

  constructor(resolverId: string) {
    this.#resolverId = resolverId;
  }

  /** Starts over for `resolverId` (a switch, or the network changed). */
  reset(resolverId: string): void {
    this.#resolverId = resolverId;
    this.#steps.clear();
  }

  record(e: ConnectionEvent): void {
    if (e.resolverId !== this.#resolverId) return;
    if (e.type !== 'open' && e.type !== 'connect-failed') return;
    const key = `${e.transport} ${e.address}`;
    const prev = this.#steps.get(key);
    const ok = e.type === 'open';
    const attempts = prev && prev.ok === ok ? prev.attempts + 1 : 1;
    const first = prev?.first ?? e.at;
    if (!prev && this.#steps.size >= MAX_STEPS) return;
    this.#steps.set(
      key,
      e.type === 'open'
        ? { transport: e.transport, address: e.address, at: e.at, ok, ms: e.handshakeMs, resumed: e.resumed, kind: null, classification: null, sentence: null, attempts, first }
        : {
            transport: e.transport,
            address: e.address,
            at: e.at,
            ok,
            ms: e.afterMs,
            resumed: null,
            kind: e.kind,
            classification: e.classification,
            sentence: e.sentence,
            attempts,
            first,
          },
    );
  }

  steps(): LadderStep[] {
    const order = (t: Transport): number => (t === 'dot' ? 0 : 1);
    return [...this.#steps.values()]
      .sort((a, b) => order(a.transport) - order(b.transport) || a.first - b.first)
      .map(({ first: _first, ...step }) => step);
  }
}
