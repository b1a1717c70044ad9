import { describe, expect, it } from 'vitest';
import { countOf, formatAge, formatBytes, formatClock, formatCount, formatDateTime, formatLatencyMs, formatLatencyUs, formatPercent, formatWhen } from './format.js';

describe('format', () => {
  it('latency reads at a glance at every scale', () => {
    expect(formatLatencyUs(420)).toBe('0.42 ms');
    expect(formatLatencyUs(12_345)).toBe('12.3 ms');
    expect(formatLatencyUs(345_600)).toBe('346 ms');
    expect(formatLatencyUs(1_250_000)).toBe('1.25 s');
    expect(formatLatencyMs(12_500)).toBe('12.5 s');
    expect(formatLatencyMs(null)).toBe('—');
    expect(formatLatencyMs(Number.NaN)).toBe('—');
    expect(formatLatencyMs(-1)).toBe('0.00 ms');
  });

  it('ages', () => {
    expect(formatAge(500)).toBe('now');
    expect(formatAge(12_000)).toBe('12 s');
    expect(formatAge(185_000)).toBe('3 min 5 s');
    expect(formatAge(120_000)).toBe('2 min');
    expect(formatAge(2 * 3600_000 + 4 * 60_000)).toBe('2 h 4 min');
    expect(formatAge(3 * 86400_000 + 2 * 3600_000)).toBe('3 d 2 h');
    expect(formatAge(-5)).toBe('—');
  });

  it('percentages never round a miss away', () => {
    expect(formatPercent(0.875)).toBe('87.5%');
    expect(formatPercent(1)).toBe('100.0%');
    expect(formatPercent(0.99996)).toBe('>99.9%');
    expect(formatPercent(null)).toBe('—');
  });

  it('counts and bytes', () => {
    expect(formatCount(1234)).toBe('1,234');
    expect(formatCount(12_345, true)).toBe('12.3 k');
    expect(formatCount(1_234_567, true)).toBe('1.23 M');
    expect(formatCount(999, true)).toBe('999');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(2048)).toBe('2.0 KiB');
  });

  it('clock has milliseconds', () => {
    const t = new Date(2025, 0, 1, 9, 5, 7, 42).getTime();
    expect(formatClock(t)).toBe('09:05:07.042');
  });

  it('one date format: to the millisecond or the minute, with the year only when it isn’t this one', () => {
    const thisYear = new Date().getFullYear();
    const t = new Date(thisYear, 10, 22, 14, 3, 7, 120).getTime();
    expect(formatDateTime(t)).toBe('22 Nov 14:03:07.120');
    expect(formatDateTime(t, 'min')).toBe('22 Nov 14:03');
    expect(formatDateTime(new Date(2024, 0, 2, 9, 5).getTime(), 'min')).toBe('2 Jan 2024 09:05');
    expect(formatWhen(t, t + 60_000)).toBe('14:03:07');
    expect(formatWhen(t, t + 86_400_000 * 2)).toBe('22 Nov 14:03:07');
  });

  it('counts of one are singular', () => {
    expect(countOf(1, 'answer')).toBe('1 answer');
    expect(countOf(0, 'answer')).toBe('0 answers');
    expect(countOf(1204, 'query', 'queries')).toBe('1,204 queries');
  });
});
