/**
 * "Test resolvers" results as rows to draw (POST /api/resolvers/test): the
 * ranked ones with one bar per transport on one scale, the ones that
 * couldn't be measured with why, and the ones left out. Pure.
 */
import type { ResolverTestResult, TransportMeasurement } from '../../../proxy/control/api-types.js';
import { formatLatencyMs } from './format.js';
import { barShare, latencyScale, type LatencyScale } from './latency-scale.js';
import { failureShort } from '../../../proxy/control/failure-words.js';

interface TransportBar {
  readonly transport: 'dot' | 'doh';
  /** "DoT" / "DoH" */
  readonly name: string;
  /** 0…1 of the scale; 0 when it failed. */
  readonly share: number;
  /** "0.87 ms on an open connection · 59.6 ms new" or why it failed. */
  readonly text: string;
  readonly ok: boolean;
}

interface RankedRow {
  readonly id: string;
  readonly label: string;
  readonly rank: number;
  readonly active: boolean;
  /** "0.87 ms" (the best over its transports). */
  readonly best: string;
  readonly bars: readonly TransportBar[];
  /** Times slower than the fastest, e.g. "12× the fastest"; null for the fastest. */
  readonly versus: string | null;
}

interface FailedRow {
  readonly id: string;
  readonly label: string;
  readonly active: boolean;
  readonly why: string;
}

export interface TestModel {
  readonly ranked: readonly RankedRow[];
  readonly failed: readonly FailedRow[];
  /** Labels of the resolvers not measured, and why (the same reason for all). */
  readonly skipped: { readonly labels: readonly string[]; readonly why: string } | null;
  readonly scale: LatencyScale | null;
  /** The fastest, when it isn't the one in use and beats it by more than the noise: offered as the switch. */
  readonly suggestion: { readonly id: string; readonly label: string; readonly gain: string } | null;
  /** The fastest and the one in use differ by no more than the measurement's noise: a tie, said so, nothing offered. */
  readonly tie: { readonly fastest: string; readonly active: string; readonly apart: string } | null;
}

const NAMES = { dot: 'DoT', doh: 'DoH' } as const;

function barText(t: TransportMeasurement): string {
  if (!t.ok) return t.error ?? 'failed';
  return `${formatLatencyMs(t.warmMs)} on an open connection · ${formatLatencyMs(t.freshMs)} new`;
}

export function testModel(result: ResolverTestResult, activeId: string): TestModel {
  const warm = result.resolvers.flatMap((r) => r.transports.filter((t) => t.ok).map((t) => t.warmMs));
  const scale = latencyScale(warm);
  const fastest = result.resolvers.find((r) => r.rank === 1);
  const ranked: RankedRow[] = result.resolvers
    .filter((r) => r.rank !== null && r.bestMs !== null)
    .map((r) => ({
      id: r.id,
      label: r.label,
      rank: r.rank as number,
      active: r.id === activeId,
      best: formatLatencyMs(r.bestMs),
      versus:
        r.rank === 1 || !fastest?.bestMs || !r.bestMs
          ? null
          : `${(r.bestMs / fastest.bestMs).toFixed(r.bestMs / fastest.bestMs < 10 ? 1 : 0)}× the fastest`,
      bars: r.transports.map((t) => ({
        transport: t.transport,
        name: NAMES[t.transport],
        share: t.ok ? barShare(t.warmMs, scale) : 0,
        text: barText(t),
        ok: t.ok,
      })),
    }));
  const failed: FailedRow[] = result.resolvers
    .filter((r) => r.measured && r.rank === null)
    .map((r) => ({
      id: r.id,
      label: r.label,
      active: r.id === activeId,
      why: r.transports.map((t) => `${NAMES[t.transport]}: ${t.error ?? 'no answer'}`).join(' ') || 'no answer',
    }));
  const left = result.resolvers.filter((r) => !r.measured);
  const active = ranked.find((r) => r.active);
  const top = ranked[0];
  const topMs = top ? bestMsOf(result, top.id) : null;
  const activeMs = active ? bestMsOf(result, active.id) : null;
  const tied = top !== undefined && active !== undefined && !top.active && topMs !== null && activeMs !== null && isTie(topMs, activeMs);
  const suggestion =
    top && !top.active && !tied
      ? {
          id: top.id,
          label: top.label,
          gain: active
            ? `${top.best} instead of ${active.best} per query on an open connection`
            : `${top.best} per query on an open connection; the one in use couldn’t be measured`,
        }
      : null;
  return {
    ranked,
    failed,
    skipped: left.length ? { labels: left.map((r) => r.label), why: left[0]?.skipped ?? 'not measured' } : null,
    scale,
    suggestion,
    tie: tied && top && active && topMs !== null && activeMs !== null ? { fastest: top.label, active: active.label, apart: formatLatencyMs(Math.abs(activeMs - topMs)) } : null,
  };
}

