/**
 * What dotstub remembers per network (issue 21, item 3), keyed by
 * network-key.ts's hash of the gateway's MAC (never the network in
 * the clear), in one small JSON file (mode 0600) written with the project's
 * one atomic write (files/config-file.ts), so a crash leaves the old
 * memory or the new one:
 *
 *   { "version": 1, "networks": { "<key>": { "label": "gateway 192.168.1.1", "worked": "doh",
 *       "port853": { "kind": "dropped", "classification": "NET_DROPPED" }, "rttMs": 23, "localNames": "allow",
 *       "localDomains": ["lan"], "portal": { "signedIn": true }, "dnsCheckedAt": "…",
 *       "rewritesDns": { "seenAt": "…", "answeredWith": "NXDOMAIN", "asked": "192.0.2.1" }, "pqHelloLost": { "at": "…" },
 *       "burst": { "windows": 6, "at": "…" },
 *       "firstSeenAt": "…", "seenAt": "…" } } }
 *
 * What worked there (the transport that last gave authenticated answers,
 * what the network did to port 853, a sign-in page, whether it answers DNS
 * for every address, whether it loses a post-quantum ClientHello, how many
 * connections a page's burst needed), the median round trip
 * to the resolver, the local domains its links owned, the user's
 * local-names choice, and the network's own encrypted resolver (`ddr`: what
 * its resolver designated and whether it verified, ddr.ts) with the user's
 * choice to use it there (`ownResolver`). Nothing else identifies the network: the label is
 * the gateway's address (what the user can see in their own settings), or
 * the day it was first seen.
 *
 * Written only when something changed (never per query); at most
 * MAX_NETWORKS networks, the least recently seen forgotten first. A file
 * that can't be read counts as no memory.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomicSync } from '../files/config-file.js';
import type { FailureKind } from './classify.js';
import type { Designation } from './ddr.js';
import type { LocalNamesPolicy } from './name-owners.js';

/** The memory keeps this many networks; the least recently seen go first. */
export const MAX_NETWORKS = 50;

/** What the network did to DNS-over-TLS on port 853 when it last failed there (network/classify.ts). */
interface Port853Failure {
  readonly kind: FailureKind;
  /** `NET_DROPPED`, `NET_INTERCEPTED`, … */
  readonly classification: string;
  readonly at: string;
}

export interface NetworkMemoryEntry {
  /** For people: "gateway 192.168.1.1", or "network seen first on 2026-11-26". */
  readonly label?: string;
  /** The transport that last gave authenticated (verified) answers here. */
  readonly worked?: 'dot' | 'doh';
  /** Port 853's last failure here; absent once DNS-over-TLS authenticated here again. */
  readonly port853?: Port853Failure;
  /** A sign-in page seen here, and whether signing in got private DNS back. */
  readonly portal?: { readonly seenAt: string; readonly signedIn: boolean };
  /**
   * Something answered DNS here for an address where no DNS server can be
   * (network/dns-interception.ts): the network intercepts port 53. When it
   * was last seen, what came back, and the address asked.
   */
  readonly rewritesDns?: { readonly seenAt: string; readonly answeredWith: string; readonly asked: string };
  /** When that check last ran here, whatever it saw (it saw nothing when this is later than rewritesDns.seenAt). */
  readonly dnsCheckedAt?: string;
  /** What the last check could not look at and why ("IPv6 not checked: no route …"); absent: it asked every address. */
  readonly dnsCheckNote?: string;
  /**
   * IPv4 through this network's NAT64 (privacy/nat64-check.ts), when it has no
   * IPv4 of its own: the prefix used (found by asking ipv4only.arpa, or the
   * well-known one tried without asking), how, and what was seen.
   */
  readonly nat64?: { readonly prefix: string; readonly how: 'ipv4only.arpa' | 'well-known'; readonly detail: string; readonly at: string };
  /**
   * A post-quantum ClientHello got no answer here and the classical one did
   * (upstream/connection/key-agreement.ts): connections here offer classical
   * key agreement at once. When it was seen.
   */
  readonly pqHelloLost?: { readonly at: string };
  /**
   * A page's burst filled every open connection here (upstream/pool): the
   * connections the last one needed, and when. For BURSTS_HOLD_MS the first
   * lookup after a start or a join prepares them before the page comes.
   */
  readonly burst?: { readonly windows: number; readonly at: string };
  /** Median round trip to the resolver from here (answers on open connections), ms. */
  readonly rttMs?: number;
  /** The user's choice; absent: not asked yet. */
  readonly localNames?: Exclude<LocalNamesPolicy, 'ask'>;
  /**
   * The network's own encrypted resolver (network/ddr.ts, RFC 9462): when it
   * was last asked, the designation that verified (the offer), or the first
   * one refused and why. Absent: never asked here.
   */
  readonly ddr?: DdrMemory;
  /** The user's choice: use the offer on this network ("use"); absent: not chosen (the user's own resolver). */
  readonly ownResolver?: 'use';
  /** The suffixes the network's links owned when last seen (for the Network view). */
  readonly localDomains?: readonly string[];
  readonly firstSeenAt?: string;
  /** ISO time it was last seen. */
  readonly seenAt?: string;
  /** ISO time a settings import brought its choice, before this machine had been on it (seenAt absent until it is). */
  readonly importedAt?: string;
}

