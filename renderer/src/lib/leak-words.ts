/**
 * What the banner says about names sent outside the encrypted resolver: the
 * local names the networks' own resolvers answered (counters.localNames),
 * and whether lookups can go around dotstub (StatusView.leaks, read from the
 * OS by network/leak-watch.ts). Pure. A figure is shown only when it was
 * measured (docs/architecture.md#rules-every-part-keeps).
 */
import type { LeakView } from '../../../proxy/control/api-types.js';
import { formatCount } from './format.js';

/**
 * "3 lookups answered by your network’s own resolver, unencrypted"; null for
 * 0 (nothing to say). The count is of lookups (counters.localNames counts
 * each query), not of distinct names: printer.lan asked twice is 2.
 */
export function localNamesText(n: number): string | null {
  if (n <= 0) return null;
  return `${formatCount(n)} ${n === 1 ? 'lookup' : 'lookups'} answered by your network’s own resolver, unencrypted`;
}

export interface LeakWords {
  /** measured: a figure; bypass: paths around dotstub now; unmeasured: no figure, and why. */
  readonly kind: 'measured' | 'bypass' | 'unmeasured';
  readonly lines: readonly string[];
}

function hhmm(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

/** "0 leaked since 14:05 across 3 network changes", "bypass possible: …" (one line a path), "not measured: …". */
export function leakWords(v: LeakView | undefined): LeakWords {
  if (v === undefined) return { kind: 'unmeasured', lines: ['not measured: this dotstub does not report it'] };
  if (v.measured && v.paths.length > 0) return { kind: 'bypass', lines: v.paths.map((p) => `bypass possible: ${p.sentence}`) };
  if (v.measured && v.cleanSince !== null) {
    const n = v.networkChanges;
    return { kind: 'measured', lines: [`0 leaked since ${hhmm(v.cleanSince)} across ${formatCount(n)} network ${n === 1 ? 'change' : 'changes'}`] };
  }
  return { kind: 'unmeasured', lines: [`not measured: ${v.why ?? 'the system’s DNS settings have not been read yet'}`] };
}
