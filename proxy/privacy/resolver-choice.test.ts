/**
 * Which resolver runs (resolver-choice.ts), with a fake switch: the user's
 * pick, a network's own resolver chosen for it, the pick that sets it aside
 * for one join only, and every switch the owner makes by itself told.
 */
import { expect, onTestFinished, test } from 'vitest';
import { networkWithKey } from '../../test-support/network-check-rig.js';
import { parseResolverArg, type ResolverSpec } from '../config/resolvers.js';
import type { CurrentNetwork } from '../network/current-network.js';
import { ResolverChoice, type ResolverSwitchTold } from './resolver-choice.js';

const OFFER = { name: 'dns.home.test', protocol: 'dot' as const, port: 853, addresses: ['192.0.2.53'], verifiedFor: '192.0.2.1' };

function rig(net: CurrentNetwork) {
  const ran: string[] = [];
  const told: ResolverSwitchTold[] = [];
  const own = parseResolverArg('127.0.0.1:9#own.test');
  const choice = new ResolverChoice({
    first: own,
    network: net,
    run: (spec: ResolverSpec) => {
      ran.push(spec.id);
      return Promise.resolve();
    },
    told: (e) => told.push(e),
    warning: (w) => {
      throw new Error(w);
    },
  });
  onTestFinished(() => choice.stop());
  return { choice, ran, told, own };
}

function home(): { net: CurrentNetwork; key: { current: string } } {
  const key = { current: 'home' };
  const net = networkWithKey(key);
  net.start();
  onTestFinished(() => net.stop());
  net.remember('home', { ownResolver: 'use', ddr: { checkedAt: '2026-12-01T10:00:00.000Z', asked: '192.0.2.1', detail: '', offer: OFFER } });
  return { net, key };
}

test("a network's own resolver, chosen for it, runs from the start, told; nothing switches before start", () => {
  const { net } = home();
  const { choice, ran, told, own } = rig(net);
  expect(ran).toEqual([]);
  choice.start();
  expect(ran).toEqual(['network:dns.home.test']);
  expect(told).toMatchObject([{ from: { id: own.id }, to: { id: 'network:dns.home.test' }, reason: expect.stringContaining('as you chose for this network') }]);
  expect(choice.chosen.id).toBe(own.id);
});

test("the user's pick on such a network runs now and sets the network's own aside for this join only: another choice changed meanwhile keeps the pick, a rejoin goes back to its own", async () => {
  const { net } = home();
  const { choice, ran, told } = rig(net);
  choice.start();
  const pick = parseResolverArg('127.0.0.2:853#pick.test');
  await choice.choose(pick);
  expect(ran.at(-1)).toBe(pick.id);
  expect(choice.chosen.id).toBe(pick.id);
  // The choice stays remembered: only this join is set aside.
  expect(net.remembered('home')?.ownResolver).toBe('use');
  net.remember('home', { localNames: 'deny' });
  choice.offerChecked();
  expect(ran.at(-1)).toBe(pick.id);

  const toldBefore = told.length;
  net.moved();
  expect(ran.at(-1)).toBe('network:dns.home.test');
  expect(told.slice(toldBefore)).toMatchObject([{ from: { id: pick.id }, to: { id: 'network:dns.home.test' } }]);
});

test('"Use it on this network" after a pick on the same join: runs again at once', async () => {
  const { net } = home();
  const { choice, ran } = rig(net);
  choice.start();
  await choice.choose(parseResolverArg('127.0.0.2:853#pick.test'));
  choice.networkOwnChosen();
  net.remember('home', { ownResolver: 'use' });
  expect(ran.at(-1)).toBe('network:dns.home.test');
});

test("another network: the user's own, told; the network's own chosen nowhere else", () => {
  const { net, key } = home();
  const { choice, ran, told, own } = rig(net);
  choice.start();
  key.current = 'cafe';
  net.moved();
  expect(ran).toEqual(['network:dns.home.test', own.id]);
  expect(told.at(-1)).toMatchObject({ to: { id: own.id }, reason: expect.stringContaining('was your choice for another network') });
});

test('settings that rebuild the pool: the resolver running now again, not the user\'s own', async () => {
  const { net } = home();
  const { choice, ran } = rig(net);
  choice.start();
  await choice.rebuild();
  expect(ran).toEqual(['network:dns.home.test', 'network:dns.home.test']);
});
