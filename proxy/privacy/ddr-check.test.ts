/**
 * When the network is asked for its own encrypted resolver, and when it is
 * used (privacy/ddr-check.ts), with the real measurement (network/ddr.ts)
 * on loopback: a UDP server standing for the network's resolver answers
 * `_dns.resolver.arpa` SVCB designating dns.test at 127.0.0.1, and a real
 * unbound serves DoT there with the test PKI's certificate (dns.test,
 * IP:127.0.0.1); the real owner of the network we're on writes a real
 * networks.json. Asked once per join; in strict mode not until the user
 * allows local names; used only where chosen, from the memory at once on a
 * rejoin; left when the network is; a result from a network we've left is
 * not written to the next one.
 */
import { afterAll, beforeAll, expect, onTestFinished, test } from 'vitest';
import { dnsPacket } from '../dns/dns-packet.js';
import type { CurrentNetwork } from '../network/current-network.js';
import type { NetworkServer } from '../network/network-resolver.js';
import { parseResolverArg, type ResolverSpec } from '../config/resolvers.js';
import type { AuthMode } from '../upstream/auth-policy.js';
import { networkWithKey, udpDnsServer } from '../../test-support/network-check-rig.js';
import { startUnbound, type UnboundServer } from '../../test-support/unbound.js';
import { DdrCheck } from './ddr-check.js';
import { ResolverChoice } from './resolver-choice.js';

let dot: UnboundServer;
beforeAll(async () => {
  dot = await startUnbound({ names: 1 });
});
afterAll(async () => {
  await dot?.stop();
});

/** SVCB RDATA: priority 1, `target`, alpn=dot, port, ipv4hint 127.0.0.1. */
function svcb(target: string, port: number): Buffer {
  const name = Buffer.concat([...target.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])]);
  const param = (k: number, v: Buffer): Buffer => Buffer.concat([Buffer.from([k >> 8, k & 0xff, v.length >> 8, v.length & 0xff]), v]);
  return Buffer.concat([Buffer.from([0, 1]), name, param(1, Buffer.from([3, ...Buffer.from('dot')])), param(3, Buffer.from([port >> 8, port & 0xff])), param(4, Buffer.from([127, 0, 0, 1]))]);
}

/** The network's resolver on loopback: answers the SVCB question (after `delayMs`), counts the questions. */
async function networkResolver(o: { delayMs?: number; at?: string } = {}): Promise<{ server: NetworkServer; queries: () => number }> {
  const srv = await udpDnsServer(
    (msg) => {
      const q = dnsPacket.decode(msg);
      const answers = [{ type: 'UNKNOWN_64' as 'A', name: '_dns.resolver.arpa', ttl: 300, data: svcb('dns.test', dot.port) as unknown as string }];
      return [dnsPacket.encode({ type: 'response', id: q.id ?? 0, flags: dnsPacket.RECURSION_DESIRED, questions: q.questions ?? [], answers })];
    },
    { delayMs: o.delayMs ?? 0, ...(o.at ? { at: o.at } : {}) },
  );
  return { server: { host: srv.host, port: srv.port }, queries: () => srv.seen.length };
}

/** The check, and the resolver's owner it tells (resolver-choice.ts): `used` lists each switch it made (null: back to the user's own). */
function rig(mode: () => AuthMode, server: NetworkServer, net: CurrentNetwork): { check: DdrCheck; used: (ResolverSpec | null)[] } {
  const used: (ResolverSpec | null)[] = [];
  const own = parseResolverArg('127.0.0.1:9#own.test');
  const choice = new ResolverChoice({
    first: own,
    network: net,
    run: (spec) => {
      used.push(spec === own ? null : spec);
      return Promise.resolve();
    },
    told: () => undefined,
    warning: () => undefined,
  });
  const check = new DdrCheck({ network: net, mode, networkResolver: () => server, options: () => ({ ca: [dot.pki.caPem], timeoutMs: 1500 }), checked: () => choice.offerChecked() });
  choice.start();
  onTestFinished(() => {
    check.stop();
    choice.stop();
  });
  return { check, used };
}

