/** Plain-text formatting for the dashboard: durations, ages, counts, times. */

/** Microseconds → a latency a person reads at a glance: "0.42 ms", "12.3 ms", "1.25 s". */
export function formatLatencyUs(us: number | null | undefined): string {
  if (us === null || us === undefined || !Number.isFinite(us)) return '—';
  return formatLatencyMs(us / 1000);
}

export function formatLatencyMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 0) ms = 0;
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** Elapsed time, coarse: "now", "12 s", "3 min 5 s", "2 h 4 min", "3 d 2 h". */
export function formatAge(ms: number): string {
  if (!Number.isFinite(ms) || ms < 1000) return ms < 0 || !Number.isFinite(ms) ? '—' : 'now';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** A count with its noun, singular for one: "1 answer", "1,204 answers" (issue 29: "1 answers"). */
export function countOf(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** A share 0…1 as a percentage; null reads as "no data". */
export function formatPercent(fraction: number | null | undefined, digits = 1): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return '—';
  const pct = fraction * 100;
  // 99.96% must not round up to a misleading "100.0%".
  if (pct < 100 && pct.toFixed(digits) === (100).toFixed(digits)) return `>${(100 - 10 ** -digits).toFixed(digits)}%`;
  return `${pct.toFixed(digits)}%`;
}

/** 1234 → "1,234"; 1_234_567 → "1.23 M" when compact. */
export function formatCount(n: number, compact = false): string {
  if (!Number.isFinite(n)) return '—';
  if (compact) {
    if (Math.abs(n) >= 1e9) return `${(n / 1e9).toFixed(2)} G`;
    if (Math.abs(n) >= 1e6) return `${(n / 1e6).toFixed(2)} M`;
    if (Math.abs(n) >= 1e4) return `${(n / 1e3).toFixed(1)} k`;
  }
  return Math.round(n).toLocaleString('en-US');
}

export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** Local wall-clock time with milliseconds: "14:03:07.215". */
export function formatClock(epochMs: number): string {
  const d = new Date(epochMs);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * The page's one way to say a date (issue 29: it had three): "22 Nov 14:03:07.120", to the millisecond (an event
 * list spans days), or to the minute for what is kept for weeks ("22 Nov 14:03"); the year when it isn't this one.
 */
export function formatDateTime(epochMs: number, precision: 'ms' | 'min' = 'ms'): string {
  const d = new Date(epochMs);
  const time = precision === 'ms' ? formatClock(epochMs) : `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  const year = d.getFullYear() === new Date().getFullYear() ? '' : ` ${d.getFullYear()}`;
  return `${d.getDate()} ${MONTHS[d.getMonth()]!}${year} ${time}`;
}

/** Local time to the second: "14:03:07". */
export function formatClockShort(epochMs: number): string {
  const d = new Date(epochMs);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}


/** A moment that may be another day's (a result kept across restarts): "14:03:07" today, else "22 Nov 14:03:07". */
export function formatWhen(epochMs: number, now: number): string {
  const sameDay = new Date(epochMs).toDateString() === new Date(now).toDateString();
  const d = new Date(epochMs);
  return sameDay ? formatClockShort(epochMs) : `${d.getDate()} ${MONTHS[d.getMonth()]!} ${formatClockShort(epochMs)}`;
}
