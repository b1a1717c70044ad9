/**
 * Synthetic query traces, seeded so every run replays the same one:
 * - `stubTrace`: one stub client's day (active sessions of page-load bursts
 *   with heavy-tailed think times, idle hours between), for the connection-hit
 *   fraction vs idle timeout (the T-DNS figure);
 * - `browsingTrace`: issue 11's browsing replay (Zipf-popular names, bursts of
 *   10–40 names, idle gaps of 10 s to 5 min).
 */

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Log-uniform in [lo, hi]. */
function logUniform(r: () => number, lo: number, hi: number): number {
  return Math.exp(Math.log(lo) + r() * (Math.log(hi) - Math.log(lo)));
}

/** Query times (seconds, ascending) of one stub client over `hours`. `pace` scales its think times (a busier or a calmer user). */
export function stubTrace(seed: number, hours: number, pace: number): number[] {
  const r = rng(seed);
  const end = hours * 3600;
  const times: number[] = [];
  let t = r() * 600;
  while (t < end) {
    // An active session: page loads with think times between them.
    const sessionEnd = t + logUniform(r, 300, 5400);
    while (t < sessionEnd && t < end) {
      // What reaches the stub after the browser's and the OS's caches: a few new names per page (1–16, mostly few).
      const n = 1 + Math.floor(r() ** 2 * 16);
      for (let i = 0; i < n; i++) times.push(t + r() * 0.5);
      // Think time: seconds to minutes, heavy-tailed.
      t += logUniform(r, 2, 600) * pace;
    }
    // Idle: away from the machine, with a background lookup now and then (mail, updates).
    const idleEnd = t + logUniform(r, 300, 7200);
    while (t < idleEnd && t < end) {
      times.push(t);
      t += logUniform(r, 60, 1800);
    }
    t = idleEnd;
  }
  return times.sort((a, b) => a - b);
}

/** Fraction of queries that find the connection still open when it closes `timeout` s after the last query. */
export function hitFraction(times: readonly number[], timeout: number): number {
  if (times.length === 0) return Number.NaN;
  let hits = 0;
  for (let i = 1; i < times.length; i++) if ((times[i] ?? 0) - (times[i - 1] ?? 0) <= timeout) hits++;
  return hits / times.length;
}

/**
 * "Warm while in use": the server closes an idle connection after
 * `serverIdle` s; the stub re-opens it at once while the last query is less
 * than `inUse` s old. Returns the hit fraction and handshakes per hour.
 */
export function warmPolicy(times: readonly number[], serverIdle: number, inUse: number): { hit: number; handshakesPerHour: number } {
  if (times.length < 2) return { hit: Number.NaN, handshakesPerHour: Number.NaN };
  let hits = 0;
  let handshakes = 1;
  for (let i = 1; i < times.length; i++) {
    const gap = (times[i] ?? 0) - (times[i - 1] ?? 0);
    if (gap <= serverIdle) {
      hits++;
      continue;
    }
    // Re-opened every serverIdle s while in use; cold again once the machine has been idle for inUse s.
    handshakes += Math.floor(Math.min(gap, inUse) / serverIdle);
    if (gap <= inUse) hits++;
    else handshakes++;
  }
  const hours = ((times[times.length - 1] ?? 0) - (times[0] ?? 0)) / 3600;
  return { hit: hits / times.length, handshakesPerHour: handshakes / Math.max(hours, 1e-9) };
}

export interface TraceQuery {
  /** ms after the start. */
  readonly at: number;
  readonly name: string;
}

/**
 * Browsing: `bursts` page loads of 10–40 distinct names drawn by Zipf
 * popularity (s = 1) from n0.test … n<names-1>.test, each spread over 300 ms,
 * separated by idle gaps log-uniform in [gapMin, gapMax] s.
 */
export function browsingTrace(seed: number, bursts: number, names: number, gapMin: number, gapMax: number): TraceQuery[] {
  const r = rng(seed);
  const cdf: number[] = [];
  let sum = 0;
  for (let k = 1; k <= names; k++) cdf.push((sum += 1 / k));
  const pick = (): number => {
    const u = r() * sum;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cdf[mid] ?? 0) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const out: TraceQuery[] = [];
  let t = 0;
  for (let b = 0; b < bursts; b++) {
    const n = 10 + Math.floor(r() * 31);
    const chosen = new Set<number>();
    for (let guard = 0; chosen.size < n && guard < n * 20; guard++) chosen.add(pick());
    for (const i of chosen) out.push({ at: Math.round(t + r() * 300), name: `n${i}.test` });
    t += logUniform(r, gapMin, gapMax) * 1000;
  }
  return out.sort((a, b) => a.at - b.at);
}
