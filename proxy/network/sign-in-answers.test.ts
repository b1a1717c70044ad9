/**
 * Strict mode's "Allow sign-in?" answers, kept by the one owner of the
 * network we're on (current-network.ts) in their own file, as they always
 * were: per network, owner-only, atomic, and gone with "Forget this network".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, onTestFinished, test } from 'vitest';
import { CurrentNetwork } from './current-network.js';

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-consent-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const on = (signInFile: string): CurrentNetwork => new CurrentNetwork({ file: null, signInFile, identify: () => ({ key: 'net-a', final: true }) });

test('answers are kept per network, owner-only, and survive a new store', () => {
  const file = path.join(tempDir(), 'sub', 'captive-consent.json');
  const store = on(file);
  expect(store.signInAnswer('net-a')).toBeUndefined();
  store.rememberSignIn('net-a', 'allow');
  store.rememberSignIn('net-b', 'decline');
  const again = on(file);
  expect(again.signInAnswer('net-a')).toBe('allow');
  expect(again.signInAnswer('net-b')).toBe('decline');
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  // No temp file left behind by the atomic write.
  expect(fs.readdirSync(path.dirname(file))).toEqual(['captive-consent.json']);
  expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ version: 1, networks: { 'net-a': 'allow', 'net-b': 'decline' } });
});

test('a damaged file counts as no answer, and the next answer replaces it', () => {
  const file = path.join(tempDir(), 'captive-consent.json');
  fs.writeFileSync(file, '{ not json');
  const store = on(file);
  expect(store.signInAnswer('net-a')).toBeUndefined();
  store.rememberSignIn('net-a', 'decline');
  expect(store.signInAnswer('net-a')).toBe('decline');
});

test('"Forget this network" forgets its sign-in answer with the rest; another network\'s answer stays; nothing kept, nothing written', () => {
  const file = path.join(tempDir(), 'captive-consent.json');
  const store = on(file);
  store.rememberSignIn('net-a', 'allow');
  store.rememberSignIn('net-b', 'decline');
  const heard: string[] = [];
  store.start();
  store.on('changed', (c) => heard.push(c.why));
  store.forget('net-a');
  expect(store.signInAnswer('net-a')).toBeUndefined();
  expect(store.signInAnswer('net-b')).toBe('decline');
  // The network we're on: its choices changed, and whoever applies them hears it at once.
  expect(heard).toEqual(['choices']);
  const none = new CurrentNetwork({ file: null, identify: () => null });
  none.rememberSignIn('net-a', 'allow');
  expect(none.signInAnswer('net-a')).toBeUndefined();
});
