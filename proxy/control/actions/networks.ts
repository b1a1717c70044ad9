/**
 * The networks dotstub remembers, through the control API (issue 21, item 3):
 *
 *   GET    /api/networks        every network remembered (the one we're on marked), what worked there,
 *                                whether it answers DNS for every address, and where this run checks that
 *   PUT    /api/networks/:key   { "localNames": "allow" | "deny" | "ask" }: the user's choice for that network
 *                                { "ownResolver": "use" | "ask" }: use the network's own encrypted resolver there (its offer), or not
 *   DELETE /api/networks/:key   "Forget this network"
 *
 * Bad input gets a 400 with a sentence and changes nothing; an unknown key a
 * 404. A change to the network we're on applies at once (the name router
 * reads its choice again).
 */
import type { StubProxy } from '../../dotstub.js';
import type { LocalNamesPolicy } from '../../network/name-owners.js';
import type { CurrentNetwork } from '../../network/current-network.js';
import { MAX_NETWORKS, seenHere, type NetworkMemoryEntry } from '../../network/network-memory.js';
import type { NetworksView, OwnResolverView, RememberedNetworkView } from '../api-types.js';
import { ApiFailure, validationFailure } from '../errors.js';

const KEY = /^[A-Za-z0-9_-]{1,64}$/;

/** A 400 whose message is the field's sentence. */
export function sentence(field: string, text: string): ApiFailure {
  return validationFailure({ [field]: text }, {}, text);
}
const NOT_REMEMBERING = 'dotstub remembers no networks in this run (no config directory for its memory)';

function ownResolverView(e: NetworkMemoryEntry, current: boolean, inUseId: string): OwnResolverView | null {
  const d = e.ddr;
  if (!d) return null;
  const o = d.offer;
  return {
    checkedAt: d.checkedAt,
    asked: d.asked,
    offer: o ? { name: o.name, protocol: o.protocol, port: o.port, addresses: o.addresses, dohUrl: o.dohUrl ?? null, verifiedFor: o.verifiedFor } : null,
    rejected: d.rejected ?? null,
    detail: d.detail,
    choice: e.ownResolver ?? 'ask',
    inUse: current && o !== undefined && e.ownResolver === 'use' && inUseId === `network:${o.name}`,
  };
}

function networkView(key: string, e: NetworkMemoryEntry, current: string | null, inUseId = ''): RememberedNetworkView {
  return {
    key,
    label: e.label ?? `network seen first on ${(e.firstSeenAt ?? e.seenAt ?? '').slice(0, 10) || 'an unknown day'}`,
    current: key === current,
    worked: e.worked ?? null,
    port853: e.port853 ?? null,
    portal: e.portal ?? null,
    rewritesDns: e.rewritesDns ?? null,
    dnsCheckedAt: e.dnsCheckedAt ?? null,
    dnsCheckNote: e.dnsCheckNote ?? null,
    nat64: e.nat64 ?? null,
    rttMs: e.rttMs ?? null,
    localDomains: e.localDomains ?? [],
    localNames: e.localNames ?? 'ask',
    ownResolver: ownResolverView(e, key === current, inUseId),
    firstSeenAt: e.firstSeenAt ?? null,
    seenAt: e.seenAt ?? null,
  };
}

export function networksView(proxy: StubProxy): NetworksView {
  const network = proxy.network;
  if (!network.remembering) return { remembering: false, max: MAX_NETWORKS, networks: [], waiting: 0, dnsCheck: proxy.checks.dnsCheck, ddrCheck: proxy.checks.ddrCheck };
  const all = network.list();
  // An imported choice for a network never seen here is not a network the user has been on: not listed, counted.
  const seen = all.filter(({ entry }) => seenHere(entry));
  return {
    remembering: true,
    max: MAX_NETWORKS,
    networks: seen.map(({ key, entry }) => networkView(key, entry, network.key, proxy.resolver.id)),
    waiting: all.length - seen.length,
    dnsCheck: proxy.checks.dnsCheck,
    ddrCheck: proxy.checks.ddrCheck,
  };
}

/** The network's owner, for a known key, or the error that says why not. */
function known(proxy: StubProxy, key: string): CurrentNetwork {
  const network = proxy.network;
  if (!network.remembering) throw new ApiFailure('networks_not_remembered', NOT_REMEMBERING);
  if (!KEY.test(key)) throw validationFailure({ key: 'a network key is the 32 hexadecimal characters GET /api/networks lists' }, { key: 'bad_value' }, 'a network key is the 32 hexadecimal characters GET /api/networks lists; nothing was changed');
  if (!network.remembered(key)) throw new ApiFailure('unknown_network', `no remembered network has the key ${key} (forgotten already?); nothing was changed`);
  return network;
}

/** Reads a local-names choice: 'allow', 'deny' or 'ask' (forget the choice); `field` names it in the error. */
export function parseLocalNames(v: unknown, field = 'localNames'): LocalNamesPolicy {
  if (v === 'allow' || v === 'deny' || v === 'ask') return v;
  throw sentence(field, `${field} must be "allow" (send this network's local names to its own resolver, unencrypted), "deny" (never) or "ask" (not decided); nothing was changed`);
}

/**
 * The user's choice for a remembered network, one at a time: its local names
 * (`localNames`), or its own encrypted resolver (`ownResolver`: "use" its
 * verified offer there, "ask" to go back to the user's own). On the network
 * we're on it applies at once (the owner's 'changed').
 */
export function setNetworkChoice(proxy: StubProxy, key: string, raw: unknown): RememberedNetworkView {
  const network = known(proxy, key);
  const keys = typeof raw === 'object' && raw !== null ? Object.keys(raw) : [];
  const extra = keys.filter((k) => k !== 'localNames' && k !== 'ownResolver');
  if (extra.length > 0) throw sentence(extra[0] as string, `only localNames or ownResolver can be changed for a network (not ${extra[0] as string}); nothing was changed`);
  if (keys.length > 1) throw sentence('ownResolver', 'change localNames or ownResolver, one at a time; nothing was changed');
  const body = (typeof raw === 'object' && raw !== null ? raw : {}) as { localNames?: unknown; ownResolver?: unknown };
  if ('ownResolver' in body) {
    const v = body.ownResolver;
    if (v !== 'use' && v !== 'ask') throw sentence('ownResolver', 'ownResolver must be "use" (this network\'s own encrypted resolver, on this network) or "ask" (your own resolver); nothing was changed');
    if (v === 'use' && !network.remembered(key)?.ddr?.offer) {
      throw sentence('ownResolver', 'this network offers no verified encrypted resolver of its own (none designated, or its certificate did not cover the network resolver\'s address); nothing was changed');
    }
    // "Use it on this network", clicked again after a pick set it aside for this join: it runs again now.
    if (v === 'use' && key === network.key) proxy.choice.networkOwnChosen();
    const entry = network.remember(key, { ownResolver: v === 'use' ? 'use' : undefined }) ?? {};
    return networkView(key, entry, network.key, proxy.resolver.id);
  }
  const policy = parseLocalNames(body.localNames);
  const entry = network.remember(key, { localNames: policy === 'ask' ? undefined : policy }) ?? {};
  return networkView(key, entry, network.key, proxy.resolver.id);
}

/** "Forget this network": everything remembered about it goes; on the network we're on, its choice stops applying at once (the owner's 'changed'). */
export function forgetNetwork(proxy: StubProxy, key: string): void {
  known(proxy, key).forget(key);
}
