/**
 * The proxy started without its node flags (`node bin/dotstub.js`): the
 * idle collector still has its `gc`, the young generation still stays
 * small under a heavy allocation load (it grew to 32 MiB without this), and
 * the old generation is still collected before it grows far past what is
 * live.
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

/** ~10 MB kept, then ~150 MB of objects promoted to the old generation that then die; V8's largest heap meanwhile, MiB. */
function oldGenerationPeak(apply: boolean): number {
  const script = `
    const v8 = require('node:v8');
    import(${JSON.stringify(module)}).then(async (m) => {
      if (${apply}) m.applyLateFlags();
      const live = Array.from({ length: 100000 }, (_, i) => ({ i, s: 'live' + i }));
      const ring = new Array(30000);
      let peak = 0;
      for (let round = 0; round < 60; round++) {
        for (let i = 0; i < 30000; i++) ring[i] = { i, s: 'x' + i, t: [i, i + 1] };
        await new Promise((r) => setImmediate(r));
        peak = Math.max(peak, v8.getHeapStatistics().total_heap_size);
      }
      process.stdout.write(String(live.length && peak / 1048576));
    });`;
  return Number(execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', timeout: 60_000 }));
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

  test('without them on the command line: the old generation is collected before it grows far past what is live', { timeout: 120_000 }, () => {
    // Measured: 39–43 MiB applied late; 78–89 with only the young generation's cap applied late; 54–120 with nothing.
    expect(oldGenerationPeak(true)).toBeLessThanOrEqual(55);
  });
});
