/**
 * The retired preset's notice in words (retired-notice.ts), true when read:
 * "now using" only while connected to the replacement; the saved choice
 * named only while it is still the replacement.
 */
import { expect, test } from 'vitest';
import { moveWords, retiredNoticeView, type RetiredNoticeFacts } from './retired-notice.js';
import { retiredPreset } from '../config/resolvers.js';

const notice = { from: 'mullvad', to: 'quad9', at: 1 };
const quad9 = { id: 'quad9', label: 'Quad9' };
const words = (f: Partial<RetiredNoticeFacts>): string | undefined =>
  retiredNoticeView({ notice, saved: quad9, running: 'quad9', connected: true, ...f })?.message;

test('connected to the replacement: "now using"; running it without a connection (unreachable, or not yet): not', () => {
  expect(words({})).toBe('Mullvad DNS closed on 2 Nov 2026; now using Quad9');
  expect(words({ connected: false })).toBe('Mullvad DNS closed on 2 Nov 2026; your choice is now Quad9; not connected to it yet');
});

test('this run uses another resolver (--resolver): the saved choice moved', () => {
  expect(words({ running: 'custom:127.0.0.1:853' })).toBe('Mullvad DNS closed on 2 Nov 2026; your saved choice is now Quad9');
});

test('the user chose another resolver since: the move is told as past, and the choice they made', () => {
  const since = 'Mullvad DNS closed on 2 Nov 2026; dotstub moved your choice to Quad9; you have chosen Cloudflare since';
  expect(words({ saved: { id: 'cloudflare', label: 'Cloudflare' }, running: 'cloudflare' })).toBe(since);
  expect(words({ saved: { id: 'cloudflare', label: 'Cloudflare' }, running: 'quad9', connected: true })).toBe(since);
});

test('no notice, or one naming a preset that is not retired: nothing to say; the move in the log and timeline', () => {
  expect(retiredNoticeView({ notice: null, saved: quad9, running: 'quad9', connected: true })).toBeNull();
  expect(retiredNoticeView({ notice: { from: 'quad9', to: 'cloudflare', at: 1 }, saved: quad9, running: 'quad9', connected: true })).toBeNull();
  const mullvad = retiredPreset('mullvad');
  expect(mullvad && moveWords(mullvad)).toBe('Mullvad DNS closed on 2 Nov 2026; dotstub moved your choice to Quad9');
});
