/** The committed icons (assets/, made by app/scripts/make-icons.ts) exist for every state, at the sizes the tray loads. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { alphaAt, coverage, readPng } from '../scripts/png.js';
import { APP_ICON, iconForState, TRAY_ICON_STATES } from './icon-for-state.js';

const assets = fileURLToPath(new URL('../../assets', import.meta.url));

function load(file: string): ReturnType<typeof readPng> {
  return readPng(fs.readFileSync(path.join(assets, file)));
}

describe('tray icons', () => {
  it.each(TRAY_ICON_STATES)('%s: 16×16 and @2x 32×32 RGBA with transparent corners, plus its SVG source', (privacy) => {
    const file = iconForState({ privacy, proxyRunning: true });
    for (const [name, size] of [[file, 16], [file.replace(/\.png$/, '@2x.png'), 32]] as const) {
      const png = load(name);
      expect([png.width, png.height]).toEqual([size, size]);
      expect(alphaAt(png, 0, 0)).toBe(0);
      expect(alphaAt(png, size - 1, size - 1)).toBe(0);
      expect(coverage(png)).toBeGreaterThan(0.1);
    }
    expect(fs.existsSync(path.join(assets, 'src', file.replace(/\.png$/, '.svg')))).toBe(true);
  });

  it('differ in shape, not only colour: their alpha masks differ pairwise', () => {
    const masks = TRAY_ICON_STATES.map((privacy) => {
      const png = load(iconForState({ privacy, proxyRunning: true }).replace(/\.png$/, '@2x.png'));
      return Array.from({ length: 32 * 32 }, (_, i) => ((png.pixels[i * 4 + 3] as number) >= 128 ? 1 : 0));
    });
    for (let a = 0; a < masks.length; a++) {
      for (let b = a + 1; b < masks.length; b++) {
        const diff = (masks[a] as number[]).filter((v, i) => v !== (masks[b] as number[])[i]).length;
        expect(diff, `${TRAY_ICON_STATES[a]} vs ${TRAY_ICON_STATES[b]}`).toBeGreaterThan(20);
      }
    }
  });

  it('has a 256×256 app icon', () => {
    const png = load(APP_ICON);
    expect([png.width, png.height]).toEqual([256, 256]);
  });
});
