import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../../../proxy/control/api-types.js';
import { asOf, commandParts, lastKnown, LOST_AFTER_MS, placeholder, reach, unknownModel } from './link-status.js';

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
    // The service's way, and a fresh link when it asks to sign in again.
    expect(m?.action).toMatch(/`systemctl status dotstub`.*`sudo systemctl restart dotstub`/);
    expect(m?.action).toMatch(/`dotstub ctl dashboard` prints a fresh link/);
    expect(commandParts('run `a b` now')).toEqual([{ text: 'run ', code: false }, { text: 'a b', code: true }, { text: ' now', code: false }]);
    // Never connected at all: nothing on screen is "from before".
    expect(unknownModel('lost', T, null, false)?.detail).toMatch(/not answering/);
  });

  it('signed out: what happened, in UI words, and where a fresh link comes from', () => {
    expect(unknownModel('signed-out', T, 'missing', false)?.detail).toMatch(/without its sign-in link/);
    expect(unknownModel('signed-out', T, 'malformed', false)?.detail).toMatch(/damaged token/);
    expect(unknownModel('signed-out', T, 'rejected', true)?.detail).toMatch(/did not accept/);
    const m = unknownModel('signed-out', T, 'rejected', true);
    expect(m?.title).toBe('Not signed in — privacy status unknown');
    expect(m?.action).toMatch(/open its address with #token= and the contents of the token file its start line names/);
    expect(m?.action).toMatch(/desktop app/);
    expect(m?.action).toMatch(/`dotstub ctl dashboard` prints it/);
    expect(`${m?.detail} ${m?.action}`).not.toMatch(/Authorization|Bearer|401/);
  });
});

describe('"Not connected" says what the machine\'s DNS last was (issue 29)', () => {
  const offAt = T - 60_000;
  const turnedOff: TimelineEvent = { kind: 'state', event: { state: 'off', previous: 'private', reason: 'not enabled', at: offAt, resolverId: 'quad9' } };
  const detail = (last: ReturnType<typeof lastKnown> | null): string | undefined => unknownModel('lost', T, null, true, last)?.detail;

  it('on: it was on when the connection was lost, and what dotstub does as it goes; never "may not be private"', () => {
    const d = detail(lastKnown({ state: 'private', since: offAt }, null, true, []));
    expect(d).toMatch(/Private DNS was on at 14:03 when the connection was lost\./);
    expect(d).toMatch(/gives the old DNS back as it goes, and its watchdog does/);
    expect(d).not.toMatch(/may not be private/);
  });

  it('off after being on, or paused: when the old DNS was given back', () => {
    expect(detail(lastKnown({ state: 'off', since: offAt }, null, true, [turnedOff]))).toMatch(/Private DNS was off: the old DNS was given back at 14:02\./);
    expect(detail(lastKnown({ state: 'off', since: offAt }, T + 300_000, true, []))).toMatch(/Private DNS was paused: the old DNS was given back at 14:02\./);
    // Off since the start: nothing was given back.
    expect(detail(lastKnown({ state: 'off', since: offAt }, null, true, []))).toMatch(/Private DNS was off: this machine has asked its usual DNS since 14:02\./);
  });

  it('a dotstub that doesn\'t manage system DNS: only that lookups sent to it get no answer', () => {
    expect(detail(lastKnown({ state: 'private', since: offAt }, null, false, []))).toMatch(/lookups sent to it get no answer/);
    expect(detail(null)).toMatch(/lookups sent to it get no answer/);
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
