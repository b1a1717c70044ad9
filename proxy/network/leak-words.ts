/**
 * The leak line in words for the command line (`dotstub ctl status`,
 * `dotstub system-dns status`), from the leak watch's view (leak-watch.ts):
 * the same sentences the dashboard's banner shows
 * (renderer/src/lib/leak-words.ts). A figure only when it was measured
 * (docs/architecture.md#rules-every-part-keeps): never "none seen" by default.
 * Pure, no Node imports.
 */
import type { LeakView } from './leak-watch.js';

/** What a running dotstub's leak watch said when asked (`dotstub system-dns status`), or why none could be asked. */
export type RunningLeaks = { readonly leaks: LeakView | undefined } | { readonly unreachable: string };

/** "14:05", in the machine's local time. */
export function clockHhmm(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

/**
 * "0 leaked since 14:05 across 3 network changes"; while paths around
 * dotstub are open, one "bypass possible: …" line a path; "not measured: …"
 * when the OS's state could not be read or isn't watched.
 */
export function leakLines(v: LeakView | undefined): string[] {
  if (v === undefined) return ['not measured: this dotstub does not report it'];
  if (v.measured && v.paths.length > 0) return v.paths.map((p) => `bypass possible: ${p.sentence}`);
  if (v.measured && v.cleanSince !== null) {
    const n = v.networkChanges;
    return [`0 leaked since ${clockHhmm(v.cleanSince)} across ${n.toLocaleString('en-US')} network ${n === 1 ? 'change' : 'changes'}`];
  }
  return [`not measured: ${v.why ?? 'the system’s DNS settings have not been read yet'}`];
}

/** One reading of the OS's state (leak-watch.ts readBypassPaths), said as one: no "since", no count. */
export function readingLines(r: { readonly ok: true; readonly paths: readonly { readonly sentence: string }[] } | { readonly ok: false; readonly why: string }): string[] {
  if (!r.ok) return [`not measured: ${r.why}`];
  if (r.paths.length === 0) return ['no path around dotstub in this reading'];
  return r.paths.map((p) => `bypass possible: ${p.sentence}`);
}