/** What the network's resolver designated, as remembered: network/ddr.ts's Designation, the offer it verified. */
export type DdrOffer = Designation;

interface DdrMemory {
  readonly checkedAt: string;
  /** The network resolver asked. */
  readonly asked: string;
  readonly offer?: DdrOffer;
  /** The first designation refused (none verified), and why. */
  readonly rejected?: { readonly name: string; readonly why: string };
  /** Why nothing was designated, when nothing was ("NXDOMAIN: no designated resolver"). */
  readonly detail: string;
}

/** Changes to an entry: a field set to undefined is removed. */
export type NetworkMemoryChanges = { -readonly [K in keyof NetworkMemoryEntry]?: NetworkMemoryEntry[K] | undefined };

const KINDS: ReadonlySet<string> = new Set(['dropped', 'refused', 'unreachable', 'reset-after-hello', 'handshake-stall', 'intercepted', 'name-mismatch', 'resigned', 'not-tls', 'other']);
/** Kinds that mean someone intercepts TLS: never a reason to start on another transport (docs/networks.md#the-fallback-ladder, step 2). */
const INTERCEPTION: ReadonlySet<string> = new Set(['intercepted', 'name-mismatch', 'resigned']);

const str = (v: unknown): v is string => typeof v === 'string' && v.length <= 200;

function entryOf(v: unknown): NetworkMemoryEntry | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const out: NetworkMemoryChanges = {};
  if (str(o.label)) out.label = o.label;
  if (o.worked === 'dot' || o.worked === 'doh') out.worked = o.worked;
  const p = o.port853 as Record<string, unknown> | null | undefined;
  if (typeof p === 'object' && p !== null && str(p.kind) && KINDS.has(p.kind) && str(p.classification) && str(p.at)) {
    out.port853 = { kind: p.kind as FailureKind, classification: p.classification, at: p.at };
  }
  const portal = o.portal as Record<string, unknown> | null | undefined;
  if (typeof portal === 'object' && portal !== null && str(portal.seenAt)) out.portal = { seenAt: portal.seenAt, signedIn: portal.signedIn === true };
  const r = o.rewritesDns as Record<string, unknown> | null | undefined;
  if (typeof r === 'object' && r !== null && str(r.seenAt) && str(r.answeredWith) && str(r.asked)) out.rewritesDns = { seenAt: r.seenAt, answeredWith: r.answeredWith, asked: r.asked };
  const lost = o.pqHelloLost as Record<string, unknown> | null | undefined;
  if (typeof lost === 'object' && lost !== null && str(lost.at)) out.pqHelloLost = { at: lost.at };
  const burst = o.burst as Record<string, unknown> | null | undefined;
  if (typeof burst === 'object' && burst !== null && Number.isInteger(burst.windows) && (burst.windows as number) >= 1 && (burst.windows as number) <= MAX_BURST_WINDOWS && str(burst.at)) {
    out.burst = { windows: burst.windows as number, at: burst.at };
  }
  if (str(o.dnsCheckedAt)) out.dnsCheckedAt = o.dnsCheckedAt;
  if (str(o.dnsCheckNote)) out.dnsCheckNote = o.dnsCheckNote;
  const n64 = o.nat64 as Record<string, unknown> | null | undefined;
  if (typeof n64 === 'object' && n64 !== null && str(n64.prefix) && (n64.how === 'ipv4only.arpa' || n64.how === 'well-known') && str(n64.detail) && str(n64.at)) {
    out.nat64 = { prefix: n64.prefix, how: n64.how, detail: n64.detail, at: n64.at };
  }
  const ddr = ddrOf(o.ddr);
  if (ddr) out.ddr = ddr;
  if (o.ownResolver === 'use') out.ownResolver = 'use';
  if (typeof o.rttMs === 'number' && Number.isFinite(o.rttMs) && o.rttMs >= 0) out.rttMs = o.rttMs;
  if (o.localNames === 'allow' || o.localNames === 'deny') out.localNames = o.localNames;
  if (Array.isArray(o.localDomains)) out.localDomains = o.localDomains.filter(str);
  if (str(o.firstSeenAt)) out.firstSeenAt = o.firstSeenAt;
  if (str(o.seenAt)) out.seenAt = o.seenAt;
  if (str(o.importedAt)) out.importedAt = o.importedAt;
  return out;
}

