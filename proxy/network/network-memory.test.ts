/**
 * The per-network memory's file: written only when an entry changes, at most
 * MAX_NETWORKS networks (the least recently seen forgotten), a field set to
 * undefined removed, and what can't be read dropped rather than trusted.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, onTestFinished, test } from 'vitest';
import { MAX_NETWORKS, NetworkMemory, startHint } from './network-memory.js';
import { NetworkRecorder } from './network-recorder.js';

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

test('a network is remembered from its first fact, under the key read then: the MAC-based one once the ARP table has it, not the address-based one read at the change', () => {
  const f = file();
  let key = 'keyed-by-address';
  const r = new NetworkRecorder({ file: f, key: () => key, gateway: () => '192.168.1.1', now: () => new Date('2026-11-26T04:00:00.000Z') });
  r.joined();
  expect(fs.existsSync(f)).toBe(false); // nothing happened here yet: nothing left behind
  key = 'keyed-by-mac';
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
