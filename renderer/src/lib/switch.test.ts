import { describe, expect, it } from 'vitest';
import type { SystemDnsView, TimelineEvent } from '../../../proxy/control/api-types.js';
import { PAUSE_CHOICES, pauseCountdown, switchModel, switchState, switchVerdict } from './switch.js';
import { status } from './fixtures.test-helpers.js';

function view(over: Partial<SystemDnsView>): SystemDnsView {
  return {
    privileged: true,
    privilegeNote: null,
    enabled: false,
    inForce: false,
    reason: '',
    backend: 'resolv.conf',
    backendWhy: '',
    backends: [],
    changed: [],
    original: [],
    owner: null,
    leaks: [],
    lastLeakTest: null,
    problem: null,
    pausedUntil: null,
    ...over,
  };
}

describe('the one switch', () => {
  it('has no switch when this dotstub does not manage system DNS, or may not change it', () => {
    expect(switchState(undefined)).toBe('none');
    expect(switchState(null)).toBe('none');
    expect(switchState(view({ privileged: false }))).toBe('none');
  });

  it('tells on, off, paused and enabled-but-not-in-force apart', () => {
    expect(switchState(view({ enabled: true, inForce: true }))).toBe('on');
    expect(switchState(view({}))).toBe('off');
    expect(switchState(view({ pausedUntil: 1_000_000 }))).toBe('paused');
    expect(switchState(view({ enabled: true }))).toBe('stuck');
  });

  it('says how long a pause has left in the header, and is not checked while paused', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const m = switchModel(view({ pausedUntil: now + 299_400 }), now);
    // Floored, as the banner's "4 min 59 s left": the header and the banner never disagree.
    expect(m).toEqual({ state: 'paused', checked: false, word: 'Paused · 4:59', tone: 'caution' });
    expect(switchModel(view({ pausedUntil: now + 3_600_000 }), now).word).toBe('Paused · 1:00:00');
    expect(switchModel(view({ enabled: true, inForce: true }), now)).toEqual({ state: 'on', checked: true, word: 'On', tone: 'good' });
  });

  it('counts a pause down in words with the time it ends', () => {
    const until = new Date(2026, 0, 1, 14, 5, 0).getTime();
    expect(pauseCountdown(until, until - 299_000)).toBe('back on at 14:05 · 4 min 59 s left');
    expect(pauseCountdown(until, until - 200)).toBe('back on at 14:05 · any moment now');
  });

  it('offers 5 min, 1 hour and until I resume, in that order', () => {
    expect(PAUSE_CHOICES.map((c) => [c.label, c.seconds])).toEqual([
      ['5 min', 300],
      ['1 hour', 3600],
      ['Until I resume', null],
    ]);
  });
});

describe('switched on follows the verdict (issue 29)', () => {
  const on = view({ enabled: true, inForce: true });
  const failed = (at: number): TimelineEvent => ({
    kind: 'connection',
    event: { type: 'connect-failed', at, resolverId: 'quad9', address: '9.9.9.9', code: 'DOTSTUB_CONNECT_FAILED', message: 'refused', retryInMs: 1000 } as never,
  });
  it('says "On" in green only while private', () => {
    expect(switchModel(on, 0, switchVerdict(status(), []))).toMatchObject({ checked: true, word: 'On', tone: 'good' });
  });
  it('while every lookup fails: still on, "not working" with the latest failure\'s words, in the danger colour', () => {
    const blocked = status({ state: 'blocked', since: 10_000 });
    expect(switchModel(on, 0, switchVerdict(blocked, [failed(9_000)]))).toMatchObject({ checked: true, word: 'On — not working: can’t connect', tone: 'danger' });
    // A failure from long before the state began is not its why.
    expect(switchModel(on, 0, switchVerdict(blocked, [failed(1_000)])).word).toBe('On — not working: no answer');
  });
  it('says what each other verdict means, never plain "On"', () => {
    expect(switchModel(on, 0, switchVerdict(status({ state: 'degraded' }), [])).tone).toBe('danger');
    expect(switchModel(on, 0, switchVerdict(status({ state: 'private-unverified' }), []))).toMatchObject({ word: 'On — not verified', tone: 'caution' });
    expect(switchModel(on, 0, switchVerdict(status({ state: 'captive' }), []))).toMatchObject({ word: 'On — Wi-Fi sign-in needed', tone: 'warning' });
  });
});
