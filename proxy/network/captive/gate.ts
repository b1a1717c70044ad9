/**
 * The query path in front of the encrypted upstream (behind the cache, so
 * private answers cached earlier are still served, and stale ones when
 * nothing else can answer):
 *   - captive: the sign-in names in cleartext at the network's resolver,
 *     everything else held with a typed error at once;
 *   - degraded (opportunistic, allowed in settings, encrypted DNS blocked):
 *     every name in cleartext at the network's resolver;
 *   - otherwise straight through.
 *
 * The gate decides nothing: it reads the captive session and degraded mode
 * (network/degraded-mode.ts), whose owners decide when each is on.
 */
import { CaptiveHeldError } from '../../errors.js';
import type { Upstream, UpstreamCallback, UpstreamRequest } from '../../upstream/upstream.js';
import type { CaptivePortal } from './session.js';

/** The cleartext path degraded mode uses while it is on (null: off). */
export interface DegradedPath {
  readonly upstream: Upstream | null;
}

const NEVER_DEGRADED: DegradedPath = { upstream: null };

export class CaptiveGate implements Upstream {
  readonly #portal: CaptivePortal | null;
  readonly #degraded: DegradedPath;
  readonly #inner: Upstream;

  constructor(portal: CaptivePortal | null, inner: Upstream, degraded: DegradedPath = NEVER_DEGRADED) {
    this.#portal = portal;
    this.#inner = inner;
    this.#degraded = degraded;
  }

  get name(): string {
    return this.#inner.name;
  }

  resolve<R extends UpstreamRequest>(req: R, done: UpstreamCallback<R>): void {
    const portal = this.#portal;
    if (!portal?.active) {
      (this.#degraded.upstream ?? this.#inner).resolve(req, done);
      return;
    }
    const name = req.question.key.name;
    const cleartext = portal.cleartext;
    if (cleartext && portal.allows(name)) {
      cleartext.resolve(req, (r, err, answer) => {
        if (answer) portal.noteLetThrough(name);
        done(r, err, answer);
      });
      return;
    }
    done(req, new CaptiveHeldError(`${name} is held while you sign in to this network`), null);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  destroy(): void {
    this.#inner.destroy();
  }
}
