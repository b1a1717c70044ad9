/**
 * The privacy controller's side of the per-network memory (network-memory.ts):
 * which network we're on (its key, read at start and at each network change),
 * what worked there, and where to start when we come back.
 *
 *   joined()            start or a network change: the key; a known network is seen again
 *   hint()              { startOn: 'doh' } on a network where 853 was blocked and DoH worked
 *   opened(t)           an authenticated connection: what worked (DoT clears 853's failure)
 *   dotFailed(c)        port 853's failure, classified
 *   portalSeen/SignedIn a sign-in page, and signing in
 *   answered(us)        a query answered on an open connection: the round trip's median
 *   left()              the network changed or we stop: its median and last-seen time
 *
 * Each call writes only when the entry changes (NetworkMemory.update); the
 * median is written when leaving a network and once it first has enough
 * samples, never per query.
 */
import type { FailureKind } from './classify.js';
import { NetworkMemory, startHint, type NetworkMemoryChanges } from './network-memory.js';

/** Answers kept for the median. */
const RTT_SAMPLES = 64;
/** The median is first written once this many answers came in. */
const RTT_FIRST_WRITE = 16;

/** How long a key read without the gateway's MAC stays provisional: the MAC comes with the first traffic through the gateway; a link without ARP (point to point) never has one. */
const SETTLE_MS = 3000;

export interface NetworkRecorderInit {
  readonly file: string;
  /**
   * The network we're on: network-key.ts's hash, and whether it is
   * final (the gateway's MAC was known) or may still change (its address
   * only, just after a change); null: can't be told apart.
   */
  readonly identify: () => { readonly key: string; readonly final: boolean } | null;
  /** For people: the gateway's address; null: unknown ("network seen first on DATE"). */
  readonly gateway: () => string | null;
  /** For people, better: the network's name where the OS knows it (network-name.ts: the SSID); null: it doesn't. */
  readonly name?: () => Promise<string | null>;
  readonly now?: () => Date;
}

export class NetworkRecorder {
  readonly memory: NetworkMemory;
  readonly #init: NetworkRecorderInit;
  readonly #now: () => Date;
  #key: string | null = null;
  /** When the key was first read without the gateway's MAC (it may still change); null: it is final. */
  #provisionalSince: number | null = null;
  #rtt: number[] = [];
  #rttWritten = false;
  /** The network's name, once read for the network we're on (null: not known); `#joins` tells a late answer from an old network. */
  #name: string | null = null;
  #joins = 0;

  constructor(init: NetworkRecorderInit) {
    this.memory = new NetworkMemory(init.file);
    this.#init = init;
    this.#now = init.now ?? (() => new Date());
  }

  /**
   * The network we're on (null: unknown, or not known for sure yet). A
   * rejoin just after a change, before the gateway's MAC is in the ARP table,
   * is not keyed by the gateway's address meanwhile: that would miss the
   * network's memory, and write a second entry for it.
   */
  get key(): string | null {
    return this.#provisionalSince === null ? this.#key : null;
  }

  /** The key may still change (the gateway's MAC isn't known yet). */
  get provisional(): boolean {
    return this.#provisionalSince !== null;
  }

  /** Reads the key; returns true when this reading made it final. */
  #identify(): boolean {
    let id: ReturnType<NetworkRecorderInit['identify']>;
    try {
      id = this.#init.identify();
    } catch {
      id = null;
    }
    const was = this.#provisionalSince;
    this.#key = id?.key ?? null;
    if (id === null || id.final) this.#provisionalSince = null;
    else if (was === null) this.#provisionalSince = this.#now().getTime();
    // No MAC after a while: a link without ARP; its address is all there is.
    else if (this.#now().getTime() - was >= SETTLE_MS) this.#provisionalSince = null;
    return was !== null && this.#provisionalSince === null;
  }

  /**
   * We're on a network now (start, or after a change): read its key; a
   * network remembered before is noted as seen. A new one is remembered from
   * its first fact (a connection, a failure), not before: a network nothing
   * happened on leaves nothing behind.
   */
  joined(): void {
    this.#provisionalSince = null;
    this.#identify();
    this.#rtt = [];
    this.#rttWritten = false;
    this.#name = null;
    this.#seen();
    void this.#readName(++this.#joins);
  }

