import { describe, expect, test } from 'vitest';
import type { LeakView } from '../../../proxy/control/api-types.js';
import { leakWords, localNamesText } from './leak-words.js';

const view = (over: Partial<LeakView>): LeakView => ({ measured: true, why: null, paths: [], cleanSince: null, networkChanges: 0, checkedAt: 0, ...over });

describe('the banner’s local names and leak words', () => {
  test('local names: plural and singular right, nothing for 0', () => {
    expect(localNamesText(0)).toBeNull();
    expect(localNamesText(1)).toBe('1 lookup answered by your network’s own resolver, unencrypted');
    expect(localNamesText(3)).toBe('3 lookups answered by your network’s own resolver, unencrypted');
  });

  test('a figure only when measured; a path is said as a bypass; otherwise why it was not measured', () => {
    const at = new Date(2026, 10, 26, 14, 5).getTime();
    expect(leakWords(view({ cleanSince: at, networkChanges: 3 }))).toEqual({ kind: 'measured', lines: ['0 leaked since 14:05 across 3 network changes'] });
    expect(leakWords(view({ cleanSince: at, networkChanges: 1 })).lines).toEqual(['0 leaked since 14:05 across 1 network change']);
    const path = { what: 'nameserver fd00::1', link: 'resolv.conf', sentence: '/etc/resolv.conf names fd00::1 besides dotstub.' };
    expect(leakWords(view({ paths: [path] }))).toEqual({ kind: 'bypass', lines: ['bypass possible: /etc/resolv.conf names fd00::1 besides dotstub.'] });
    expect(leakWords(view({ measured: false, why: 'resolv.conf could not be read' }))).toEqual({ kind: 'unmeasured', lines: ['not measured: resolv.conf could not be read'] });
    // Measured, no path, but no since: never a figure.
    expect(leakWords(view({})).kind).toBe('unmeasured');
    expect(leakWords(undefined).kind).toBe('unmeasured');
  });
});
