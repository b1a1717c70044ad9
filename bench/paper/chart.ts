/**
 * Small SVG charts for the paper bench, written by hand like bench/plot.ts
 * (no dependency): grouped bars (categories × series) and lines (x, y per
 * series). A PNG is rendered beside each with headless Chromium when present.
 */
import fs from 'node:fs';
import path from 'node:path';
import { renderPng } from '../plot.js';

const W = 1000;
const H = 480;
const PAD = { l: 70, r: 180, t: 50, b: 70 };
const PALETTE = ['#2563eb', '#ea580c', '#16a34a', '#7c3aed', '#dc2626', '#0891b2', '#ca8a04', '#db2777', '#4b5563', '#65a30d'];

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function niceTop(v: number): number {
  if (!(v > 0)) return 1;
  const mag = 10 ** Math.floor(Math.log10(v));
  return ([1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].map((m) => m * mag).find((s) => s >= v) ?? v);
}

function frame(title: string, subtitle: string, yLabel: string, top: number, xLabel: string): string[] {
  const ph = H - PAD.t - PAD.b;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${PAD.l}" y="22" font-size="16" font-weight="bold">${esc(title)}</text>`,
    `<text x="${PAD.l}" y="40" fill="#555">${esc(subtitle)}</text>`,
    `<text x="18" y="${PAD.t + ph / 2}" transform="rotate(-90 18 ${PAD.t + ph / 2})" text-anchor="middle">${esc(yLabel)}</text>`,
    `<text x="${PAD.l + (W - PAD.l - PAD.r) / 2}" y="${H - 12}" text-anchor="middle">${esc(xLabel)}</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const v = (top * i) / 5;
    const y = PAD.t + ph - (ph * i) / 5;
    out.push(`<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${y}" y2="${y}" stroke="#ddd"/>`, `<text x="${PAD.l - 6}" y="${y + 4}" text-anchor="end">${Number(v.toPrecision(3))}</text>`);
  }
  return out;
}

function legend(series: readonly string[]): string[] {
  return series.flatMap((s, i) => [
    `<rect x="${W - PAD.r + 16}" y="${PAD.t + i * 20}" width="12" height="12" fill="${PALETTE[i % PALETTE.length]}"/>`,
    `<text x="${W - PAD.r + 34}" y="${PAD.t + i * 20 + 10}">${esc(s)}</text>`,
  ]);
}

export interface Bars {
  readonly title: string;
  readonly subtitle: string;
  readonly yLabel: string;
  readonly categories: readonly string[];
  /** series name → one value per category (NaN: no bar). */
  readonly series: Readonly<Record<string, readonly number[]>>;
  /** A dashed reference line, e.g. the paper's figure. */
  readonly reference?: { readonly value: number; readonly label: string };
}

export function barsSvg(b: Bars): string {
  const names = Object.keys(b.series);
  const all = names.flatMap((n) => b.series[n] ?? []).filter(Number.isFinite);
  const top = niceTop(Math.max(...all, b.reference?.value ?? 0, 1e-9) * 1.05);
  const pw = W - PAD.l - PAD.r;
  const ph = H - PAD.t - PAD.b;
  const out = frame(b.title, b.subtitle, b.yLabel, top, '');
  const group = pw / Math.max(1, b.categories.length);
  const bw = (group * 0.8) / Math.max(1, names.length);
  b.categories.forEach((c, ci) => {
    const gx = PAD.l + ci * group + group * 0.1;
    out.push(`<text x="${gx + group * 0.4}" y="${PAD.t + ph + 16}" text-anchor="middle">${esc(c)}</text>`);
    names.forEach((n, si) => {
      const v = b.series[n]?.[ci] ?? Number.NaN;
      if (!Number.isFinite(v)) return;
      const h = (ph * v) / top;
      out.push(`<rect x="${gx + si * bw}" y="${PAD.t + ph - h}" width="${bw - 1}" height="${h}" fill="${PALETTE[si % PALETTE.length]}"><title>${esc(`${n} ${c}: ${v.toFixed(2)}`)}</title></rect>`);
    });
  });
  if (b.reference) {
    const y = PAD.t + ph - (ph * b.reference.value) / top;
    out.push(`<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${y}" y2="${y}" stroke="#000" stroke-dasharray="6 4"/>`, `<text x="${W - PAD.r - 4}" y="${y - 4}" text-anchor="end">${esc(b.reference.label)}</text>`);
  }
  out.push(...legend(names), '</svg>', '');
  return out.join('\n');
}

export interface Lines {
  readonly title: string;
  readonly subtitle: string;
  readonly xLabel: string;
  readonly yLabel: string;
  /** series name → points. */
  readonly series: Readonly<Record<string, readonly (readonly [number, number])[]>>;
  readonly logX?: boolean;
  readonly yMax?: number;
}

export function linesSvg(l: Lines): string {
  const names = Object.keys(l.series);
  const pts = names.flatMap((n) => l.series[n] ?? []);
  const xs = pts.map((p) => p[0]).filter(Number.isFinite);
  const fx = (x: number): number => (l.logX ? Math.log10(Math.max(x, 1e-9)) : x);
  const x0 = Math.min(...xs.map(fx));
  const x1 = Math.max(...xs.map(fx), x0 + 1e-9);
  const top = l.yMax ?? niceTop(Math.max(...pts.map((p) => p[1]).filter(Number.isFinite), 1e-9) * 1.05);
  const pw = W - PAD.l - PAD.r;
  const ph = H - PAD.t - PAD.b;
  const X = (x: number): number => PAD.l + ((fx(x) - x0) / (x1 - x0)) * pw;
  const Y = (y: number): number => PAD.t + ph - (ph * Math.min(y, top)) / top;
  const out = frame(l.title, l.subtitle, l.yLabel, top, l.xLabel);
  const xt = [...new Set(xs)].sort((a, b) => a - b);
  const step = Math.max(1, Math.ceil(xt.length / 10));
  xt.filter((_, i) => i % step === 0).forEach((x) => out.push(`<text x="${X(x)}" y="${PAD.t + ph + 16}" text-anchor="middle">${Number(x.toPrecision(3))}</text>`));
  names.forEach((n, si) => {
    const p = (l.series[n] ?? []).filter((q) => Number.isFinite(q[0]) && Number.isFinite(q[1]));
    if (!p.length) return;
    const color = PALETTE[si % PALETTE.length] ?? '#000';
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${p.map((q) => `${X(q[0]).toFixed(1)},${Y(q[1]).toFixed(1)}`).join(' ')}"/>`);
  });
  out.push(...legend(names), '</svg>', '');
  return out.join('\n');
}

/** Writes `svg` as `<dir>/<name>.svg` and a PNG beside it when Chromium is there; returns the file to show. */
export function writeChart(dir: string, name: string, svg: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.svg`);
  fs.writeFileSync(file, svg);
  const png = renderPng(file);
  return path.basename(png.png ?? file);
}
