/**
 * The network we're on, with one owner: its key, its label, what is
 * remembered about it (network-memory.ts: networks.json) and strict mode's
 * sign-in answer for it. Everything else asks here, and hears of a change
 * from here, in one event:
 *
 *   'changed' { why: 'moved' }    the network changed (the root's network watch, or a test): a new key
 *             { why: 'known' }    a rejoin's key became final (the gateway's MAC came): the memory applies now
 *             { why: 'choices' }  the user's choices for the network we're on changed (set, forgotten, imported)
 *
 *   'remembered'                  what is remembered about any network changed, or which
 *                                 one we're on: `revision` counts these, so a page that lists
 *                                 the networks knows to read them again (never on a timer)
 *
 * The name router, the leak watch and the privacy controller subscribe; a
 * control action calls a method here and nothing else.
 *
 * The facts the privacy controller records (each written only when the entry
 * changes; the median round trip when leaving a network and once it first has
 * enough samples, never per query):
 *
 *   hint()              { startOn: 'doh' } on a network where 853 was blocked and DoH worked;
 *                       { classicalOnly: true } where a post-quantum ClientHello got no answer
 *   opened(t)           an authenticated connection: what worked (DoT clears 853's failure)
 *   dotFailed(c)        port 853's failure, classified
 *   pqHelloLost()       a post-quantum ClientHello got no answer, a classical one did
 *   burstSeen(w)        a page's burst needed `w` connections (written when that changes, or a day after the last)
 *   portalSeen/SignedIn a sign-in page, and signing in
 *   answered(us)        a query answered on an open connection: the round trip's median
 *   dnsChecked(r)       the DNS-interception check (dns-interception.ts): when, and what answered
 *   ddrChecked(r)       the network's own encrypted resolver (ddr.ts): what it designated, verified or refused
 *
 * A network is remembered from its first fact, not before: a network nothing
 * happened on leaves nothing behind.
 */
import { EventEmitter } from 'node:events';
import type { FailureKind } from './classify.js';
import type { DdrResult } from './ddr.js';
import { answerWords, notCheckedWords, type DnsCheckResult } from './dns-interception.js';
import type { LocalNamesPolicy } from './name-owners.js';
import { MAX_BURST_WINDOWS, NetworkMemory, pqHelloLostHolds, readNetworks, startHint, writeNetworks, type DdrOffer, type NetworkMemoryChanges, type NetworkMemoryEntry, type StartHint } from './network-memory.js';
import { gatewayAddress, networkIdentity } from './network-key.js';
import { sideCheck } from '../runtime/side-check.js';

/** Answers kept for the median. */
const RTT_SAMPLES = 64;
/** The median is first written once this many answers came in. */
const RTT_FIRST_WRITE = 16;

/** How long a key read without the gateway's MAC stays provisional: the MAC comes with the first traffic through the gateway; a link without ARP (point to point) never has one. */
const SETTLE_MS = 3000;
/** How often the key is read again while it is provisional (the upstream's first connection attempt brings the MAC within milliseconds). */
const SETTLE_POLL_MS = 25;

/** Strict mode's answer to "Allow sign-in?" on a network. */
export type SignInAnswer = 'allow' | 'decline';

export type NetworkChanged = { readonly why: 'moved' } | { readonly why: 'known' } | { readonly why: 'choices' };

export interface CurrentNetworkInit {
  /** networks.json: what worked on each network and the user's choices; null: nothing is remembered (the key is still read). */
  readonly file: string | null;
  /**
   * Strict mode's sign-in answers per network (`{ "<key>": "allow" | "decline" }`,
   * captive-consent.json: a file of its own, as it always was); null or absent: asked every time.
   */
  readonly signInFile?: string | null;
  /**
   * The network we're on: network-key.ts's hash, and whether it is final
   * (the gateway's MAC was known) or may still change (its address only,
   * just after a change); null: can't be told apart. Default: the OS's.
   */
  readonly identify?: () => { readonly key: string; readonly final: boolean } | null;
  /** For people: the gateway's address; null: unknown ("network seen first on DATE"). Default: /proc/net/route. */
  readonly gateway?: () => string | null;
  /** For people, better: the network's name where the OS knows it (network-name.ts: the SSID); null: it doesn't. */
  readonly name?: () => Promise<string | null>;
  readonly now?: () => Date;
}

function osIdentity(): { readonly key: string; readonly final: boolean } | null {
  const id = networkIdentity();
  return id === null ? null : { key: id.key, final: id.byMac };
}

