/**
 * The move away from a retired preset, in words (issue 29), true at the
 * moment they are shown: the notice is computed on every status read.
 *
 *   - the run uses the replacement and is connected to it: "now using Quad9";
 *   - the run uses it, not connected (yet, or it can't be reached): "your
 *     choice is now Quad9; not connected to it yet";
 *   - the saved choice is the replacement, the run uses another (--resolver):
 *     "your saved choice is now Quad9";
 *   - the user chose another since: "dotstub moved your choice to Quad9; you
 *     have chosen Cloudflare since".
 *
 * The timeline's line and the log's say only what happened at that moment
 * (`moveWords`): the move, not whether it connected.
 */
import type { RetiredNotice } from '../config/resolver-store.js';
import { closedSentence, PRESETS, retiredPreset, type RetiredPreset } from '../config/resolvers.js';
import type { RetiredNoticeView } from './api-types.js';

export interface RetiredNoticeFacts {
  readonly notice: RetiredNotice | null;
  /** The saved choice now (the user may have chosen another since the move); undefined: none listed. */
  readonly saved: { readonly id: string; readonly label: string } | undefined;
  /** The resolver this run uses now. */
  readonly running: string;
  /** Whether queries go out encrypted to it now (the privacy state is private, verified or not). */
  readonly connected: boolean;
}

const labelOf = (id: string): string => PRESETS[id]?.label ?? id;

/** The move as it happened: said once, in the timeline and the log. */
export function moveWords(retired: RetiredPreset): string {
  return `${closedSentence(retired)}; dotstub moved your choice to ${labelOf(retired.replacement)}`;
}

export function retiredNoticeView(f: RetiredNoticeFacts): RetiredNoticeView | null {
  const n = f.notice;
  const retired = n && retiredPreset(n.from);
  if (!n || !retired) return null;
  const toLabel = labelOf(n.to);
  const now =
    f.saved !== undefined && f.saved.id !== n.to
      ? `dotstub moved your choice to ${toLabel}; you have chosen ${f.saved.label} since`
      : f.running !== n.to
        ? `your saved choice is now ${toLabel}`
        : f.connected
          ? `now using ${toLabel}`
          : `your choice is now ${toLabel}; not connected to it yet`;
  return {
    from: n.from,
    fromLabel: retired.label,
    to: n.to,
    toLabel,
    closed: retired.closed,
    operator: retired.operator,
    words: retired.words,
    at: n.at,
    message: `${closedSentence(retired)}; ${now}`,
  };
}
