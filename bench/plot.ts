/**
 * The results as a chart, written as SVG by hand (no dependency): max qps per
 * peer with its min–max over rounds, and p50/p99 latency at the fixed rate.
 * A PNG is rendered from it with headless Chromium when one is installed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { PeerSummary } from './summary.js';

const W = 1000;
const H = 480;
export const COLORS: Record<string, string> = { dotstub: '#2563eb', stubby: '#ea580c', dnsdist: '#16a34a', 'unbound-fwd': '#7c3aed', floor: '#9ca3af' };

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Round tick step (1, 2 or 5 × 10^n) giving about five ticks up to `top`. */
function ticks(top: number): number[] {
  if (!(top > 0)) return [0];
  const raw = top / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = 0; v <= top * 1.0001 + step; v += step) {
    out.push(Number(v.toPrecision(12)));
    if (v >= top) break;
  }
  return out;
}

function fmtQps(v: number): string {
  return v >= 1000 ? `${(v / 1000).toFixed(1)}k` : v.toFixed(0);
}

interface Panel {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

function axis(p: Panel, ts: readonly number[], label: string, fmt: (v: number) => string): { svg: string[]; scale: (v: number) => number } {
  const top = ts[ts.length - 1] ?? 1;
  const scale = (v: number): number => p.y + p.h - (Math.max(0, v) / top) * p.h;
  const svg: string[] = [];
  for (const t of ts) {
    const yy = scale(t).toFixed(1);
    svg.push(`<line x1="${p.x}" x2="${p.x + p.w}" y1="${yy}" y2="${yy}" stroke="#e5e7eb"/>`);
    svg.push(`<text x="${p.x - 6}" y="${yy}" text-anchor="end" dominant-baseline="middle" class="tick">${fmt(t)}</text>`);
  }
  svg.push(`<line x1="${p.x}" x2="${p.x + p.w}" y1="${p.y + p.h}" y2="${p.y + p.h}" stroke="#374151"/>`);
  svg.push(`<text transform="translate(${p.x - 48},${p.y + p.h / 2}) rotate(-90)" text-anchor="middle" class="axis">${esc(label)}</text>`);
  return { svg, scale };
}

function qpsPanel(p: Panel, peers: readonly PeerSummary[]): string[] {
  const top = Math.max(...peers.map((s) => (Number.isFinite(s.maxQpsMax) ? s.maxQpsMax : 0)), 1) * 1.15;
  const { svg, scale } = axis(p, ticks(top), 'queries per second', fmtQps);
  const slot = p.w / peers.length;
  const bw = Math.min(70, slot * 0.6);
  peers.forEach((s, i) => {
    const cx = p.x + slot * (i + 0.5);
    const color = COLORS[s.name] ?? '#6b7280';
    const y = scale(Number.isFinite(s.maxQps) ? s.maxQps : 0);
    svg.push(`<rect x="${(cx - bw / 2).toFixed(1)}" y="${y.toFixed(1)}" width="${bw.toFixed(1)}" height="${(p.y + p.h - y).toFixed(1)}" fill="${color}"/>`);
    if (Number.isFinite(s.maxQpsMin) && Number.isFinite(s.maxQpsMax)) {
      const y0 = scale(s.maxQpsMin).toFixed(1);
      const y1 = scale(s.maxQpsMax).toFixed(1);
      svg.push(`<line x1="${cx}" x2="${cx}" y1="${y0}" y2="${y1}" stroke="#111827" stroke-width="1.5"/>`);
      svg.push(`<line x1="${cx - 6}" x2="${cx + 6}" y1="${y0}" y2="${y0}" stroke="#111827" stroke-width="1.5"/>`);
      svg.push(`<line x1="${cx - 6}" x2="${cx + 6}" y1="${y1}" y2="${y1}" stroke="#111827" stroke-width="1.5"/>`);
    }
    const labelY = Math.min(y, Number.isFinite(s.maxQpsMax) ? scale(s.maxQpsMax) : y) - 8;
    const ratio = Number.isFinite(s.qpsVsStubby) ? ` (${s.qpsVsStubby.toFixed(2)}×)` : '';
    svg.push(`<text x="${cx}" y="${labelY.toFixed(1)}" text-anchor="middle" class="value">${fmtQps(s.maxQps)}${s.name === 'stubby' ? '' : esc(ratio)}</text>`);
    svg.push(`<text x="${cx}" y="${p.y + p.h + 18}" text-anchor="middle" class="name">${esc(s.name)}</text>`);
  });
  return svg;
}

/** Latency on a log axis: a p99 of tens of ms must not flatten p50s of a fraction of one. */
function latencyPanel(p: Panel, peers: readonly PeerSummary[]): string[] {
  const values = peers.flatMap((s) => [s.p50Ms, s.p99Ms]).filter((v) => Number.isFinite(v) && v > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...values, 1)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...values, 1) * 1.3));
  const scale = (v: number): number => p.y + p.h - ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * p.h;
  const svg: string[] = [];
  for (let decade = lo; decade < hi * 1.0001; decade *= 10) {
    for (const m of [1, 2, 5]) {
      const t = decade * m;
      if (t > hi * 1.0001) break;
      const yy = scale(t).toFixed(1);
      svg.push(`<line x1="${p.x}" x2="${p.x + p.w}" y1="${yy}" y2="${yy}" stroke="${m === 1 ? '#d1d5db' : '#f3f4f6'}"/>`);
      svg.push(`<text x="${p.x - 6}" y="${yy}" text-anchor="end" dominant-baseline="middle" class="tick">${Number(t.toPrecision(3))}</text>`);
    }
  }
  svg.push(`<line x1="${p.x}" x2="${p.x + p.w}" y1="${p.y + p.h}" y2="${p.y + p.h}" stroke="#374151"/>`);
  svg.push(`<text transform="translate(${p.x - 48},${p.y + p.h / 2}) rotate(-90)" text-anchor="middle" class="axis">latency, ms (log scale)</text>`);
  const slot = p.w / peers.length;
  const bw = Math.min(34, slot * 0.3);
  peers.forEach((s, i) => {
    const cx = p.x + slot * (i + 0.5);
    const color = COLORS[s.name] ?? '#6b7280';
    ([
      [s.p50Ms, cx - bw / 2 - 2, 0.45],
      [s.p99Ms, cx + bw / 2 + 2, 1],
    ] as const).forEach(([v, bx, opacity]) => {
      const y = Number.isFinite(v) ? scale(v) : p.y + p.h;
      svg.push(`<rect x="${(bx - bw / 2).toFixed(1)}" y="${y.toFixed(1)}" width="${bw.toFixed(1)}" height="${(p.y + p.h - y).toFixed(1)}" fill="${color}" fill-opacity="${opacity}"/>`);
      svg.push(`<text x="${bx.toFixed(1)}" y="${(y - 6).toFixed(1)}" text-anchor="middle" class="small">${Number.isFinite(v) ? v.toFixed(2) : '–'}</text>`);
    });
    svg.push(`<text x="${cx}" y="${p.y + p.h + 18}" text-anchor="middle" class="name">${esc(s.name)}</text>`);
  });
  return svg;
}