export class CurrentNetwork extends EventEmitter<{ changed: [NetworkChanged]; remembered: [] }> {
  readonly #memory: NetworkMemory | null;
  readonly #signInFile: string | null;
  readonly #identify: NonNullable<CurrentNetworkInit['identify']>;
  readonly #gateway: () => string | null;
  readonly #name: (() => Promise<string | null>) | undefined;
  readonly #now: () => Date;
  #key: string | null = null;
  /** When the key was first read without the gateway's MAC (it may still change); null: it is final. */
  #provisionalSince: number | null = null;
  /** Reads the key again while it is provisional (started or moved only). */
  #settling: NodeJS.Timeout | undefined;
  #rtt: number[] = [];
  #rttWritten = false;
  /** The network's name, once read for the network we're on (null: not known); `#joins` tells a late answer from an old network. */
  #label: string | null = null;
  #joins = 0;
  #revision = 0;

  constructor(init: CurrentNetworkInit) {
    super();
    this.#memory = init.file ? new NetworkMemory(init.file, () => this.#remembered()) : null;
    this.#signInFile = init.signInFile ?? null;
    this.#identify = init.identify ?? osIdentity;
    this.#gateway = init.gateway ?? (() => gatewayAddress());
    this.#name = init.name;
    this.#now = init.now ?? (() => new Date());
  }

