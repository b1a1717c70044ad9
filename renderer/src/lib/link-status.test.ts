import { describe, expect, it } from 'vitest';
import { asOf, LOST_AFTER_MS, placeholder, reach, unknownModel } from './link-status.js';

const T = new Date(2026, 10, 22, 14, 3, 7).getTime();

describe('reach', () => {
  it('live while connected, waiting for the first 2 s without the link, then lost', () => {
    expect(reach('live', null, T)).toBe('live');
    expect(reach('reconnecting', T, T + LOST_AFTER_MS - 1)).toBe('waiting');
    expect(reach('reconnecting', T, T + LOST_AFTER_MS)).toBe('lost');
    expect(reach('connecting', T, T + 10_000)).toBe('lost');
    expect(reach('unauthorized', T, T)).toBe('signed-out');
  });

  it('figures are as of the moment the link was lost: uptimes and ages stop', () => {
    expect(asOf('live', null, T + 5000)).toBe(T + 5000);
    expect(asOf('reconnecting', T, T + 60_000)).toBe(T);
    expect(asOf('unauthorized', T, T + 60_000)).toBe(T);
  });
});

describe('unknownModel', () => {
  it('while the status is known (live, or a reconnect under 2 s) there is nothing to say', () => {
    expect(unknownModel('live', null, null, true)).toBeNull();
    expect(unknownModel('waiting', T, null, true)).toBeNull();
  });

  it('lost: no privacy claim, the time it was lost, and how to start dotstub', () => {
    const m = unknownModel('lost', T, null, true);
    expect(m?.title).toBe('Can’t reach dotstub — status unknown since 14:03:07');
    expect(m?.title).not.toMatch(/private/i);
    expect(m?.detail).toMatch(/from before the connection was lost/);
    expect(m?.action).toMatch(/dotstub command/);
    expect(m?.action).toMatch(/Resume private DNS/);
    // Never connected at all: nothing on screen is "from before".
    expect(unknownModel('lost', T, null, false)?.detail).toMatch(/not answering/);
  });

  it('signed out: what happened, in UI words, and where a fresh link comes from', () => {
    expect(unknownModel('signed-out', T, 'missing', false)?.detail).toMatch(/without its sign-in link/);
    expect(unknownModel('signed-out', T, 'malformed', false)?.detail).toMatch(/damaged token/);
    expect(unknownModel('signed-out', T, 'rejected', true)?.detail).toMatch(/did not accept/);
    const m = unknownModel('signed-out', T, 'rejected', true);
    expect(m?.title).toBe('Not signed in — privacy status unknown');
    expect(m?.action).toMatch(/dotstub: dashboard at http:\/\/127\.0\.0\.1:…\/#token=…/);
    expect(m?.action).toMatch(/desktop app/);
    expect(`${m?.detail} ${m?.action}`).not.toMatch(/Authorization|Bearer|401/);
  });
});

describe('placeholder', () => {
  it('sections that never had figures say why instead of showing zeros', () => {
    expect(placeholder('signed-out', false)).toMatch(/signed in/);
    expect(placeholder('lost', false)).toMatch(/until dotstub answers/);
    expect(placeholder('waiting', false)).toBeNull();
    // With figures from before, they stay (greyed by the page).
    expect(placeholder('lost', true)).toBeNull();
    expect(placeholder('signed-out', true)).toBeNull();
  });
});