test('opportunistic mode: asked once per network joined, the verified offer remembered for it; nothing used until chosen, then at once, and again from the memory on a rejoin', async () => {
  const resolver = await networkResolver();
  const key = { current: 'aaaa' };
  const net = networkWithKey(key);
  net.start();
  const { check, used } = rig(() => 'opportunistic', resolver.server, net);
  check.start();
  await check.settled();
  expect(resolver.queries()).toBe(1);
  expect(net.remembered('aaaa')?.ddr).toMatchObject({ asked: '127.0.0.1', offer: { name: 'dns.test', port: dot.port, addresses: ['127.0.0.1'], verifiedFor: '127.0.0.1' } });
  expect(check.policy).toBe('every-network');
  expect(used.every((u) => u === null)).toBe(true);

  // Chosen: used at once; another choice on the same join asks nothing more.
  net.remember('aaaa', { ownResolver: 'use' });
  expect(used.at(-1)).toMatchObject({ authName: 'dns.test' });
  await check.settled();
  expect(resolver.queries()).toBe(1);

  // Another network: the user's own again, and that network asked once.
  key.current = 'bbbb';
  net.moved();
  expect(used.at(-1)).toBeNull();
  await check.settled();
  expect(resolver.queries()).toBe(2);

  // Back: the remembered choice applies before the new answer comes; asked again to confirm.
  key.current = 'aaaa';
  const before = used.length;
  net.moved();
  expect(used[before]).toMatchObject({ authName: 'dns.test' });
  await check.settled();
  expect(resolver.queries()).toBe(3);
});

test('strict mode: not one question until the user allows local names on this network, or chose its own resolver before', async () => {
  const resolver = await networkResolver();
  const key = { current: 'aaaa' };
  const net = networkWithKey(key);
  net.start();
  const { check } = rig(() => 'strict', resolver.server, net);
  check.start();
  await new Promise((r) => setTimeout(r, 200));
  expect(resolver.queries()).toBe(0);
  expect(check.policy).toBe('where-local-names-allowed');
  net.remember('aaaa', { localNames: 'allow' });
  await check.settled();
  expect(resolver.queries()).toBe(1);

  // A network where the user chose its own resolver earlier (and allowed nothing else): it is asked, to confirm the choice still holds.
  net.remember('cccc', { ownResolver: 'use', ddr: { checkedAt: 'x', asked: '127.0.0.1', detail: '', offer: { name: 'dns.test', protocol: 'dot', port: dot.port, addresses: ['127.0.0.1'], verifiedFor: '127.0.0.1' } } });
  key.current = 'cccc';
  net.moved();
  await check.settled();
  expect(resolver.queries()).toBe(2);
  key.current = 'dddd';
  net.moved();
  await new Promise((r) => setTimeout(r, 200));
  expect(resolver.queries()).toBe(2);
});

test("an answer that comes after the network changed is not written to the next one's memory", async () => {
  const resolver = await networkResolver({ delayMs: 300 });
  const key = { current: 'aaaa' };
  const net = networkWithKey(key);
  net.start();
  const { check } = rig(() => 'opportunistic', resolver.server, net);
  check.start();
  key.current = 'bbbb';
  net.moved();
  await new Promise((r) => setTimeout(r, 1000));
  await check.settled();
  // Both joins asked; each result went to its own join only: bbbb's own check wrote bbbb, aaaa's late one wrote nothing.
  expect(resolver.queries()).toBe(2);
  expect(net.remembered('aaaa')?.ddr).toBeUndefined();
  expect(net.remembered('bbbb')?.ddr?.offer?.name).toBe('dns.test');
});

test('a network resolver at 127.0.0.2 designating dns.test at 127.0.0.1, whose certificate names 127.0.0.1 only: refused, with why; nothing offered, nothing used even if chosen before', async () => {
  const resolver = await networkResolver({ at: '127.0.0.2' });
  const key = { current: 'aaaa' };
  const net = networkWithKey(key);
  net.start();
  net.remember('aaaa', { ownResolver: 'use' });
  const { check, used } = rig(() => 'opportunistic', resolver.server, net);
  check.start();
  await check.settled();
  const ddr = net.remembered('aaaa')?.ddr;
  expect(ddr?.offer).toBeUndefined();
  expect(ddr?.rejected).toMatchObject({ name: 'dns.test' });
  expect(ddr?.rejected?.why).toContain('is not valid for 127.0.0.2');
  expect(used.every((u) => u === null)).toBe(true);
});
