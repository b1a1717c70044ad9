/**
 * Degraded mode's cleartext path (docs/networks.md#the-fallback-ladder, its last step): while
 * it is on, the network's own resolver answers every name, unencrypted. This
 * object only holds the path and when it last ended; the privacy controller
 * decides when it starts and ends, the captive gate reads `upstream`.
 *
 * Invariant: at most one CleartextUpstream exists, and it is destroyed when
 * the mode ends; it never starts again within `minGapMs` of ending (no flapping).
 */
import { CleartextUpstream } from '../upstream/plain/cleartext.js';
import type { Upstream } from '../upstream/upstream.js';
import type { DegradedPath } from './captive/gate.js';
import type { NetworkResolver } from '../network/network-resolver.js';

/** Degraded mode never starts again sooner than this after it ended. */
const DEGRADED_MIN_GAP_MS = 10_000;

export class DegradedMode implements DegradedPath {
  #path: CleartextUpstream | null = null;
  /** When it last ended; -Infinity: never. */
  #endedAt = -Infinity;
  readonly #minGapMs: number;

  constructor(minGapMs = DEGRADED_MIN_GAP_MS) {
    this.#minGapMs = minGapMs;
  }

  get upstream(): Upstream | null {
    return this.#path;
  }

  get on(): boolean {
    return this.#path !== null;
  }

  /** Off, and not ended within the last `minGapMs`. */
  mayStart(now = Date.now()): boolean {
    return this.#path === null && now - this.#endedAt >= this.#minGapMs;
  }

  start(resolver: NetworkResolver): void {
    this.#path?.destroy();
    this.#path = new CleartextUpstream({ servers: resolver.servers });
  }

  /** Ends it; false when it was off. */
  end(): boolean {
    if (!this.#path) return false;
    this.#path.destroy();
    this.#path = null;
    this.#endedAt = Date.now();
    return true;
  }
}
