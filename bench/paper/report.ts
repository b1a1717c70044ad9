/**
 * What each experiment of the paper bench hands back, and how it is written:
 * markdown tables (values in RTT units unless a column says ms), the paper's
 * figure beside them, goals met or not, and the charts' files.
 */
import fs from 'node:fs';
import path from 'node:path';

interface Table {
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

export interface Goal {
  readonly goal: string;
  readonly value: string;
  /** undefined: could not be judged in this run (say why in `value`). */
  readonly met: boolean | undefined;
}

export interface ExperimentReport {
  readonly id: string;
  readonly title: string;
  /** What the paper (or the issue) reported, to read beside the tables. */
  readonly paper: string;
  readonly tables: readonly Table[];
  readonly goals: readonly Goal[];
  readonly notes: readonly string[];
  /** Chart files written (relative to the output directory). */
  readonly charts: readonly string[];
  readonly seconds: number;
  /** The raw samples, for the JSON file. */
  readonly data?: unknown;
}

function mdTable(t: Table): string {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  return [`**${t.title}**`, '', `| ${t.header.map(esc).join(' | ')} |`, `| ${t.header.map(() => '---').join(' | ')} |`, ...t.rows.map((r) => `| ${r.map(esc).join(' | ')} |`), ''].join('\n');
}

function mdReport(r: ExperimentReport): string {
  const goals = r.goals.length
    ? ['Goals:', '', ...r.goals.map((g) => `- ${g.met === undefined ? '—' : g.met ? 'MET' : 'NOT MET'}: ${g.goal} — ${g.value}`), '']
    : [];
  return [
    `## ${r.title}`,
    '',
    `Paper / issue: ${r.paper}`,
    '',
    ...r.tables.map(mdTable),
    ...goals,
    ...(r.notes.length ? [...r.notes.map((n) => `- ${n}`), ''] : []),
    ...r.charts.map((c) => `![${r.id}](${c})`),
    '',
    `(${r.seconds.toFixed(0)} s)`,
    '',
  ].join('\n');
}

/** Writes `paper.md` and `paper.json` (or `<name>.md/.json`) into `dir`. */
export function writeReports(dir: string, name: string, header: string, reports: readonly ExperimentReport[]): { md: string; json: string } {
  fs.mkdirSync(dir, { recursive: true });
  const md = path.join(dir, `${name}.md`);
  const json = path.join(dir, `${name}.json`);
  fs.writeFileSync(md, [header, '', ...reports.map(mdReport)].join('\n'));
  fs.writeFileSync(json, `${JSON.stringify({ header, reports }, null, 1)}\n`);
  return { md, json };
}

/** A number in RTT units, two decimals; "—" when not a number. */
export function rtt(ms: number, rttMs: number): string {
  return Number.isFinite(ms) ? (ms / rttMs).toFixed(2) : '—';
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  return ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2);
}
