/**
 * Just enough PNG reading to check the generated icons: size, colour type,
 * and pixels (8-bit RGBA, non-interlaced — what Chromium's screenshots are).
 */
import zlib from 'node:zlib';

export interface Png {
  readonly width: number;
  readonly height: number;
  /** RGBA, row by row. */
  readonly pixels: Uint8Array;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function readPng(data: Buffer): Png {
  if (data.length < 33 || !data.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG file');
  const width = data.readUInt32BE(16);
  const height = data.readUInt32BE(20);
  const [depth, colorType, , , interlace] = data.subarray(24, 29);
  if (depth !== 8 || colorType !== 6 || interlace !== 0) {
    throw new Error(`expected 8-bit RGBA non-interlaced, got depth ${depth} colour type ${colorType} interlace ${interlace}`);
  }
  const idat: Buffer[] = [];
  for (let o = 8; o + 8 <= data.length; ) {
    const len = data.readUInt32BE(o);
    const type = data.toString('latin1', o + 4, o + 8);
    if (type === 'IDAT') idat.push(data.subarray(o + 8, o + 8 + len));
    if (type === 'IEND') break;
    o += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * 4;
  if (raw.length !== height * (stride + 1)) throw new Error('PNG data has the wrong length');
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= 4 ? (pixels[row + x - 4] as number) : 0;
      const b = y > 0 ? (pixels[row - stride + x] as number) : 0;
      const c = x >= 4 && y > 0 ? (pixels[row - stride + x - 4] as number) : 0;
      const v = src[x] as number;
      let out: number;
      switch (filter) {
        case 0: out = v; break;
        case 1: out = v + a; break;
        case 2: out = v + b; break;
        case 3: out = v + ((a + b) >> 1); break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
          out = v + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
          break;
        }
        default: throw new Error(`bad PNG filter ${filter}`);
      }
      pixels[row + x] = out & 0xff;
    }
  }
  return { width, height, pixels };
}

export function alphaAt(png: Png, x: number, y: number): number {
  return png.pixels[(y * png.width + x) * 4 + 3] as number;
}

/** Share of pixels that are at least half opaque. */
export function coverage(png: Png): number {
  let n = 0;
  for (let i = 3; i < png.pixels.length; i += 4) if ((png.pixels[i] as number) >= 128) n++;
  return n / (png.width * png.height);
}
