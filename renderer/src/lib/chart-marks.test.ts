import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../../../proxy/control/api-types.js';
import { chartMarks, marksCaption } from './chart-marks.js';

const state = (at: number, previous: string, s: string): TimelineEvent =>
  ({ kind: 'state', event: { at, previous, state: s, reason: '', resolverId: 'q' } }) as TimelineEvent;

describe('chart marks', () => {
  it('shades each stretch without private DNS, clipped to the window; a stretch still going ends at the window', () => {
    const events = [state(1000, 'off', 'private'), state(5000, 'private', 'blocked'), state(9000, 'blocked', 'private'), state(20_000, 'private', 'captive')];
    const m = chartMarks(events, 2000, 30_000);
    expect(m.outages).toEqual([
      { from: 5, to: 9, state: 'blocked' },
      { from: 20, to: 30, state: 'captive' },
    ]);
    expect(chartMarks(events, 6000, 8000).outages).toEqual([{ from: 6, to: 8, state: 'blocked' }]);
  });

  it('start-up (off before the first connection) is not an outage; switches are lines; the caption counts both', () => {
    const events: TimelineEvent[] = [state(0, 'off', 'off'), state(1000, 'off', 'private'), { kind: 'resolver', at: 3000, from: 'a', to: 'b' }];
    const m = chartMarks(events, 0, 10_000);
    expect(m.outages).toEqual([]);
    expect(m.switches).toEqual([3]);
    expect(marksCaption(m)).toBe('Marked: 1 resolver switch (dashed line).');
    expect(marksCaption({ outages: [{ from: 1, to: 2, state: 'blocked' }], switches: [] })).toBe('Marked: 1 stretch without private DNS (shaded).');
    expect(marksCaption({ outages: [], switches: [] })).toBe('');
  });
});
