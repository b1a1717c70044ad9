/**
 * Gives memory back when the proxy goes quiet after work (issue 11: "give
 * memory back after a burst"). V8 keeps the young generation at the size a
 * burst grew it to, and the old generation's emptied pages, until a full
 * collection that it may not run for minutes on an idle process; one full
 * collection once queries have stopped returns them.
 *
 *   activity (queries + malformed messages) ─► dirty ─► quiet for QUIET_MS ─► one gc() ─► clean
 *
 * QUIET_MS is longer than V8's 5 s allocation-throughput window: only a
 * collection that sees low throughput also shrinks the young generation
 * (Heap::ReduceNewSpaceSize). Measured on the bench's lab (bench/probe): 60 s
 * after a flood of malformed datagrams RSS stayed at 100 MiB; 7 s after it,
 * one collection (13 ms) brought it to 66 MiB; compacting (exposedGc) also
 * returns the old generation's half-empty pages.
 *
 * Invariants:
 * - At most one collection per quiet period, and none while queries keep
 *   coming (a steady 20 qps never sees one), none more often than MIN_GAP_MS.
 * - A no-op without a `gc` function (node without --expose-gc: tests, tools).
 * - The timer never keeps the process alive (unref) and ticks every
 *   CHECK_MS only while there is something to give back. Clean, it holds
 *   no timer at all when the proxy can wake it on its next message
 *   (`wake`: issue 23, an idle proxy is not woken); without `wake`, it
 *   looks every IDLE_CHECK_MS.
 */
import v8 from 'node:v8';

const QUIET_MS = 6_000;
const CHECK_MS = 2_000;
const IDLE_CHECK_MS = 10_000;
const MIN_GAP_MS = 30_000;

export interface IdleCollectOptions {
  /** A number that grows with work done (messages handled); compared between ticks. */
  readonly activity: () => number;
  /** The collector; undefined: do nothing. */
  readonly gc: (() => void) | undefined;
  /** Milliseconds clock (tests pass their own and call tick()). */
  readonly now?: () => number;
  /**
   * Calls `fn` once, on the next message the proxy receives
   * (Engine.onNextMessage). With it, a clean collector waits for that
   * instead of waking every IDLE_CHECK_MS to compare `activity`.
   */
  readonly wake?: (fn: () => void) => void;
}

/**
 * A full, compacting collection through the `gc` that --expose-gc puts on
 * the global object (undefined without it). Compacting moves the survivors
 * of a burst out of half-empty old-space pages so the pages can go back;
 * without it, after 2,000 qps and a flood the old space kept 17.7 MiB of
 * pages for 10.2 MiB of objects (with it: 11.0; RSS 72 -> 65 MiB; the
 * collection took 77 ms, once, on an idle process). V8 reads the flag at
 * each collection, so it is on only for this one.
 */
export function exposedGc(): (() => void) | undefined {
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== 'function') return undefined;
  return () => {
    v8.setFlagsFromString('--compact-on-every-full-gc');
    try {
      (gc as () => unknown)();
    } finally {
      v8.setFlagsFromString('--no-compact-on-every-full-gc');
    }
  };
}

export class IdleCollector {
  readonly #o: IdleCollectOptions;
  readonly #now: () => number;
  #lastActivity: number;
  #lastChangeAt: number;
  /** Work was done since the last collection (start-up counts as work). */
  #dirty = true;
  #lastGcAt = -Infinity;
  #timer: NodeJS.Timeout | undefined;
  /** A clean collector is waiting for the proxy's next message (no timer). */
  #waiting = false;
  #closed = false;
  #collections = 0;

  constructor(options: IdleCollectOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#lastActivity = options.activity();
    this.#lastChangeAt = this.#now();
    if (options.gc) this.#arm();
  }

  /** Whether a timer is armed (false while clean and waiting for the next message). */
  get ticking(): boolean {
    return this.#timer !== undefined;
  }

  /** Collections run so far. */
  get collections(): number {
    return this.#collections;
  }

  /** One check: exported for tests that drive time themselves. */
  tick(): void {
    const now = this.#now();
    const activity = this.#o.activity();
    if (activity !== this.#lastActivity) {
      this.#lastActivity = activity;
      this.#lastChangeAt = now;
      this.#dirty = true;
    } else if (this.#dirty && now - this.#lastChangeAt >= QUIET_MS && now - this.#lastGcAt >= MIN_GAP_MS && this.#o.gc) {
      this.#dirty = false;
      this.#lastGcAt = now;
      this.#collections++;
      this.#o.gc();
    }
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    this.#timer = undefined;
    // Nothing to collect with (no --expose-gc): no timer either. worked() armed one that, never clean, ticked every
    // CHECK_MS for the life of the process (an offline proxy woke every 2 s for nothing: issue 41).
    if (this.#closed || !this.#o.gc) return;
    if (!this.#dirty && this.#o.wake) {
      if (this.#waiting) return;
      this.#waiting = true;
      this.#o.wake(this.#onMessage);
      return;
    }
    this.#timer = setTimeout(() => {
      this.tick();
      this.#arm();
    }, this.#dirty ? CHECK_MS : IDLE_CHECK_MS);
    this.#timer.unref();
  }

  /**
   * Work done that `activity` does not count (the start's warm-up,
   * warm-up.ts): collect once it has been quiet for QUIET_MS, as after
   * queries.
   */
  worked(): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#onMessage();
  }

  /** The first message after a clean, quiet spell: work again, so tick until it has been quiet for QUIET_MS. */
  readonly #onMessage = (): void => {
    this.#waiting = false;
    if (this.#closed) return;
    this.#dirty = true;
    this.#lastChangeAt = this.#now();
    this.#lastActivity = this.#o.activity();
    this.#arm();
  };
}
