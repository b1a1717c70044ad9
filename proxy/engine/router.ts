/**
 * Routing by name owner (issue 21; docs/where-names-go.md), the engine's
 * one decision before the upstream: each question goes to the resolver that
 * owns its name (network/name-owners.ts), routedns-style:
 *
 *   Router ─┬─ a name a link owns ─► Cleartext(that link's resolvers)   (marked: local, unencrypted)
 *           ├─ .local, special or unowned private reverse, a search-suffixed multi-label name ─► NXDOMAIN here
 *           ├─ strict mode, local names not allowed on this network ─► SERVFAIL with the reason
 *           └─ everything else ─► the engine's upstream: Cache(captive gate(the chosen encrypted resolver))
 *
 * Local names are allowed per the user's choice for this network: 'allow',
 * 'deny', or 'ask' (not asked yet). In opportunistic mode 'ask' allows (the
 * OS sent them there before); in strict mode 'ask' refuses until the user
 * allows it (no name leaves in cleartext without consent).
 *
 * One cleartext upstream per owner's server list, kept while an owner uses
 * it; the table is replaced whole (setOwners) when the network changes.
 */
import { CurrentNetwork, type NetworkChanged } from '../network/current-network.js';
import { NameOwners, type LocalNamesPolicy, type NameOwner, type NameRouting } from '../network/name-owners.js';
import { NameOwnersRefresher } from '../network/name-sources.js';
import { CleartextUpstream } from '../upstream/plain/cleartext.js';
import type { Upstream } from '../upstream/upstream.js';
import type { RouteMark } from './query-record.js';

export interface RouterOptions {
  /** Strict mode (auth.mode 'strict'): local names go out only where allowed. */
  readonly strict: () => boolean;
  /** The user's choice for the network we're on. */
  readonly localNames: () => LocalNamesPolicy;
  /** Per cleartext attempt (default 1500 ms). */
  readonly timeoutMs?: number;
  /**
   * The user records query names (the setting "Record names in the query
   * log"); off, the name refused first is kept as its network's suffix
   * (`*.lan`), never the name asked. Default: recorded.
   */
  readonly recordNames?: () => boolean;
}

export type Routed =
  | { readonly kind: 'public' }
  | { readonly kind: 'link'; readonly upstream: Upstream; readonly mark: RouteMark }
  | { readonly kind: 'nxdomain'; readonly mark: RouteMark }
  | { readonly kind: 'refused'; readonly mark: RouteMark };

const PUBLIC: Routed = { kind: 'public' };

function serversKey(owner: NameOwner): string {
  return owner.servers.map((s) => `${s.host}#${s.port}`).join(',');
}

/** A local name refused because nobody has chosen for this network yet: what the tray asks about. */
export interface RefusedName {
  /** The name asked, lower case, without the final dot (`printer.lan`); `*.lan` when query names are not recorded. */
  readonly name: string;
  /** The suffix the network owns (`lan`). */
  readonly suffix: string;
  /** When, ms since the epoch. */
  readonly at: number;
}

export class NameRouter {
  readonly #options: RouterOptions;
  #owners: NameOwners = NameOwners.empty;
  readonly #links = new Map<string, CleartextUpstream>();
  /** The first refusal under 'ask' since the last clearRefused() (a new network, or a choice made or forgotten). */
  #firstRefused: RefusedName | null = null;

  constructor(options: RouterOptions) {
    this.#options = options;
  }

  get owners(): NameOwners {
    return this.#owners;
  }

  get firstRefused(): RefusedName | null {
    return this.#firstRefused;
  }

  /** Forgets the refused name (the network changed, or its choice did). */
  clearRefused(): void {
    this.#firstRefused = null;
  }

  /** A new table (the network changed): routes follow at once; cleartext paths no owner uses any more close after their queries finish. */
  setOwners(owners: NameOwners): void {
    this.#owners = owners;
    const used = new Set(owners.owners.map(serversKey));
    if (owners.lan) used.add(serversKey({ ...owners.lan, suffix: '', search: false }));
    for (const r of owners.reverse) used.add(serversKey({ ...r, suffix: '', search: false }));
    for (const [key, upstream] of this.#links) {
      if (!used.has(key)) {
        this.#links.delete(key);
        void upstream.close();
      }
    }
  }

