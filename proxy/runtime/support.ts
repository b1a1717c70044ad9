/**
 * Whether the Node.js running dotstub still gets security fixes. dotstub
 * reads bytes from the network (DNS answers, TLS, HTTP/2), so a runtime
 * past its end of life is a risk the user should hear of: the package
 * brings its own Node 24, but `npm start` runs whatever `node` is on the
 * PATH (on this project's CI machines, Node 20, out of support since
 * 30 April 2026).
 *
 * Node's schedule (github.com/nodejs/release): an even major is supported
 * until 30 April three years after its release year's April (18: 2025, 20:
 * 2026, 22: 2027, 24: 2028), an odd one until 1 June of the year after it
 * came out (21: 2024, 23: 2025, 25: 2026). Computed, not listed, so a
 * release newer than this file is judged the same way.
 */

/** The day support ended or ends, YYYY-MM-DD, for a Node major version; null for a version this rule doesn't know (before 18). */
export function supportEnds(major: number): string | null {
  if (!Number.isInteger(major) || major < 18) return null;
  return major % 2 === 0 ? `${2025 + (major - 18) / 2}-04-30` : `${2024 + (major - 21) / 2}-06-01`;
}

/**
 * One sentence for the log when the running Node.js no longer gets security
 * fixes (or is too old for the rule); null while it does.
 */
export function unsupportedRuntime(version: string = process.versions.node, now: Date = new Date()): string | null {
  const major = Number(version.split('.')[0]);
  const ends = supportEnds(major);
  if (ends !== null && now.toISOString().slice(0, 10) <= ends) return null;
  const since = ends === null ? 'for years' : `since ${ends}`;
  return `Node.js ${version} has had no security fixes ${since}, and dotstub reads the network's bytes in it: run it on Node.js ${supportedMajor(now)} or later (the dotstub package brings its own Node.js 24)`;
}

/** The oldest even (long-term) major still supported on `now`. */
function supportedMajor(now: Date): number {
  const day = now.toISOString().slice(0, 10);
  let major = 18;
  while ((supportEnds(major) ?? '') < day) major += 2;
  return major;
}
