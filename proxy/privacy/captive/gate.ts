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
 * (privacy/degraded-mode.ts), whose owners decide when each is on. It owns
 * neither cleartext path, but keeps the Upstream contract for what passes
 * through it: after close() or destroy() no name takes a cleartext path (it
 * goes to the closed encrypted upstream, which fails it typed), and destroy()
 * fails the requests in flight on a cleartext path at once.
 */
import { CaptiveHeldError, PoolClosedError } from '../../errors.js';
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
  #closed = false;
  /** Requests on a cleartext path, each with the callback that still owes its answer (destroy() pays it). */
  readonly #cleartextInFlight = new Map<UpstreamRequest, UpstreamCallback<UpstreamRequest>>();

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
    if (this.#closed) {
      this.#inner.resolve(req, done);
      return;
    }
    if (!portal?.active) {
      const degraded = this.#degraded.upstream;
      if (degraded) this.#viaCleartext(degraded, req, done, null);
      else this.#inner.resolve(req, done);
      return;
    }
    const name = req.question.key.name;
    const cleartext = portal.cleartext;
    if (cleartext && portal.allows(name)) {
      this.#viaCleartext(cleartext, req, done, () => portal.noteLetThrough(name));
      return;
    }
    done(req, new CaptiveHeldError(`${name} is held while you sign in to this network`), null);
  }

  #viaCleartext<R extends UpstreamRequest>(path: Upstream, req: R, done: UpstreamCallback<R>, answered: (() => void) | null): void {
    this.#cleartextInFlight.set(req, done as UpstreamCallback<UpstreamRequest>);
    path.resolve(req, (r, err, answer) => {
      if (!this.#cleartextInFlight.delete(req)) return; // already failed by destroy()
      if (answer) answered?.();
      done(r, err, answer);
    });
  }

  close(): Promise<void> {
    this.#closed = true;
    return this.#inner.close();
  }

  destroy(): void {
    this.#closed = true;
    const owed = [...this.#cleartextInFlight];
    this.#cleartextInFlight.clear();
    for (const [req, done] of owed) done(req, new PoolClosedError('dotstub is stopping'), null);
    this.#inner.destroy();
  }
}
