/**
 * When the DNS-interception check runs (privacy/dns-check.ts), with the real
 * check against a UDP server on loopback standing where the documentation
 * address would be, and the real owner of the network we're on writing a
 * real networks.json: once per network joined, never again on that join; in
 * strict mode not one query until the user allows local names on that
 * network; a result measured on a network we've left is not written to the
 * next one.
 */
import { expect, test } from 'vitest';
import { dnsPacket } from '../dns/dns-packet.js';
import type { DnsCheckTarget } from '../network/dns-interception.js';
import type { AuthMode } from '../upstream/auth-policy.js';
import { networkWithKey, udpDnsServer } from '../../test-support/network-check-rig.js';
import { DnsCheck } from './dns-check.js';

/** An interceptor on loopback: answers NXDOMAIN to each query after `delayMs` (the first `answer` queries only), and counts them. */
async function interceptor(o: { delayMs?: number; answer?: number } = {}): Promise<{ target: DnsCheckTarget; queries: () => number }> {
  const srv = await udpDnsServer(
    (msg) => {
      if (srv.seen.length > (o.answer ?? Infinity)) return [];
      const q = dnsPacket.decode(msg);
      return [dnsPacket.encode({ type: 'response', id: q.id ?? 0, flags: 3, questions: q.questions ?? [] })];
    },
    { delayMs: o.delayMs ?? 0 },
  );
  return { target: { addresses: ['127.0.0.1'], port: srv.port, timeoutMs: 400 }, queries: () => srv.seen.length };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('opportunistic mode: one check per network joined, remembered for it; nothing else runs it again', async () => {
  const srv = await interceptor();
  const key = { current: 'aaaa' };
  const net = networkWithKey(key);
  net.start();
  const check = new DnsCheck({ network: net, mode: () => 'opportunistic', target: srv.target });
  check.start();
  await check.settled();
  expect(srv.queries()).toBe(1);
  expect(net.remembered('aaaa')).toMatchObject({ rewritesDns: { answeredWith: 'NXDOMAIN', asked: '127.0.0.1' }, dnsCheckedAt: expect.any(String) as unknown });
  expect(check.policy).toBe('every-network');
  // A choice, the key read again, settings: the same join, no second check.
  net.remember('aaaa', { localNames: 'allow' });
  net.emit('changed', { why: 'known' });
  check.settingsChanged();
  await check.settled();
  expect(srv.queries()).toBe(1);
  // Another network: checked once.
  key.current = 'bbbb';
  net.moved();
  await check.settled();
  expect(srv.queries()).toBe(2);
  expect(net.remembered('bbbb')?.rewritesDns?.answeredWith).toBe('NXDOMAIN');
  check.stop();
  net.stop();
});

test('strict mode: not one query until the user allows local names on this network; then one', async () => {
  const srv = await interceptor();
  const net = networkWithKey({ current: 'cccc' });
  net.start();
  let mode: AuthMode = 'strict';
  const check = new DnsCheck({ network: net, mode: () => mode, target: srv.target });
  check.start();
  expect(check.policy).toBe('where-local-names-allowed');
  net.remember('cccc', { localNames: 'deny' });
  await sleep(500);
  expect(srv.queries()).toBe(0);
  expect(net.remembered('cccc')?.dnsCheckedAt).toBeUndefined();
  // "Allow on this network": the owner's 'changed' { why: 'choices' } runs the check now.
  net.remember('cccc', { localNames: 'allow' });
  await check.settled();
  expect(srv.queries()).toBe(1);
  expect(net.remembered('cccc')?.rewritesDns?.answeredWith).toBe('NXDOMAIN');
  check.stop();
  net.stop();
  // Strict → opportunistic on a network nobody allowed: checked at once.
  const other = networkWithKey({ current: 'dddd' });
  other.start();
  mode = 'strict';
  const c2 = new DnsCheck({ network: other, mode: () => mode, target: srv.target });
  c2.start();
  await sleep(100);
  expect(srv.queries()).toBe(1);
  mode = 'opportunistic';
  c2.settingsChanged();
  await c2.settled();
  expect(srv.queries()).toBe(2);
  c2.stop();
  other.stop();
});

test("a result measured on a network we've left is not written to the next one; a check that saw nothing keeps the last sighting", async () => {
  // Answers the first query late (after the move), and nothing after it.
  const srv = await interceptor({ delayMs: 150, answer: 1 });
  const key = { current: 'eeee' };
  const net = networkWithKey(key);
  net.start();
  const check = new DnsCheck({ network: net, mode: () => 'opportunistic', target: srv.target });
  check.start();
  await sleep(20);
  key.current = 'ffff';
  net.moved();
  await sleep(200);
  await check.settled();
  expect(srv.queries()).toBe(2);
  expect(net.remembered('eeee')?.rewritesDns).toBeUndefined();
  // The new network's own check saw nothing: checked, not seen.
  expect(net.remembered('ffff')).toMatchObject({ dnsCheckedAt: expect.any(String) as unknown });
  expect(net.remembered('ffff')?.rewritesDns).toBeUndefined();
  // A sighting, then a check that saw nothing: the sighting stays with its date, the time checked moves.
  net.remember('ffff', { rewritesDns: { seenAt: '2026-11-01T00:00:00.000Z', answeredWith: 'NXDOMAIN', asked: '192.0.2.1' } });
  net.dnsChecked({ answered: null, outcomes: [] });
  const e = net.remembered('ffff');
  expect(e?.rewritesDns?.seenAt).toBe('2026-11-01T00:00:00.000Z');
  expect((e?.dnsCheckedAt ?? '') > '2026-11-01').toBe(true);
  check.stop();
  net.stop();
});
