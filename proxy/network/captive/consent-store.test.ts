import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, onTestFinished, test } from 'vitest';
import { ConsentStore } from './consent-store.js';

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-consent-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('answers are kept per network, owner-only, and survive a new store', () => {
  const file = path.join(tempDir(), 'sub', 'captive-consent.json');
  const store = new ConsentStore(file);
  expect(store.get('net-a')).toBeUndefined();
  store.set('net-a', 'allow');
  store.set('net-b', 'decline');
  const again = new ConsentStore(file);
  expect(again.get('net-a')).toBe('allow');
  expect(again.get('net-b')).toBe('decline');
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  // No temp file left behind by the atomic write.
  expect(fs.readdirSync(path.dirname(file))).toEqual(['captive-consent.json']);
});

test('a damaged file counts as no answer, and the next answer replaces it', () => {
  const file = path.join(tempDir(), 'captive-consent.json');
  fs.writeFileSync(file, '{ not json');
  const store = new ConsentStore(file);
  expect(store.get('net-a')).toBeUndefined();
  store.set('net-a', 'decline');
  expect(store.get('net-a')).toBe('decline');
});
