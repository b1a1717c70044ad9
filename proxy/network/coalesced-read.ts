/**
 * One read of the OS's state at a time, for the watches that re-read it
 * when something may have changed (the leak watch, the name owners).
 *
 * Invariants: at most one read runs; asks that come while it runs coalesce
 * into one more read after it, so the last change is always seen, and each
 * ask's promise settles once a read that began after the ask is done. A read
 * that throws ends the run (its askers see the error); the next ask reads again.
 */

/** A file watch's events come in bursts (one change is several writes): one read this long after the last. */
const SETTLE_MS = 50;

export class CoalescedRead {
  readonly #read: () => Promise<void>;
  #running: Promise<void> | null = null;
  #again = false;
  #settle: NodeJS.Timeout | undefined;

  constructor(read: () => Promise<void>) {
    this.#read = read;
  }

  /** Reads now, or once more after the read that is running. */
  run(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      try {
        do {
          this.#again = false;
          await this.#read();
        } while (this.#again);
      } finally {
        this.#running = null;
      }
    })();
    return this.#running;
  }

  /** For a file watch's event: reads once the burst it belongs to has settled. */
  soon(): void {
    clearTimeout(this.#settle);
    this.#settle = setTimeout(() => void this.run(), SETTLE_MS);
  }

  /** Cancels a read asked for with soon(). */
  cancel(): void {
    clearTimeout(this.#settle);
  }
}