const long = (v: unknown): v is string => typeof v === 'string' && v.length <= 600;

function ddrOf(v: unknown): DdrMemory | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const d = v as Record<string, unknown>;
  if (!str(d.checkedAt) || !str(d.asked) || !long(d.detail)) return undefined;
  const out: { -readonly [K in keyof DdrMemory]?: DdrMemory[K] } = { checkedAt: d.checkedAt, asked: d.asked, detail: d.detail };
  const f = d.offer as Record<string, unknown> | null | undefined;
  if (
    typeof f === 'object' && f !== null && str(f.name) && f.protocol === 'dot' && Number.isInteger(f.port) &&
    (f.port as number) > 0 && (f.port as number) < 65536 && Array.isArray(f.addresses) && f.addresses.length > 0 && f.addresses.every(str) && str(f.verifiedFor)
  ) {
    out.offer = { name: f.name, protocol: f.protocol, port: f.port as number, addresses: f.addresses as string[], ...(str(f.dohUrl) ? { dohUrl: f.dohUrl } : {}), verifiedFor: f.verifiedFor };
  }
  const r = d.rejected as Record<string, unknown> | null | undefined;
  if (typeof r === 'object' && r !== null && str(r.name) && long(r.why)) out.rejected = { name: r.name, why: r.why };
  return out as DdrMemory;
}


/** This machine has been on the network (not only told of it by a settings import). */
export function seenHere(entry: NetworkMemoryEntry): boolean {
  return entry.seenAt !== undefined || entry.firstSeenAt !== undefined;
}

/**
 * How long a network's lost post-quantum ClientHello keeps it on classical
 * key agreement. One lost hello may have been a lossy moment, and a
 * middlebox may be fixed: a day later the network is tried with the
 * post-quantum group again (if it is lost again, the classical retry costs
 * that join 1.5 s once, and the day starts over).
 */
export const PQ_HELLO_LOST_FOR_MS = 24 * 60 * 60 * 1000;

/**
 * How long bursts seen on a network keep its first lookups preparing for
 * one: a week. Past it, the first page there pays its handshakes again,
 * once, and is remembered anew; a network that stopped seeing pages (a
 * machine now used otherwise) stops costing extra connections.
 */
export const BURSTS_HOLD_MS = 7 * 24 * 60 * 60 * 1000;
/** More connections than a pool ever opens for a burst (1 + 8 by default): a larger number in the file is not read. */
export const MAX_BURST_WINDOWS = 64;

/** The connections the last burst on the network needed, while that holds at `now` (BURSTS_HOLD_MS); 0: none. */
function rememberedBurstWindows(entry: NetworkMemoryEntry | undefined, now: number): number {
  const at = entry?.burst ? Date.parse(entry.burst.at) : Number.NaN;
  return Number.isFinite(at) && now - at < BURSTS_HOLD_MS && now >= at ? (entry?.burst?.windows ?? 0) : 0;
}

/** Whether the network's lost post-quantum hello (if any) still holds at `now`. */
export function pqHelloLostHolds(entry: NetworkMemoryEntry | undefined, now: number): boolean {
  const at = entry?.pqHelloLost ? Date.parse(entry.pqHelloLost.at) : Number.NaN;
  return Number.isFinite(at) && now - at < PQ_HELLO_LOST_FOR_MS;
}