  pick(name: string, type = ''): Routed {
    const route = this.#owners.route(name, type);
    if (route.kind === 'public') return PUBLIC;
    if (route.kind === 'nxdomain') return { kind: 'nxdomain', mark: { kind: 'answered', why: route.why } };
    const owner = route.owner;
    const servers = owner.servers.map((s) => (s.port === 53 ? s.host : `${s.host}:${s.port}`)).join(', ');
    const policy = this.#options.localNames();
    if (policy === 'deny' || (policy === 'ask' && this.#options.strict())) {
      const why =
        policy === 'deny'
          ? `${owner.suffix} is a local name (${owner.link}); local names are not allowed on this network`
          : `${owner.suffix} is a local name (${owner.link}): strict mode sends local names to the network's resolver only once you allow it for this network`;
      if (policy === 'ask') {
        const shown = this.#options.recordNames?.() === false ? `*.${owner.suffix}` : name.toLowerCase().replace(/\.$/, '');
        this.#firstRefused ??= { name: shown, suffix: owner.suffix, at: Date.now() };
      }
      return { kind: 'refused', mark: { kind: 'refused', why } };
    }
    const key = serversKey(owner);
    let upstream = this.#links.get(key);
    if (!upstream) {
      upstream = new CleartextUpstream({ servers: owner.servers, ...(this.#options.timeoutMs !== undefined ? { timeoutMs: this.#options.timeoutMs } : {}) });
      this.#links.set(key, upstream);
    }
    return { kind: 'link', upstream, mark: { kind: 'link', link: owner.link, suffix: owner.suffix, servers, source: owner.source } };
  }

  /** Fails whatever is in flight on the cleartext paths (stop). */
  destroy(): void {
    for (const u of this.#links.values()) u.destroy();
    this.#links.clear();
  }
}

/**
 * A router and what keeps its table current (read at start and on each
 * network change), for a proxy with routing on; with the user's local-names
 * choice remembered per network (network/network-memory.ts), looked up again
 * whenever the table is read (a rejoin finds its choice at once).
 */
/** What the user is shown of routing on the network they're on (the Network view, `dotstub ctl local-names`). */
export interface LocalNamesView {
  /** The network could be told apart (a gateway): a choice can be remembered for it. */
  readonly knownNetwork: boolean;
  /** What applies now: the remembered choice for this network, else the default ('ask': strict refuses, opportunistic sends). */
  readonly policy: LocalNamesPolicy;
  readonly remembered: boolean;
  /** The names this network's links own, and where they go. */
  readonly owners: readonly { readonly suffix: string; readonly link: string; readonly servers: readonly string[]; readonly source: string }[];
  /** The LAN's resolver (home.arpa, .internal, private reverse zones), if known. */
  readonly lan: { readonly link: string; readonly servers: readonly string[] } | null;
  /**
   * The first local name refused on this network while nobody had chosen
   * (strict mode, 'ask'), so the user can be asked once with a name they
   * know; null when none, and again once a choice is made or forgotten.
   */
  readonly firstRefused: RefusedName | null;
}

export interface Routing {
  readonly router: NameRouter;
  view(): LocalNamesView;
  /** The user's choice for the network we're on, remembered for it; false when the network can't be told (no gateway) or nothing is remembered. */
  setLocalNames(policy: 'allow' | 'deny'): boolean;
  /** Reads the table and keeps it current. */
  start(): Promise<void>;
  /** Read it again now (the network changed). */
  refresh(): Promise<void>;
  /** Stops watching; fails what is in flight on the cleartext paths. */
  stop(): void;
}

/**
 * `network`: the network we're on, as the proxy knows it (its one owner:
 * network/current-network.ts); the table is read again when it moves or its
 * key becomes known, and the user's choice for it the moment it changes.
 * Without one (a router on its own), one is made from `names` and read at start.
 */
export function routingFor(names: NameRouting | null, options: RouterOptions & { readonly network?: CurrentNetwork }): Routing | null {
  if (!names) return null;
  const own = options.network === undefined;
  const network = options.network ?? new CurrentNetwork({ file: names.memoryFile ?? null, ...(names.networkKey ? { identify: fixedKey(names.networkKey) } : {}) });
  let key: string | null = null;
  let remembered: LocalNamesPolicy | undefined;
  const router = new NameRouter({ ...options, localNames: () => remembered ?? options.localNames() });
  const apply = (owners: NameOwners): void => {
    router.setOwners(owners);
    if (key !== network.key) router.clearRefused();
    key = network.key;
    const entry = key ? network.remembered(key) : undefined;
    remembered = entry?.localNames;
    const domains = [...new Set(owners.owners.map((o) => o.suffix))].sort();
    if (key && domains.length > 0 && domains.join() !== (entry?.localDomains ?? []).join()) {
      network.remember(key, { localDomains: domains, seenAt: new Date().toISOString() });
    }
  };
  const refresher = new NameOwnersRefresher(names.paths, apply, names.run);
  // A new network (or its key now known): its table and its choices. A choice changed here: applied at once, before the action that changed it answers.
  const onChange = (c: NetworkChanged): void => {
    if (c.why !== 'choices') void refresher.refresh();
    else if (key === network.key) {
      const was = remembered;
      remembered = network.localNames();
      // Other choices (a label, a sign-in answer) leave the question as it is.
      if (remembered !== was) router.clearRefused();
    }
  };
  const serverText = (servers: readonly { readonly host: string; readonly port: number }[]): string[] =>
    servers.map((x) => (x.port === 53 ? x.host : x.host.includes(':') ? `[${x.host}]:${x.port}` : `${x.host}:${x.port}`));
  return {
    router,
    view: () => {
      const owners = router.owners;
      return {
        knownNetwork: key !== null,
        policy: remembered ?? options.localNames(),
        remembered: remembered !== undefined,
        owners: owners.owners.map((o) => ({ suffix: o.suffix, link: o.link, servers: serverText(o.servers), source: o.source })),
        lan: owners.lan ? { link: owners.lan.link, servers: serverText(owners.lan.servers) } : null,
        firstRefused: remembered === undefined ? router.firstRefused : null,
      };
    },
    setLocalNames: (policy) => {
      if (!key || !network.remembering) return false;
      network.remember(key, { localNames: policy, seenAt: new Date().toISOString() });
      return true;
    },
    start: () => {
      if (own) network.start();
      network.on('changed', onChange);
      return refresher.start();
    },
    refresh: () => refresher.refresh(),
    stop: () => {
      network.off('changed', onChange);
      if (own) network.stop();
      refresher.stop();
      router.destroy();
    },
  };
}

/** A key given (tests): final at once. */
function fixedKey(key: () => string | null): () => { readonly key: string; readonly final: boolean } | null {
  return () => {
    const k = key();
    return k === null ? null : { key: k, final: true };
  };
}
