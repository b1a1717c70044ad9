/**
 * The per-network memory's file: written only when an entry changes, at most
 * MAX_NETWORKS networks (the least recently seen forgotten), a field set to
 * undefined removed, and what can't be read dropped rather than trusted.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, onTestFinished, test } from 'vitest';
import { BURSTS_HOLD_MS, MAX_NETWORKS, NetworkMemory, PQ_HELLO_LOST_FOR_MS, pqHelloLostHolds, startHint } from './network-memory.js';
import { networkIdentity, networkKey } from './network-key.js';
import { CurrentNetwork } from './current-network.js';

function file(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-network-memory-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'networks.json');
}

test('written on change only: the same facts again leave the file untouched', () => {
  const f = file();
  const m = new NetworkMemory(f);
  m.update('k', { worked: 'doh', port853: { kind: 'dropped', classification: 'NET_DROPPED', at: '2026-11-26T03:00:00.000Z' } });
  const before = fs.statSync(f);
  fs.utimesSync(f, new Date(0), new Date(0));
  m.update('k', { worked: 'doh' });
  expect(fs.statSync(f).mtimeMs).toBe(0);
  m.update('k', { worked: 'dot', port853: undefined });
  expect(fs.statSync(f).mtimeMs).toBeGreaterThan(0);
  expect(m.get('k')).toEqual({ worked: 'dot' });
  expect(before.mode & 0o777).toBe(0o600);
});

test(`at most ${MAX_NETWORKS} networks: the least recently seen is forgotten first, never the one just written`, () => {
  const m = new NetworkMemory(file());
  for (let i = 0; i < MAX_NETWORKS; i++) m.update(`n${i}`, { seenAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() });
  m.update('n0', { seenAt: '2026-06-01T00:00:00.000Z' }); // n0 seen again: n1 is now the oldest
  m.update('new', {});
  const keys = m.list().map((x) => x.key);
  expect(keys).toHaveLength(MAX_NETWORKS);
  expect(keys).toContain('new');
  expect(keys).toContain('n0');
  expect(keys).not.toContain('n1');
  expect(keys[0]).toBe('n0'); // most recently seen first
  expect(m.forget('n0')).toBe(true);
  expect(m.forget('n0')).toBe(false);
});

test('fields that are not what they should be are dropped, not trusted; the hint needs DoH to have worked and 853 not intercepted', () => {
  const f = file();
  fs.writeFileSync(f, JSON.stringify({ version: 1, networks: { k: { worked: 'carrier-pigeon', port853: { kind: 'nonsense', classification: 'X', at: 'y' }, rttMs: -3, localNames: 'maybe', label: 7 } } }));
  const m = new NetworkMemory(f);
  expect(m.get('k')).toEqual({});
  expect(startHint({ worked: 'doh', port853: { kind: 'dropped', classification: 'NET_DROPPED', at: 'x' } })).toEqual({ startOn: 'doh' });
  expect(startHint({ worked: 'doh', port853: { kind: 'resigned', classification: 'NET_RESIGNED', at: 'x' } })).toEqual({});
  expect(startHint({ worked: 'dot' })).toEqual({});
  expect(startHint(undefined)).toEqual({});
});

test('a network that lost a post-quantum ClientHello is remembered so, and its hint says classical key agreement', () => {
  const m = new NetworkMemory(file());
  m.update('k', { pqHelloLost: { at: '2026-12-02T01:00:00.000Z' }, worked: 'dot' });
  expect(m.get('k')).toMatchObject({ pqHelloLost: { at: '2026-12-02T01:00:00.000Z' } });
  expect(startHint(m.get('k'), Date.parse('2026-12-02T01:00:00.000Z') + 60_000)).toEqual({ classicalOnly: true });
  expect(startHint({ worked: 'dot' })).toEqual({});
  // A malformed record is no record.
  const f = file();
  fs.writeFileSync(f, JSON.stringify({ version: 1, networks: { k: { pqHelloLost: true } } }));
  expect(startHint(new NetworkMemory(f).get('k'))).toEqual({});
});

test('a lost post-quantum hello holds for a day: then the network is tried with the post-quantum group again', () => {
  const at = Date.parse('2026-12-02T01:00:00.000Z');
  const entry = { pqHelloLost: { at: '2026-12-02T01:00:00.000Z' } };
  expect(startHint(entry, at + PQ_HELLO_LOST_FOR_MS - 1000)).toEqual({ classicalOnly: true });
  expect(startHint(entry, at + PQ_HELLO_LOST_FOR_MS)).toEqual({});
  expect(pqHelloLostHolds(entry, at + 2 * PQ_HELLO_LOST_FOR_MS)).toBe(false);
  // An unreadable time is no record.
  expect(startHint({ pqHelloLost: { at: 'yesterday' } }, at)).toEqual({});
});

test('on the network: a lost hello is written once, holds for a day, and is written again when lost again after that', () => {
  const f = file();
  let now = Date.parse('2026-11-26T04:00:00.000Z');
  const r = new CurrentNetwork({ file: f, identify: () => ({ key: 'home', final: true }), gateway: () => '192.168.1.1', now: () => new Date(now) });
  r.joined();
  r.pqHelloLost();
  expect(r.hint()).toEqual({ classicalOnly: true });
  now += 60_000;
  r.pqHelloLost(); // still holding: not written again
  expect(new NetworkMemory(f).get('home')?.pqHelloLost).toEqual({ at: '2026-11-26T04:00:00.000Z' });
  now += PQ_HELLO_LOST_FOR_MS;
  expect(r.hint()).toEqual({});
  r.pqHelloLost();
  expect(new NetworkMemory(f).get('home')?.pqHelloLost).toEqual({ at: new Date(now).toISOString() });
  expect(r.hint()).toEqual({ classicalOnly: true });
});

test("pages' bursts seen on a network: the connections the last one needed are remembered for a week, written when that changes or a day on, and a bad record is no record", () => {
  const f = file();
  let now = Date.parse('2026-11-26T04:00:00.000Z');
  const r = new CurrentNetwork({ file: f, identify: () => ({ key: 'home', final: true }), gateway: () => '192.168.1.1', now: () => new Date(now) });
  r.joined();
  expect(r.hint()).toEqual({});
  r.burstSeen(6);
  expect(r.hint()).toEqual({ burstWindows: 6 });
  // The same again within the day: not written (never per burst).
  fs.utimesSync(f, new Date(0), new Date(0));
  now += 60_000;
  r.burstSeen(6);
  expect(fs.statSync(f).mtimeMs).toBe(0);
  // A page that needed more: written at once.
  r.burstSeen(8);
  expect(new NetworkMemory(f).get('home')?.burst).toEqual({ windows: 8, at: new Date(now).toISOString() });
  // A day on, the same number refreshes the time, so a network in daily use keeps it.
  now += 24 * 60 * 60 * 1000;
  r.burstSeen(8);
  expect(new NetworkMemory(f).get('home')?.burst?.at).toBe(new Date(now).toISOString());
  // A week without a page: the first lookups here prepare nothing any more.
  now += BURSTS_HOLD_MS;
  expect(r.hint()).toEqual({});
  // Nonsense is neither written nor read.
  r.burstSeen(0);
  r.burstSeen(1000);
  expect(new NetworkMemory(f).get('home')?.burst?.windows).toBe(8);
  const g = file();
  fs.writeFileSync(g, JSON.stringify({ version: 1, networks: { k: { burst: { windows: 500, at: '2026-11-26T04:00:00.000Z' } }, j: { burst: { windows: 3 } } } }));
  const m = new NetworkMemory(g);
  expect(m.get('k')).toEqual({});
  expect(m.get('j')).toEqual({});
});

test('a network is remembered from its first fact, under the key read then: the MAC-based one once the ARP table has it, not the address-based one read at the change', () => {
  const f = file();
  let id = { key: 'keyed-by-address', final: false };
  const r = new CurrentNetwork({ file: f, identify: () => id, gateway: () => '192.168.1.1', now: () => new Date('2026-11-26T04:00:00.000Z') });
  r.joined();
  expect(fs.existsSync(f)).toBe(false); // nothing happened here yet: nothing left behind
  id = { key: 'keyed-by-mac', final: true };
  r.dotFailed('dropped', 'NET_DROPPED');
  r.opened('doh');
  const m = new NetworkMemory(f);
  expect(m.list().map((x) => x.key)).toEqual(['keyed-by-mac']);
  expect(m.get('keyed-by-mac')).toEqual({
    label: 'gateway 192.168.1.1',
    worked: 'doh',
    port853: { kind: 'dropped', classification: 'NET_DROPPED', at: '2026-11-26T04:00:00.000Z' },
    firstSeenAt: '2026-11-26T04:00:00.000Z',
    seenAt: '2026-11-26T04:00:00.000Z',
  });
  for (let i = 0; i < 16; i++) r.answered(20_000 + i * 1000);
  expect(m.get('keyed-by-mac')?.rttMs).toBe(27.5);
});

test('a rejoin before the gateway\'s MAC is in the ARP table: no key meanwhile (no memory missed, no second entry), the network\'s own once the MAC comes; a link without ARP is keyed by its address after 3 s', () => {
  const f = file();
  fs.writeFileSync(f, JSON.stringify({ version: 1, networks: { 'cafe-by-mac': { label: 'gateway 10.20.0.1', worked: 'doh', port853: { kind: 'dropped', classification: 'NET_DROPPED', at: 'x' }, firstSeenAt: 'a', seenAt: 'b' } } }));
  let now = Date.parse('2026-11-26T04:00:00.000Z');
  let id = { key: 'cafe-by-address', final: false };
  const r = new CurrentNetwork({ file: f, identify: () => id, gateway: () => '10.20.0.1', now: () => new Date(now) });
  r.joined();
  expect([r.key, r.provisional, r.hint()]).toEqual([null, true, {}]);
  r.dotFailed('dropped', 'NET_DROPPED'); // a fact meanwhile is not written under a key that may change
  now += 40;
  expect(r.settle()).toBe(false);
  id = { key: 'cafe-by-mac', final: true };
  now += 40;
  expect(r.settle()).toBe(true);
  expect([r.key, r.provisional, r.hint()]).toEqual(['cafe-by-mac', false, { startOn: 'doh' }]);
  expect(new NetworkMemory(f).list().map((x) => x.key)).toEqual(['cafe-by-mac']);
  expect(new NetworkMemory(f).get('cafe-by-mac')?.seenAt).toBe(new Date(now).toISOString());

  // A point-to-point link: no MAC ever comes; after 3 s its address is the key.
  id = { key: 'tun-by-address', final: false };
  r.joined();
  now += 2999;
  expect([r.settle(), r.key]).toEqual([false, null]);
  now += 1;
  expect([r.settle(), r.key]).toEqual([true, 'tun-by-address']);
});

test('networkIdentity: the gateway from the routing table, keyed by its MAC from the ARP table, or by its address (provisional) while the MAC is unknown', () => {
  const dir = path.dirname(file());
  const route = path.join(dir, 'route');
  const arp = path.join(dir, 'arp');
  // 192.168.1.1 as /proc/net/route writes it (little-endian hex).
  fs.writeFileSync(route, 'Iface\tDestination\tGateway \tFlags\nwlp2s0\t00000000\t0101A8C0\t0003\n');
  fs.writeFileSync(arp, 'IP address       HW type     Flags       HW address            Mask     Device\n192.168.1.1      0x1         0x0         00:00:00:00:00:00     *        wlp2s0\n');
  const before = networkIdentity(route, arp);
  expect(before?.byMac).toBe(false);
  fs.writeFileSync(arp, 'IP address       HW type     Flags       HW address            Mask     Device\n192.168.1.1      0x1         0x2         02:53:00:00:01:01     *        wlp2s0\n');
  const after = networkIdentity(route, arp);
  expect(after?.byMac).toBe(true);
  expect(after?.key).toMatch(/^[0-9a-f]{32}$/);
  expect(after?.key).not.toBe(before?.key);
  expect(networkKey(route, arp)).toBe(after?.key);
});