export function svgChart(peers: readonly PeerSummary[], title: string, subtitle: string, rateQps: number): string {
  const left: Panel = { x: 80, y: 110, w: 390, h: 290 };
  const right: Panel = { x: 580, y: 110, w: 390, h: 290 };
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`,
    '<style>.tick{font-size:11px;fill:#4b5563}.axis{font-size:12px;fill:#374151}.name{font-size:13px;fill:#111827}.value{font-size:12px;font-weight:bold;fill:#111827}.small{font-size:10.5px;fill:#111827}.title{font-size:18px;font-weight:bold}.sub{font-size:12px;fill:#4b5563}.panel{font-size:14px;font-weight:bold;fill:#111827}</style>',
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${W / 2}" y="28" text-anchor="middle" class="title">${esc(title)}</text>`,
    `<text x="${W / 2}" y="48" text-anchor="middle" class="sub">${esc(subtitle)}</text>`,
    `<text x="${left.x + left.w / 2}" y="84" text-anchor="middle" class="panel">Max throughput (median; bars: min–max over rounds; ×stubby)</text>`,
    `<text x="${right.x + right.w / 2}" y="84" text-anchor="middle" class="panel">Latency at ${rateQps} qps: p50 (light) and p99 (dark)</text>`,
    ...qpsPanel(left, peers),
    ...latencyPanel(right, peers),
    `<text x="${W / 2}" y="${H - 16}" text-anchor="middle" class="sub">UDP from dnsperf on 127.0.0.1 → peer → one DoT connection → unbound (local data). Ratios are per round against stubby, then the median.</text>`,
    '</svg>',
    '',
  ].join('\n');
}

const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--hide-scrollbars'];

/** Renders `svgFile` to PNG next to it with headless Chromium; undefined (and a reason) if that is not possible. */
export function renderPng(svgFile: string): { png?: string; error?: string } {
  const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => fs.existsSync(p));
  if (!chromium) return { error: 'no chromium installed; SVG only' };
  const png = svgFile.replace(/\.svg$/, '.png');
  const profile = fs.mkdtempSync(path.join(path.dirname(svgFile), '.chromium-'));
  try {
    fs.rmSync(png, { force: true });
    const r = spawnSync(
      chromium,
      [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, `--window-size=${W},${H}`, `--screenshot=${png}`, `file://${path.resolve(svgFile)}`],
      { timeout: 60_000, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    if (!fs.existsSync(png)) return { error: `chromium made no PNG (exit ${r.status}): ${r.stderr?.toString().trim().split('\n').slice(-2).join(' ')}` };
    return { png };
  } finally {
    fs.rmSync(profile, { recursive: true, force: true });
  }
}
