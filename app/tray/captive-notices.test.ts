import { describe, expect, it } from 'vitest';
import { captiveNotice, NOTICE_INTERVAL_MS } from './captive-notices.js';
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