/**
 * Two medians closer than this are a tie: the test takes a few samples of
 * each on a noisy machine and network, and a 0.07 ms lead is nobody's
 * (issue 44). Half a millisecond, or 5 % of the faster, whichever is more.
 */
function isTie(fasterMs: number, otherMs: number): boolean {
  return otherMs - fasterMs <= Math.max(0.5, fasterMs * 0.05);
}

function bestMsOf(result: ResolverTestResult, id: string): number | null {
  return result.resolvers.find((r) => r.id === id)?.bestMs ?? null;
}

/** What the last test found for one resolver, said on its card (issue 24 item 10). */
export type CardMeasure =
  | {
      readonly kind: 'ranked';
      readonly rank: number;
      readonly fastest: boolean;
      readonly best: string;
      /** The card's one figure (a lookup on an open connection, the best transport), for its bar on the test's scale. */
      readonly bestMs: number;
      readonly versus: string | null;
      readonly bars: readonly TransportBar[];
    }
  /** "unreachable: connection refused at 23:05" */
  | { readonly kind: 'failed'; readonly text: string; readonly why: string }
  /** Not tried: "not measured", with why. */
  | { readonly kind: 'skipped'; readonly why: string };

/** Each resolver's result, by id, from `model` and `result` (when it ran: `at`, for the clock). */
export function cardMeasures(model: TestModel, result: ResolverTestResult, clock: (at: number) => string): ReadonlyMap<string, CardMeasure> {
  const out = new Map<string, CardMeasure>();
  const bestMs = new Map(result.resolvers.map((r) => [r.id, r.bestMs ?? 0]));
  for (const r of model.ranked) out.set(r.id, { kind: 'ranked', rank: r.rank, fastest: r.rank === 1, best: r.best, bestMs: bestMs.get(r.id) ?? 0, versus: r.versus, bars: r.bars });
  for (const r of result.resolvers) {
    if (out.has(r.id)) continue;
    if (!r.measured) {
      out.set(r.id, { kind: 'skipped', why: r.skipped ?? 'not tried' });
      continue;
    }
    const failed = r.transports.find((t) => !t.ok);
    out.set(r.id, {
      kind: 'failed',
      text: `unreachable: ${failureShort(failed?.kind)} at ${clock(result.startedAt)}`,
      why: r.transports.map((t) => `${NAMES[t.transport]}: ${t.error ?? 'no answer'}`).join(' ') || 'no answer',
    });
  }
  return out;
}

/**
 * The scale of the cards' bars: one figure per card, all on one scale
 * (issue 29: the cards mixed a 5-minute median with the test's figures, on
 * two scales). After a test, a lookup on an open connection as the test
 * measured it (its best transport), for every card; before any, each
 * resolver's median over the last 5 minutes.
 */
export function cardScale(result: ResolverTestResult | null, medians: readonly (number | null)[]): { readonly source: 'test' | 'median'; readonly scale: LatencyScale | null } {
  return result ? { source: 'test', scale: latencyScale(result.resolvers.map((r) => r.bestMs)) } : { source: 'median', scale: latencyScale(medians) };
}

/**
 * The cards' order: the one in use first; after a test, the rest fastest
 * first, then the unreachable, then the ones not measured; else as listed.
 */
export function cardOrder<T extends { readonly id: string; readonly preset?: boolean }>(items: readonly T[], activeId: string, result: ResolverTestResult | null): T[] {
  const rank = new Map(result?.resolvers.map((r, i) => [r.id, i]) ?? []);
  // Among those the test doesn't order, the user's own resolvers before the presets (issue 44): the ones they added
  // are the ones they came for.
  const key = (x: T, i: number): number => (x.id === activeId ? -1 : (rank.get(x.id) ?? items.length) * 1000 + (x.preset === true ? 500 : 0) + i);
  return items.map((x, i) => ({ x, k: key(x, i) })).sort((a, b) => a.k - b.k).map((e) => e.x);
}
