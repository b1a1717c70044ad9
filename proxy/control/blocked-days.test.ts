import { describe, expect, test } from 'vitest';
import { record } from './api-client/query-record.test-helpers.js';
import { BlockedDays, DAYS_KEPT, localDay } from './blocked-days.js';

describe('blocked answers per day', () => {
  const day = (d: number, h = 12): number => new Date(2026, 11, d, h).getTime();
  const said = { kind: 'ede', code: 15, name: 'Blocked', text: '' } as const;
  const sink = { kind: 'zero-address', address: '0.0.0.0' } as const;

  test('counted by the local day, by how; not blocked and own checks not counted; a week kept', () => {
    const b = new BlockedDays();
    b.record(record({ startedAt: day(1), blocked: said }));
    b.record(record({ startedAt: day(7, 23), blocked: sink }));
    b.record(record({ startedAt: day(8, 0), blocked: said }));
    b.record(record({ startedAt: day(8, 1), blocked: said }));
    b.record(record({ startedAt: day(8, 2), blocked: sink }));
    b.record(record({ startedAt: day(8, 3) }));
    b.record(record({ startedAt: day(8, 4), blocked: said, internal: true }));
    expect(b.view(day(8, 15))).toEqual([
      { day: '2026-12-08', byResolver: 2, nullAddress: 1 },
      { day: '2026-12-07', byResolver: 0, nullAddress: 1 },
    ]);
    expect(localDay(day(8, 0))).toBe('2026-12-08');
    for (let d = 9; d < 9 + DAYS_KEPT; d++) b.record(record({ startedAt: day(d), blocked: sink }));
    expect(b.view(day(8 + DAYS_KEPT)).map((x) => x.day)).toHaveLength(DAYS_KEPT);
    expect(b.view(day(8 + DAYS_KEPT)).at(-1)?.day).toBe('2026-12-09');
  });
});