  /** Whether networks are remembered in this run (a memory file). */
  get remembering(): boolean {
    return this.#memory !== null;
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
  #read(): boolean {
    let id: ReturnType<NonNullable<CurrentNetworkInit['identify']>>;
    try {
      id = this.#identify();
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

  /** The proxy starts: we're on a network; its key is read (and read again until final). */
  start(): void {
    this.joined();
    this.#settle();
  }

  /** The network changed: what the old one taught is written under its key, the new one is read, and everyone hears of it. */
  moved(): void {
    this.left();
    this.joined();
    this.#settle();
    this.emit('changed', { why: 'moved' });
    this.#remembered();
  }

  /** Counts every change to what is remembered about the networks, or to which one we're on ('remembered'). */
  get revision(): number {
    return this.#revision;
  }

  #remembered(): void {
    this.#revision++;
    this.emit('remembered');
  }

  /** The proxy stops: the network's median and last-seen time are written. */
  stop(): void {
    clearInterval(this.#settling);
    this.left();
  }

  /**
   * We're on a network now (start, or after a change): read its key; a
   * network remembered before is noted as seen.
   */
  joined(): void {
    this.#provisionalSince = null;
    this.#read();
    this.#rtt = [];
    this.#rttWritten = false;
    this.#label = null;
    this.#seen();
    void this.#readName(++this.#joins);
  }

  /** Reads the network's name; a remembered network we're still on is labelled with it at once. */
  async #readName(join: number): Promise<void> {
    const read = this.#name;
    if (read === undefined) return;
    // However the reading fails (nmcli or iw missing, an exception from their pipes): no name, the gateway's address
    // labels the network, and the proxy goes on (runtime/side-check.ts).
    const measured = await sideCheck("reading the network's name", read);
    const name = measured.ok ? measured.value : null;
    if (join !== this.#joins || name === null) return;
    this.#label = name;
    const key = this.key;
    if (key && this.#memory?.get(key)) this.#write({});
  }

  /**
   * Just after a change the gateway's MAC isn't known until traffic went
   * through it: the key is read again every 25 ms until it is (at most
   * SETTLE_MS, then the gateway's address is taken as the key: a link
   * without ARP), then 'changed' { why: 'known' }.
   */
  #settle(): void {
    clearInterval(this.#settling);
    if (!this.provisional) return;
    this.#settling = setInterval(() => {
      // A fact written meanwhile may have read the key final already (#write reads it again): what counts is that it is final now.
      this.settle();
      if (this.provisional) return;
      clearInterval(this.#settling);
      this.emit('changed', { why: 'known' });
      this.#remembered();
    }, SETTLE_POLL_MS);
    this.#settling.unref();
  }

  /**
   * Reads the key again while it is provisional; true when it just became
   * final: the network is known now, and seen if remembered.
   */
  settle(): boolean {
    if (this.#provisionalSince === null || !this.#read()) return false;
    this.#seen();
    return true;
  }

  /** The key, read again (facts are rare: a failure, a portal, a sign-in question); the per-query path uses the one read last. */
  current(): string | null {
    this.#read();
    return this.key;
  }

  #seen(): void {
    const key = this.key;
    if (key && this.#memory?.get(key)) this.#write({ seenAt: this.#now().toISOString() });
  }

  /** Where the upstream should start on this network. */
  hint(): StartHint {
    const key = this.key;
    return key && this.#memory ? startHint(this.#memory.get(key), this.#now().getTime()) : {};
  }

  opened(transport: 'dot' | 'doh'): void {
    this.#write(transport === 'dot' ? { worked: 'dot', port853: undefined } : { worked: 'doh' });
  }

  dotFailed(kind: FailureKind, classification: string): void {
    const key = this.current();
    if (!key || !this.#memory) return;
    const was = this.#memory.get(key)?.port853;
    if (was?.kind === kind) return;
    this.#write({ port853: { kind, classification, at: this.#now().toISOString() } });
  }

  /** A post-quantum ClientHello got no answer here and a classical one opened the connection. */
  pqHelloLost(): void {
    const key = this.current();
    const now = this.#now();
    // Written again once the last one has run out: the day starts over.
    if (!key || !this.#memory || pqHelloLostHolds(this.#memory.get(key), now.getTime())) return;
    this.#write({ pqHelloLost: { at: now.toISOString() } });
  }

  /** A burst filled every open connection here: the connections it needed. */
  burstSeen(windows: number): void {
    const key = this.current();
    if (!key || !this.#memory || !Number.isInteger(windows) || windows < 1 || windows > MAX_BURST_WINDOWS) return;
    const now = this.#now();
    const was = this.#memory.get(key)?.burst;
    // Never per burst: when the number changes, and once a day to keep it holding (BURSTS_HOLD_MS).
    if (was && was.windows === windows && now.getTime() - Date.parse(was.at) < 24 * 60 * 60 * 1000) return;
    this.#write({ burst: { windows, at: now.toISOString() } });
  }

  portalSeen(): void {
    this.#write({ portal: { seenAt: this.#now().toISOString(), signedIn: false } });
  }

  portalSignedIn(): void {
    const key = this.current();
    if (!key || !this.#memory) return;
    const portal = this.#memory.get(key)?.portal;
    if (portal && !portal.signedIn) this.#write({ portal: { ...portal, signedIn: true } });
  }

  /**
   * The DNS-interception check ran on the network we're on: when, and, when
   * something answered where no DNS server can be, what and where. A check
   * that saw nothing keeps the last sighting (with its date) and moves only
   * the time checked: the card says what each check saw.
   */
  dnsChecked(result: DnsCheckResult): void {
    const at = this.#now().toISOString();
    const a = result.answered;
    const note = notCheckedWords(result) ?? undefined;
    // Not one address could be asked (offline, a socket error): nothing was checked, and the last check's time stands.
    if (!a && result.outcomes.every((o) => !o.answered && o.notChecked !== undefined)) {
      this.#write({ dnsCheckNote: note });
      return;
    }
    this.#write(a ? { dnsCheckedAt: at, dnsCheckNote: note, rewritesDns: { seenAt: at, answeredWith: answerWords(a), asked: a.address } } : { dnsCheckedAt: at, dnsCheckNote: note });
  }

  /** How this network reaches IPv4 without an IPv4 route of its own (privacy/nat64-check.ts). */
  nat64Found(prefix: string, how: 'ipv4only.arpa' | 'well-known', detail: string): void {
    this.#write({ nat64: { prefix, how, detail, at: this.#now().toISOString() } });
  }

  /**
   * The DNS-interception check could not run here (runtime/side-check.ts: it
   * threw, or its I/O did): "not checked: why" on the card; the last check's
   * time and sighting stand.
   */
  dnsNotChecked(why: string): void {
    this.#write({ dnsCheckNote: `not checked: ${why}` });
  }

  /**
   * The question for the network's own resolver could not be asked or
   * answered (it threw, or its I/O did): said as the card's detail; an offer
   * verified at an earlier join stays (the user's choice of it still applies).
   */
  ddrNotChecked(asked: string, why: string): void {
    const key = this.key;
    const prev = key ? this.#memory?.get(key)?.ddr : undefined;
    this.#write({ ddr: { ...prev, checkedAt: prev?.checkedAt ?? this.#now().toISOString(), asked: prev?.asked ?? asked, detail: `not checked at the last join: ${why}` } });
  }

  /**
   * The network's resolver was asked for its designated resolvers (ddr.ts):
   * the offer that verified, or the first refused. A designation seen before
   * and gone now is gone from the card too (the user's choice stays, and
   * applies again if it comes back).
   */
  ddrChecked(result: DdrResult): void {
    const first = result.rejected[0];
    this.#write({
      ddr: {
        checkedAt: this.#now().toISOString(),
        asked: result.asked,
        detail: result.detail,
        ...(result.offer ? { offer: result.offer } : {}),
        ...(first && !result.offer ? { rejected: { name: first.name, why: first.why } } : {}),
      },
    });
  }

  /** The network's own encrypted resolver, when the user chose it for the network we're on and it verified here; null otherwise. */
  ownResolver(): DdrOffer | null {
    const key = this.key;
    const e = key ? this.#memory?.get(key) : undefined;
    return e?.ownResolver === 'use' && e.ddr?.offer ? e.ddr.offer : null;
  }

  /** A query answered by the resolver on an open connection, `us` on the wire. */
  answered(us: number): void {
    if (!this.key || !this.#memory || !(us > 0)) return;
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

  /** A fact about the network we're on, with its label for people (its name, its gateway, or the day it was first seen). */
  #write(changes: NetworkMemoryChanges): void {
    if (!this.#memory) return;
    // Read again: just after a change the gateway's MAC may not be in the ARP
    // table yet (the key then hashes its address); once traffic went through
    // it, the MAC-keyed entry is the network's own.
    this.#read();
    const key = this.key;
    // Nothing is written under a key that may still change: it would be a second entry for this network.
    if (!key) return;
    try {
      const known = this.#memory.get(key);
      const at = this.#now().toISOString();
      const gateway = safe(this.#gateway);
      this.#memory.update(key, {
        label: this.#label ?? (gateway ? `gateway ${gateway}` : (known?.label ?? `network seen first on ${at.slice(0, 10)}`)),
        firstSeenAt: known?.firstSeenAt ?? at,
        ...(known ? {} : { seenAt: at }),
        ...changes,
      });
    } catch {
      // A memory that can't be written is no memory: DNS goes on.
    }
  }

  // The user's choices, and what the control API lists.

  /** Every network remembered, most recently seen first (none when nothing is remembered). */
  list(): { readonly key: string; readonly entry: NetworkMemoryEntry }[] {
    return this.#memory?.list() ?? [];
  }

  /** What is remembered about one network. */
  remembered(key: string): NetworkMemoryEntry | undefined {
    return this.#memory?.get(key);
  }

  /** The user's local-names choice for the network we're on; undefined: not decided (or not known). */
  localNames(): Exclude<LocalNamesPolicy, 'ask'> | undefined {
    const key = this.key;
    return key ? this.#memory?.get(key)?.localNames : undefined;
  }

  /**
   * Writes `changes` to a network's entry as given (no label added: a choice
   * or an import, not a fact seen here); on the network we're on, 'changed'
   * { why: 'choices' } follows before this returns. Undefined when nothing
   * is remembered in this run.
   */
  remember(key: string, changes: NetworkMemoryChanges): NetworkMemoryEntry | undefined {
    if (!this.#memory) return undefined;
    const entry = this.#memory.update(key, changes);
    if (key === this.key) this.emit('changed', { why: 'choices' });
    return entry;
  }

  /**
   * "Forget this network": everything remembered about it goes, what worked
   * there and the user's choices, the strict-mode sign-in answer included;
   * false when the memory didn't know it. On the network we're on, 'changed'
   * { why: 'choices' } follows before this returns.
   */
  forget(key: string): boolean {
    if (this.#signInFile) {
      const answers = readNetworks(this.#signInFile);
      if (key in answers) {
        delete answers[key];
        writeNetworks(this.#signInFile, answers);
      }
    }
    const forgotten = this.#memory?.forget(key) ?? false;
    if (key === this.key) this.emit('changed', { why: 'choices' });
    return forgotten;
  }

  /** Strict mode's remembered answer to "Allow sign-in?" on network `key`. */
  signInAnswer(key: string): SignInAnswer | undefined {
    if (!this.#signInFile) return undefined;
    const v = readNetworks(this.#signInFile)[key];
    return v === 'allow' || v === 'decline' ? v : undefined;
  }

  /** Remembers the answer to "Allow sign-in?" for network `key` (nothing when answers aren't kept in this run). */
  rememberSignIn(key: string, answer: SignInAnswer): void {
    if (this.#signInFile) writeNetworks(this.#signInFile, { ...readNetworks(this.#signInFile), [key]: answer });
  }
}

function safe(f: () => string | null): string | null {
  try {
    return f();
  } catch {
    return null;
  }
}
