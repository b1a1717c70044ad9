/**
 * Smoothed round-trip time and the per-attempt deadline it gives, as TCP's
 * retransmission timer does (RFC 6298 §2): SRTT and RTTVAR from answered
 * queries, deadline = 2 × (SRTT + 4 × RTTVAR) within configured bounds.
 */
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

  observe(ms: number): void {
    if (this.#srtt === undefined) {
      this.#srtt = ms;
      this.#rttvar = ms / 2;
    } else {
      this.#rttvar = 0.75 * this.#rttvar + 0.25 * Math.abs(this.#srtt - ms);
      this.#srtt = 0.875 * this.#srtt + 0.125 * ms;
    }
  }

  /** Deadline for one attempt: the upper bound until an answer has been timed. */
  timeoutMs(): number {
    if (this.#srtt === undefined) return this.maxTimeoutMs;
    return Math.min(this.maxTimeoutMs, Math.max(this.minTimeoutMs, 2 * (this.#srtt + 4 * this.#rttvar)));
  }
}
