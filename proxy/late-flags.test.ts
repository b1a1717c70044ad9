/**
 * The proxy started without its node flags (`node bin/dotstub.js`): the
 * idle collector still has its `gc`, and the young generation still stays
 * small under a heavy allocation load (it grew to 32 MiB without this).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, test } from 'vitest';

const module = path.join(import.meta.dirname, 'late-flags.ts');

/** Runs an allocation-heavy script in a node without flags; returns the young generation's largest size and what `gc` is. */
function run(apply: boolean): { newSpaceMiB: number; gc: string } {
  const script = `
    const v8 = require('node:v8');
    import(${JSON.stringify(module)}).then(async (m) => {
      if (${apply}) m.applyLateFlags();
      let keep = [];
      let max = 0;
      for (let round = 0; round < 20; round++) {
        for (let i = 0; i < 2e5; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 50000) keep = []; }
        await new Promise((r) => setImmediate(r));
        max = Math.max(max, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
      }
      process.stdout.write(JSON.stringify({ newSpaceMiB: max / 1048576, gc: typeof globalThis.gc }));
    });`;
  return JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', timeout: 60_000 })) as { newSpaceMiB: number; gc: string };
}

describe('the node flags, applied late', () => {
  test('without them on the command line: a gc for the idle collector, and a young generation that does not grow', { timeout: 120_000 }, () => {
    const without = run(false);
    const late = run(true);
    expect(without.gc).toBe('undefined');
    expect(without.newSpaceMiB).toBeGreaterThan(8);
    expect(late.gc).toBe('function');
    expect(late.newSpaceMiB).toBeLessThanOrEqual(8);
  });
});
