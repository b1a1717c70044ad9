/**
 * When to restart a crashed proxy, and after how long: pure, so the whole
 * policy is tested with numbers instead of processes and clocks.
 *
 * - Exponential backoff from `baseDelayMs`, doubling per crash in the window,
 *   capped at `maxDelayMs`.
 * - At most `maxRestarts` restarts within `windowMs`; one more crash inside
 *   the window gives up (a proxy that keeps dying needs the user, not a loop).
 * - Exit code 2 is the CLI's "your configuration is wrong": restarting can't
 *   fix it, so give up at once and show its message.
 * - A proxy that stayed up longer than the window starts with a clean slate
 *   (old crashes fall out of the window).
 */
export interface RestartPolicyOptions {
  readonly maxRestarts: number;
  readonly windowMs: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Exit codes that mean "don't retry". */
  readonly permanentExitCodes: readonly number[];
}

export const DEFAULT_RESTART_POLICY: RestartPolicyOptions = {
  maxRestarts: 5,
  windowMs: 60_000,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  permanentExitCodes: [2],
};

export interface CrashInfo {
  /** When it ended, ms (any monotonic clock; the supervisor uses Date.now()). */
  readonly at: number;
  readonly code: number | null;
  readonly signal: string | null;
}

export type RestartDecision =
  | { readonly action: 'restart'; readonly delayMs: number; readonly attempt: number; readonly history: readonly number[] }
  | { readonly action: 'give-up'; readonly reason: 'permanent-exit' | 'too-many-restarts'; readonly history: readonly number[] };

/** Checks the options; throws RangeError saying what to use instead. */
export function validateRestartPolicy(o: RestartPolicyOptions): RestartPolicyOptions {
  const whole = (v: number, name: string, min: number): void => {
    if (!Number.isInteger(v) || v < min) throw new RangeError(`restart policy: ${name} must be a whole number ≥ ${min}, not ${v}`);
  };
  whole(o.maxRestarts, 'maxRestarts', 0);
  whole(o.windowMs, 'windowMs', 1);
  whole(o.baseDelayMs, 'baseDelayMs', 0);
  whole(o.maxDelayMs, 'maxDelayMs', o.baseDelayMs);
  return o;
}

/**
 * Decides what to do about a crash. `history` holds the times of the restarts
 * already made (from the previous decision); the decision carries the new one.
 */
export function decideRestart(crash: CrashInfo, history: readonly number[], options: RestartPolicyOptions = DEFAULT_RESTART_POLICY): RestartDecision {
  const recent = history.filter((t) => crash.at - t < options.windowMs);
  if (crash.code !== null && options.permanentExitCodes.includes(crash.code)) {
    return { action: 'give-up', reason: 'permanent-exit', history: recent };
  }
  if (recent.length >= options.maxRestarts) return { action: 'give-up', reason: 'too-many-restarts', history: recent };
  const delayMs = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** recent.length);
  return { action: 'restart', delayMs, attempt: recent.length + 1, history: [...recent, crash.at] };
}
