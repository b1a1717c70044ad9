import { describe, expect, it } from 'vitest';
import { captiveNotice, networkOpened, NOTICE_INTERVAL_MS } from './captive-notices.js';
import { INITIAL_TRAY_STATE, type TrayState } from './types.js';

const running: TrayState = { ...INITIAL_TRAY_STATE, proxyRunning: true, privacy: 'private', reason: '' };
const captive = (exception: 'asking' | 'active'): TrayState => ({ ...running, privacy: 'captive', captive: { portalHost: 'wifi.example.net', exception } });

describe('captive notices', () => {
  it('says where to sign in on entering, and that private DNS is back on leaving', () => {
    expect(captiveNotice(running, captive('active'), -Infinity, 0)?.body).toMatch(/wifi\.example\.net.*Sign in to network/);
    expect(captiveNotice(running, captive('asking'), -Infinity, 0)?.body).toMatch(/Allow sign-in/);
    expect(captiveNotice(captive('active'), running, -Infinity, 0)?.title).toBe('Private DNS is back');
  });

  it('at most one a minute, and nothing for changes within captive or away from it to blocked', () => {
    expect(captiveNotice(running, captive('active'), 0, NOTICE_INTERVAL_MS - 1)).toBeNull();
    expect(captiveNotice(running, captive('active'), 0, NOTICE_INTERVAL_MS)).not.toBeNull();
    expect(captiveNotice(captive('asking'), captive('active'), -Infinity, 0)).toBeNull();
    expect(captiveNotice(captive('active'), { ...running, privacy: 'blocked' }, -Infinity, 0)).toBeNull();
  });
});

describe('the network opened (the sign-in window closes)', () => {
  it('is captive → private DNS, whatever the notices\' rate limit, and nothing else', () => {
    expect(networkOpened(captive('active'), running)).toBe(true);
    expect(networkOpened(captive('asking'), { ...running, privacy: 'private-unverified' })).toBe(true);
    expect(networkOpened(running, running)).toBe(false);
    expect(networkOpened(captive('asking'), captive('active'))).toBe(false);
    expect(networkOpened(captive('active'), { ...running, privacy: 'blocked' })).toBe(false);
    // The proxy stopped (Pause, a crash): not a sign-in that ended.
    expect(networkOpened(captive('active'), { ...running, proxyRunning: false, privacy: 'off' })).toBe(false);
  });
});
