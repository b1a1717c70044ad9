/**
 * The tray offers the network's own encrypted resolver, verified, and takes
 * it only on the user's click (issue 33, item 5): the menu items from a
 * networks view, as the proxy lists them.
 */
import { describe, expect, it } from 'vitest';
import type { NetworksView, OwnResolverView, RememberedNetworkView } from '../../proxy/control/api-types.js';
import { ownResolverOffer } from './own-resolver-offer.js';
import { createTemplate } from './template.js';
import type { TrayState } from './types.js';

const own = (o: Partial<OwnResolverView>): OwnResolverView => ({
  checkedAt: '2026-12-01T10:00:00.000Z',
  asked: '10.53.1.1',
  offer: { name: 'dns.lab.test', protocol: 'dot', port: 853, addresses: ['10.53.1.1'], dohUrl: null, verifiedFor: '10.53.1.1' },
  rejected: null,
  detail: '',
  choice: 'ask',
  inUse: false,
  ...o,
});
const network = (current: boolean, ownResolver: OwnResolverView | null): RememberedNetworkView => ({
  key: current ? 'here0000000000000000000000000000' : 'else0000000000000000000000000000',
  label: 'gateway 10.53.1.1',
  current,
  worked: 'dot',
  port853: null,
  portal: null,
  rewritesDns: null,
  dnsCheckedAt: null,
  dnsCheckNote: null,
  nat64: null,
  rttMs: null,
  localDomains: [],
  localNames: 'ask',
  ownResolver,
  firstSeenAt: null,
  seenAt: null,
});
const view = (...networks: RememberedNetworkView[]): NetworksView => ({ remembering: true, max: 50, networks, waiting: 0, dnsCheck: 'every-network', ddrCheck: 'every-network' });
const base: TrayState = { privacy: 'private', reason: '', resolvers: [], activeResolverId: 'quad9', proxyRunning: true, p50Ms: null, captive: null };

describe("the tray and the network's own encrypted resolver", () => {
  it('offers a verified designation of the network we are on, with a click to use it, remembered under its key', () => {
    const offer = ownResolverOffer(view(network(true, own({}))));
    expect(offer).toEqual({ key: 'here0000000000000000000000000000', name: 'dns.lab.test', verifiedFor: '10.53.1.1', inUse: false });
    const items = createTemplate({ ...base, ...(offer ? { ownResolver: offer } : {}) });
    expect(items.filter((i) => 'id' in i && i.id.startsWith('own-resolver')).map((i) => ('label' in i ? i.label : ''))).toEqual([
      'This network offers encrypted DNS: dns.lab.test',
      'DNS-over-TLS, verified for 10.53.1.1',
      'Use it on this network',
    ]);
    expect(items.find((i) => 'id' in i && i.id === 'own-resolver-use')).toMatchObject({ action: { type: 'own-resolver', key: 'here0000000000000000000000000000', use: true } });
  });

  it('in use: says so, and offers the way back', () => {
    const offer = ownResolverOffer(view(network(true, own({ choice: 'use', inUse: true }))));
    const items = createTemplate({ ...base, ...(offer ? { ownResolver: offer } : {}) });
    expect(items.find((i) => 'id' in i && i.id === 'own-resolver')).toMatchObject({ label: "Using this network's encrypted DNS: dns.lab.test" });
    expect(items.find((i) => 'id' in i && i.id === 'own-resolver-stop')).toMatchObject({ action: { type: 'own-resolver', use: false } });
  });

  it('nothing for a forged designation, none, another network, or no view', () => {
    expect(ownResolverOffer(view(network(true, own({ offer: null, rejected: { name: 'dns.test', why: 'not valid for 10.53.1.1' } }))))).toBeUndefined();
    expect(ownResolverOffer(view(network(true, null)))).toBeUndefined();
    expect(ownResolverOffer(view(network(false, own({}))))).toBeUndefined();
    expect(ownResolverOffer(undefined)).toBeUndefined();
    expect(createTemplate(base).some((i) => 'id' in i && i.id.startsWith('own-resolver'))).toBe(false);
  });
});
