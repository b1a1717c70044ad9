import { describe, expect, it } from 'vitest';
import { DEFAULT_RESTART_POLICY, decideRestart, validateRestartPolicy, type RestartDecision } from './restart-policy.js';

const crash = (at: number, code: number | null = 1, signal: string | null = null) => ({ at, code, signal });

describe('decideRestart', () => {
  it('backs off exponentially, then gives up after 5 restarts in a minute', () => {
    let history: readonly number[] = [];
    const delays: number[] = [];
    let last: RestartDecision | undefined;
    for (let i = 0; i < 6; i++) {
      last = decideRestart(crash(1000 + i * 1000), history);
      if (last.action === 'restart') {
        delays.push(last.delayMs);
        expect(last.attempt).toBe(i + 1);
      }
      history = last.history;
    }
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000]);
    expect(last).toMatchObject({ action: 'give-up', reason: 'too-many-restarts' });
  });

  it('caps the delay', () => {
    const o = { ...DEFAULT_RESTART_POLICY, maxRestarts: 20 };
    let history: readonly number[] = [];
    let d: RestartDecision | undefined;
    for (let i = 0; i < 10; i++) {
      d = decideRestart(crash(i), history, o);
      history = d.history;
    }
    expect(d).toMatchObject({ action: 'restart', delayMs: 8000 });
  });

  it('forgets crashes older than the window: a proxy that stayed up starts over', () => {
    const history = [0, 1000, 2000, 3000, 4000];
    expect(decideRestart(crash(30_000), history)).toMatchObject({ action: 'give-up' });
    const later = decideRestart(crash(64_500), history);
    expect(later).toEqual({ action: 'restart', delayMs: 500, attempt: 1, history: [64_500] });
  });

  it('gives up at once on a configuration error (exit 2), restarts after a signal', () => {
    expect(decideRestart(crash(0, 2), [])).toMatchObject({ action: 'give-up', reason: 'permanent-exit' });
    expect(decideRestart(crash(0, null, 'SIGKILL'), [])).toMatchObject({ action: 'restart', delayMs: 500 });
  });

  it('validates its options', () => {
    expect(() => validateRestartPolicy({ ...DEFAULT_RESTART_POLICY, maxRestarts: -1 })).toThrow(/maxRestarts/);
    expect(() => validateRestartPolicy({ ...DEFAULT_RESTART_POLICY, maxDelayMs: 100 })).toThrow(/maxDelayMs/);
    expect(validateRestartPolicy(DEFAULT_RESTART_POLICY)).toBe(DEFAULT_RESTART_POLICY);
  });
});
