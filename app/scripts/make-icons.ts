/**
 * Renders assets/src/*.svg into the PNGs the app uses, with Debian's
 * Chromium in headless mode (no new dependencies):
 *   tray-<state>.svg → assets/tray-<state>.png (16×16) and tray-<state>@2x.png (32×32)
 *   icon.svg         → assets/icon.png (256×256)
 * Then reads every PNG back and checks its size and transparent corners.
 *
 *   npx tsx app/scripts/make-icons.ts        (CHROMIUM=/path/to/chromium to override)
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { alphaAt, coverage, readPng } from './png.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const assets = path.join(root, 'assets');
const sources = path.join(assets, 'src');
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';

interface Job {
  readonly svg: string;
  readonly out: string;
  readonly size: number;
}

function jobs(): Job[] {
  const out: Job[] = [];
  for (const file of fs.readdirSync(sources).sort()) {
    if (!file.endsWith('.svg')) continue;
    const svg = path.join(sources, file);
    const base = file.slice(0, -4);
    if (base.startsWith('tray-')) {
      out.push({ svg, out: path.join(assets, `${base}.png`), size: 16 }, { svg, out: path.join(assets, `${base}@2x.png`), size: 32 });
    } else {
      out.push({ svg, out: path.join(assets, `${base}.png`), size: 256 });
    }
  }
  return out;
}

async function render(job: Job, tmp: string): Promise<void> {
  const page = path.join(tmp, `${path.basename(job.out)}.html`);
  // The SVG as an <img> at exactly the target size, on a transparent page.
  fs.writeFileSync(
    page,
    `<!doctype html><meta charset="utf-8"><style>html,body{margin:0;padding:0;background:transparent;overflow:hidden}img{display:block}</style>` +
      `<img src="${pathToFileURL(job.svg).href}" width="${job.size}" height="${job.size}">`,
  );
  const shot = path.join(tmp, path.basename(job.out));
  // A fresh profile per render, and a bounded retry: Chromium now and then
  // exits without writing the screenshot.
  for (let attempt = 1; ; attempt++) {
    fs.rmSync(shot, { force: true });
    await screenshot(job, page, shot, path.join(tmp, `profile-${path.basename(job.out)}-${attempt}`));
    if (fs.existsSync(shot)) break;
    if (attempt === 3) throw new Error(`${path.basename(job.out)}: Chromium wrote no screenshot in 3 attempts`);
  }
  check(fs.readFileSync(shot), job);
  fs.copyFileSync(shot, job.out);
}

async function screenshot(job: Job, page: string, shot: string, profile: string): Promise<void> {
  await run(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--hide-scrollbars',
      '--force-device-scale-factor=1',
      '--default-background-color=00000000',
      `--user-data-dir=${profile}`,
      `--window-size=${job.size},${job.size}`,
      `--screenshot=${shot}`,
      pathToFileURL(page).href,
    ],
    { timeout: 60_000 },
  );
}

function check(data: Buffer, job: Job): void {
  const png = readPng(data);
  const name = path.basename(job.out);
  if (png.width !== job.size || png.height !== job.size) throw new Error(`${name}: rendered ${png.width}×${png.height}, expected ${job.size}×${job.size}`);
  const last = job.size - 1;
  for (const [x, y] of [[0, 0], [last, 0], [0, last], [last, last]] as const) {
    if (alphaAt(png, x, y) !== 0) throw new Error(`${name}: corner (${x},${y}) is not transparent: was the background transparent?`);
  }
  const c = coverage(png);
  if (c < 0.1) throw new Error(`${name}: only ${(c * 100).toFixed(0)}% of pixels drawn: did the SVG load?`);
}

async function main(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-icons-'));
  try {
    for (const job of jobs()) {
      await render(job, tmp);
      console.log(`${path.relative(root, job.out)}  ${job.size}×${job.size}`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