  /** Reads the network's name; a remembered network we're still on is labelled with it at once. */
  async #readName(join: number): Promise<void> {
    let name: string | null = null;
    try {
      name = (await this.#init.name?.()) ?? null;
    } catch {
      // no name: the gateway's address labels it
    }
    if (join !== this.#joins || name === null) return;
    this.#name = name;
    const key = this.key;
    if (key && this.memory.get(key)) this.#write({});
  }


  /**
   * Reads the key again while it is provisional (the privacy controller asks
   * a few times a second just after a change); true when it just became
   * final: the network is known now, and seen if remembered.
   */
  settle(): boolean {
    if (this.#provisionalSince === null || !this.#identify()) return false;
    this.#seen();
    return true;
  }

  /** The key, read again (facts are rare: a failure, a portal); the per-query path uses the one read last. */
  #current(): string | null {
    this.#identify();
    return this.key;
  }

  #seen(): void {
    const key = this.key;
    if (key && this.memory.get(key)) this.#write({ seenAt: this.#now().toISOString() });
  }

  /** Where the upstream should start on this network. */
  hint(): { readonly startOn?: 'doh' } {
    const key = this.key;
    return key ? startHint(this.memory.get(key)) : {};
  }

  opened(transport: 'dot' | 'doh'): void {
    this.#write(transport === 'dot' ? { worked: 'dot', port853: undefined } : { worked: 'doh' });
  }

  dotFailed(kind: FailureKind, classification: string): void {
    const key = this.#current();
    if (!key) return;
    const was = this.memory.get(key)?.port853;
    if (was?.kind === kind) return;
    this.#write({ port853: { kind, classification, at: this.#now().toISOString() } });
  }

  portalSeen(): void {
    this.#write({ portal: { seenAt: this.#now().toISOString(), signedIn: false } });
  }

  portalSignedIn(): void {
    const key = this.#current();
    if (!key) return;
    const portal = this.memory.get(key)?.portal;
    if (portal && !portal.signedIn) this.#write({ portal: { ...portal, signedIn: true } });
  }

  /** A query answered by the resolver on an open connection, `us` on the wire. */
  answered(us: number): void {
    if (!this.key || !(us > 0)) return;
    this.#rtt.push(us / 1000);
    if (this.#rtt.length > RTT_SAMPLES) this.#rtt.shift();
    if (!this.#rttWritten && this.#rtt.length >= RTT_FIRST_WRITE) {
      this.#rttWritten = true;
      this.#write({ rttMs: this.#median() });
    }
  }

  /** Leaving the network (a change, or stopping): its median round trip and when it was last seen. */
  left(): void {
    if (this.key && this.#rtt.length > 0) this.#write({ rttMs: this.#median(), seenAt: this.#now().toISOString() });
    this.#rtt = [];
  }

  #median(): number {
    const s = [...this.#rtt].sort((a, b) => a - b);
    const mid = s.length >> 1;
    const m = s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
    return Math.round(m * 10) / 10;
  }

  #write(changes: NetworkMemoryChanges): void {
    // Read again: just after a change the gateway's MAC may not be in the ARP
    // table yet (the key then hashes its address); once traffic went through
    // it, the MAC-keyed entry is the network's own.
    this.#identify();
    const key = this.key;
    // Nothing is written under a key that may still change: it would be a second entry for this network.
    if (!key) return;
    try {
      const known = this.memory.get(key);
      const at = this.#now().toISOString();
      const gateway = safe(this.#init.gateway);
      this.memory.update(key, {
        label: this.#name ?? (gateway ? `gateway ${gateway}` : (known?.label ?? `network seen first on ${at.slice(0, 10)}`)),
        firstSeenAt: known?.firstSeenAt ?? at,
        ...(known ? {} : { seenAt: at }),
        ...changes,
      });
    } catch {
      // A memory that can't be written is no memory: DNS goes on.
    }
  }
}

function safe(f: () => string | null): string | null {
  try {
    return f();
  } catch {
    return null;
  }
}
