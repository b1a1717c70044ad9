import { describe, expect, it } from 'vitest';
import type { CaptiveView } from '../../../proxy/control/api-types.js';
import { captiveModel } from './captive.js';

const base: CaptiveView = {
  portalUrl: 'http://wifi.example.net/login',
  portalHost: 'wifi.example.net',
  detectedBy: 'interception',
  detectedAt: 0,
  detectMs: 420,
  exception: 'active',
  expiresAt: 5 * 60_000,
  canExtend: true,
  allowedNames: ['wifi.example.net'],
  letThrough: [],
  networkResolver: '192.168.1.1',
  sentence: '',
};

describe('captive card', () => {
  it('while signing in: where, what leaves, until when, and the buttons to open and extend', () => {
    const m = captiveModel(base, 60_000);
    expect(m.title).toBe('This Wi-Fi wants you to sign in at wifi.example.net');
    expect(m.detail).toContain('(192.168.1.1)');
    expect(m.window).toMatch(/\(4 min left\)$/);
    expect(m.buttons).toEqual(['open', 'extend']);
    expect(m.foundBy).toBe('Found in 0.4 s: web traffic on this network is redirected.');
    expect(captiveModel({ ...base, canExtend: false }, 0).buttons).toEqual(['open']);
  });

  it('strict mode asks, with "remember"; declined and expired offer to allow again; no resolver says what to set', () => {
    const ask = captiveModel({ ...base, exception: 'asking', expiresAt: null }, 0);
    expect(ask.buttons).toEqual(['allow', 'decline']);
    expect(ask.askRemember).toBe(true);
    expect(ask.window).toBeNull();
    expect(captiveModel({ ...base, exception: 'declined' }, 0).buttons).toEqual(['allow-again']);
    expect(captiveModel({ ...base, exception: 'expired' }, 0).buttons).toEqual(['allow-again']);
    const none = captiveModel({ ...base, exception: 'no-resolver' }, 0);
    expect(none.buttons).toEqual([]);
    expect(none.detail).toMatch(/Network DNS/);
  });
});
