/**
 * Command-line numbers for the bench scripts: one parser, so every script
 * rejects a bad value the same way (the flag, the value, the range, then
 * the script's usage) and none runs on a half-understood command line.
 */

/** A parser of whole-number flags that names `usage` when it refuses a value. */
export function wholeNumberFlags(usage: string): (v: string | undefined, flag: string, fallback: number, lo: number, hi: number) => number {
  return (v, flag, fallback, lo, hi) => {
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < lo || n > hi) throw new Error(`--${flag} ${v}: expected a whole number from ${lo} to ${hi}\n${usage}`);
    return n;
  };
}
