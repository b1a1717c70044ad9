/**
 * Fair shares of the proxy's upstream capacity among its clients, so one
 * greedy client cannot take every in-flight slot and leave the others with
 * SERVFAIL. A client is a TCP connection or a UDP source address and port.
 *
 * Three quarters of the capacity (the budget) is divided among the clients
 * that have queries outstanding; the last quarter is headroom for clients
 * that arrive while the budget is taken. Every client may always have
 * MIN_SHARE outstanding, whatever the others do: a polite client (one query
 * at a time) is never turned away.
 *
 * What happens beyond the share is the listener's choice: TCP stops reading
 * (the client waits, loses nothing); UDP answers TC (the client retries over
 * TCP, where backpressure applies).
 */

/** Queries any client may have outstanding, however many clients there are. */
const MIN_SHARE = 4;

/** One client's standing: what it has outstanding now. */
export class ClientShare {
  /** Queries taken for this client and not yet released; never negative. */
  outstanding = 0;
}

export class ClientShares {
  /** The proxy's in-flight capacity right now (it follows the pool's settings). */
  readonly #capacity: () => number;
  /** Sum of every client's outstanding queries. */
  #total = 0;
  /** Clients with at least one query outstanding. */
  #busy = 0;

  constructor(capacity: () => number) {
    this.#capacity = capacity;
  }

  /** Queries outstanding over every client. */
  get total(): number {
    return this.#total;
  }

  /** Clients with queries outstanding. */
  get busy(): number {
    return this.#busy;
  }

  /** The most a client may have outstanding now, if it is (or becomes) one of the busy. */
  share(client: ClientShare): number {
    const busy = this.#busy + (client.outstanding === 0 ? 1 : 0);
    return Math.max(MIN_SHARE, Math.floor(this.#budget() / busy));
  }

  /** Takes a slot for one more query of `client`; false when that would exceed its share. */
  tryTake(client: ClientShare): boolean {
    if (client.outstanding >= MIN_SHARE) {
      if (client.outstanding >= this.share(client) || this.#total >= this.#budget()) return false;
    }
    if (client.outstanding === 0) this.#busy++;
    client.outstanding++;
    this.#total++;
    return true;
  }

  /** Gives back the slot of a query that was answered (or will never be). */
  release(client: ClientShare): void {
    if (client.outstanding === 0) return;
    client.outstanding--;
    this.#total--;
    if (client.outstanding === 0) this.#busy--;
  }

  #budget(): number {
    return Math.max(MIN_SHARE, Math.floor((this.#capacity() * 3) / 4));
  }
}
