/**
 * Reads a V8 .cpuprofile (from `node --cpu-prof`) and ranks where the time
 * went: self time per function and per source file. Percentages are of the
 * busy time (everything but `(idle)`), which is what an optimiser can win.
 */
import fs from 'node:fs';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface Hotspot {
  readonly name: string;
  readonly where: string;
  readonly selfMs: number;
  /** Share of busy (non-idle) time, 0..100. */
  readonly pct: number;
}

export interface ProfileSummary {
  readonly totalMs: number;
  readonly idleMs: number;
  readonly busyMs: number;
  readonly functions: readonly Hotspot[];
  readonly files: readonly Hotspot[];
}

/** A readable place for a script URL: the repo-relative path, node's internal module name, or a package name. */
export function shortUrl(url: string, root: string): string {
  if (url === '') return '';
  const file = url.startsWith('file://') ? decodeURI(url.slice('file://'.length)) : url;
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) return file.slice(nm + '/node_modules/'.length);
  if (file.startsWith(`${root}/`)) return file.slice(root.length + 1);
  return file;
}

export function summariseProfile(file: string, root: string, top = 15): ProfileSummary {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, CallFrame>();
  for (const n of profile.nodes) byId.set(n.id, n.callFrame);
  const fn = new Map<string, { name: string; where: string; ms: number }>();
  const files = new Map<string, number>();
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    // timeDeltas[i] is the time since the previous sample: charge it to this one.
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const cf = byId.get(id);
    if (!cf) return;
    total += ms;
    if (cf.functionName === '(idle)') {
      idle += ms;
      return;
    }
    const where = cf.url ? `${shortUrl(cf.url, root)}:${cf.lineNumber + 1}` : '';
    const name = cf.functionName || '(anonymous)';
    const key = `${name}\u0000${where}`;
    const e = fn.get(key) ?? { name, where, ms: 0 };
    e.ms += ms;
    fn.set(key, e);
    const fileKey = cf.url ? shortUrl(cf.url, root) : name;
    files.set(fileKey, (files.get(fileKey) ?? 0) + ms);
  });
  const busy = total - idle;
  const pct = (ms: number): number => (busy > 0 ? (ms / busy) * 100 : 0);
  return {
    totalMs: total,
    idleMs: idle,
    busyMs: busy,
    functions: [...fn.values()]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, top)
      .map((e) => ({ name: e.name, where: e.where, selfMs: e.ms, pct: pct(e.ms) })),
    files: [...files.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([where, ms]) => ({ name: where, where, selfMs: ms, pct: pct(ms) })),
  };
}

export function profileMarkdown(s: ProfileSummary, context: string): string {
  const rows = (hs: readonly Hotspot[], withWhere: boolean): string[] =>
    hs.map((h, i) => `| ${i + 1} | ${withWhere ? `\`${h.name}\` | ${h.where}` : h.name} | ${h.selfMs.toFixed(0)} | ${h.pct.toFixed(1)}% |`);
  return [
    '# dotstub CPU profile under maximum load',
    '',
    context,
    '',
    `Sampled ${(s.totalMs / 1000).toFixed(1)} s: busy ${(s.busyMs / 1000).toFixed(1)} s, idle ${(s.idleMs / 1000).toFixed(1)} s. Percentages are of busy time.`,
    '',
    '## Top functions by self time',
    '',
    '| # | function | where | self ms | % busy |',
    '| --- | --- | --- | --- | --- |',
    ...rows(s.functions, true),
    '',
    '## Self time by file',
    '',
    '| # | file | self ms | % busy |',
    '| --- | --- | --- | --- |',
    ...rows(s.files, false),
    '',
  ].join('\n');
}