/**
 * Where to start on a network: DNS-over-HTTPS at once when port 853 was
 * blocked there (not intercepted) and DoH worked; classical key agreement at
 * once where a post-quantum ClientHello got no answer within the last day;
 * the connections a page needed, where pages' bursts were seen this week.
 */
export function startHint(entry: NetworkMemoryEntry | undefined, now = Date.now()): StartHint {
  const doh = entry?.worked === 'doh' && entry.port853 !== undefined && !INTERCEPTION.has(entry.port853.kind);
  const windows = rememberedBurstWindows(entry, now);
  return {
    ...(doh ? { startOn: 'doh' as const } : {}),
    ...(pqHelloLostHolds(entry, now) ? { classicalOnly: true } : {}),
    ...(windows > 0 ? { burstWindows: windows } : {}),
    ...(entry?.nat64 ? { nat64Prefix: entry.nat64.prefix } : {}),
  };
}

/** What the memory tells the upstream about a network (upstream/managed.ts NetworkHint). */
export interface StartHint {
  readonly startOn?: 'doh';
  readonly classicalOnly?: boolean;
  readonly burstWindows?: number;
  readonly nat64Prefix?: string;
}

export class NetworkMemory {
  readonly #written: () => void;
  readonly #file: string;

  /** `written`: called after each write of the file (a fact or a choice that changed something, a network forgotten). */
  constructor(file: string, written: () => void = () => {}) {
    this.#file = file;
    this.#written = written;
  }

  get file(): string {
    return this.#file;
  }

  get(key: string): NetworkMemoryEntry | undefined {
    return entryOf(this.#read()[key]);
  }

  /** Every network remembered, most recently seen first. */
  list(): { readonly key: string; readonly entry: NetworkMemoryEntry }[] {
    const all = this.#read();
    return Object.keys(all)
      .flatMap((key) => {
        const entry = entryOf(all[key]);
        return entry ? [{ key, entry }] : [];
      })
      .sort((a, b) => (b.entry.seenAt ?? '').localeCompare(a.entry.seenAt ?? ''));
  }

  /**
   * Merges `changes` into the network's entry (a field set to undefined is
   * removed) and writes the file atomically, only when that changed
   * something; the least recently seen networks beyond MAX_NETWORKS are
   * forgotten.
   */
  update(key: string, changes: NetworkMemoryChanges): NetworkMemoryEntry {
    const all = this.#read();
    const before = entryOf(all[key]);
    const next: Record<string, unknown> = { ...before, ...changes };
    for (const k of Object.keys(next)) if (next[k] === undefined) delete next[k];
    const entry = entryOf(next) ?? {};
    if (before && JSON.stringify(before) === JSON.stringify(entry)) return before;
    const networks: Record<string, unknown> = { ...all, [key]: entry };
    const keys = Object.keys(networks);
    if (keys.length > MAX_NETWORKS) {
      const seen = (k: string): string => (k === key ? '\uffff' : (entryOf(networks[k])?.seenAt ?? ''));
      for (const old of keys.sort((a, b) => seen(a).localeCompare(seen(b))).slice(0, keys.length - MAX_NETWORKS)) delete networks[old];
    }
    this.#write(networks);
    return entry;
  }

  /** Forgets one network; false when it wasn't remembered. */
  forget(key: string): boolean {
    const all = this.#read();
    if (!(key in all)) return false;
    delete all[key];
    this.#write(all);
    return true;
  }

  #write(networks: Record<string, unknown>): void {
    writeNetworks(this.#file, networks);
    this.#written();
  }

  #read(): Record<string, unknown> {
    return readNetworks(this.#file);
  }
}

/**
 * The one file shape for what is kept per network, `{ "version": 1,
 * "networks": { "<key>": … } }`: the memory above, and strict mode's sign-in
 * answers (current-network.ts), which keep a file of their own. Written with
 * the project's one atomic write, mode 0600 in a 0700 directory; a file that
 * can't be read counts as nothing kept.
 */
export function readNetworks(file: string): Record<string, unknown> {
  try {
    const j = JSON.parse(fs.readFileSync(file, 'utf8')) as { networks?: Record<string, unknown> };
    return typeof j.networks === 'object' && j.networks !== null && !Array.isArray(j.networks) ? { ...j.networks } : {};
  } catch {
    return {};
  }
}

export function writeNetworks(file: string, networks: Record<string, unknown>): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(file, JSON.stringify({ version: 1, networks }, null, 2) + '\n', 0o600);
}
