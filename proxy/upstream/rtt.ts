/**
 * Smoothed round-trip time and the per-attempt deadline it gives, in the
 * manner of TCP's retransmission timer (RFC 6298 §2): SRTT and RTTVAR from
 * answered queries.
 *
 * A query's deadline must outlast TCP's own recovery of a lost segment, or
 * dotstub gives up on a connection that is about to deliver. TCP retransmits
 * after its RTO, SRTT + max(4 × RTTVAR, 200 ms) on Linux (TCP_RTO_MIN), and
 * the retransmission then needs a round trip; allowing for one backed-off
 * retransmission, the deadline is SRTT + 2 × RTO, within configured bounds:
 * about 400 ms on loopback, 560 ms on 4G (53 ms), 1 s on 3G (150 ms ± 8,
 * where TCP's recovery was seen to take up to 755 ms). The pool's default
 * floor (800 ms) stays above that on fast paths: a resolver recursing an
 * uncached name can take longer than the path's RTO, and a connection
 * with nothing else in flight would be judged dead too early.
 */
/** Linux's smallest retransmission timeout (TCP_RTO_MIN), ms. */
const TCP_RTO_MIN_MS = 200;

export class RttEstimator {
  /** ms; undefined until the first sample. */
  #srtt: number | undefined;
  #rttvar = 0;

  constructor(
    readonly minTimeoutMs: number,
    readonly maxTimeoutMs: number,
  ) {}

  get srttMs(): number | undefined {
    return this.#srtt;
  }

  get rttvarMs(): number {
    return this.#rttvar;
  }

  observe(ms: number): void {
    if (this.#srtt === undefined) {
      this.#srtt = ms;
      this.#rttvar = ms / 2;
    } else {
      this.#rttvar = 0.75 * this.#rttvar + 0.25 * Math.abs(this.#srtt - ms);
      this.#srtt = 0.875 * this.#srtt + 0.125 * ms;
    }
  }

  /** What TCP would wait before retransmitting on this path, ms (the upper bound until an answer has been timed). */
  rtoMs(): number {
    if (this.#srtt === undefined) return this.maxTimeoutMs;
    return this.#srtt + Math.max(4 * this.#rttvar, TCP_RTO_MIN_MS);
  }

  /** Deadline for one attempt: the upper bound until an answer has been timed. */
  timeoutMs(): number {
    if (this.#srtt === undefined) return this.maxTimeoutMs;
    return Math.min(this.maxTimeoutMs, Math.max(this.minTimeoutMs, this.#srtt + 2 * this.rtoMs()));
  }
}
