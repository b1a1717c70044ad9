/**
 * The events list as a story: newest first, without non-changes ("still
 * Blocked"), and one line for a retry cycle rather than three per attempt
 * (connect failure, the close of the connection that never opened, "still
 * blocked"): consecutive failures to reach the same resolver for the same
 * reason fold into one line that counts them, keyed by its oldest attempt
 * so the line stays where it is and is updated in place as attempts come
 * (issue 29: an outage under lookups added two lines a second). Pure.
 */
import type { TimelineEvent } from '../../../proxy/control/api-types.js';
import { sentence } from './banner.js';
import { describeEvent, type EventLine, type ResolverNames } from './events.js';
import { formatClockShort } from './format.js';

export type EventKind = TimelineEvent['kind'] | 'all';

export interface StoryOptions {
  readonly kind: EventKind;
  readonly hideKeepalive: boolean;
  /** At most this many lines (the overview's recent events). */
  readonly limit?: number;
}

export interface StoryLine {
  /** Index of the line's first event (a retry cycle's oldest attempt): a stable React key, the same as the cycle grows. */
  readonly key: number;
  readonly line: EventLine;
  /** How many events the line stands for (1, or the attempts of a retry cycle). */
  readonly count: number;
}

type ConnectFailed = Extract<TimelineEvent, { kind: 'connection' }>['event'] & { type: 'connect-failed' };

function connectFailed(e: TimelineEvent): ConnectFailed | null {
  return e.kind === 'connection' && e.event.type === 'connect-failed' ? e.event : null;
}

/** `events` oldest first, as the store keeps them. */
export function storyline(events: readonly TimelineEvent[], names: ResolverNames, opts: StoryOptions): StoryLine[] {
  const out: StoryLine[] = [];
  // A connection that never opened closes right after its connect failure: that close is the failure's, not a line of
  // its own, whether or not lookups were waiting on it (they got SERVFAIL, which the failure's line already says).
  const opened = new Set<number>();
  for (const e of events) if (e.kind === 'connection' && e.event.type === 'open') opened.add(e.event.connectionId);
  // The failure a line (out[at]) stands for, while consecutive failures can still fold into it.
  let group: { readonly newest: ConnectFailed; readonly at: number; oldestAt: number; count: number } | null = null;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (opts.kind !== 'all' && e.kind !== opts.kind) continue;
    if (opts.hideKeepalive && e.kind === 'connection' && e.event.type === 'keepalive') continue;
    // A state event that changed nothing is noise, unless the user's choice made it (a turn-on whose connection is still opening).
    if (e.kind === 'state' && e.event.previous === e.event.state && !e.takeover) continue;
    if (e.kind === 'connection' && e.event.type === 'close' && !opened.has(e.event.connectionId)) continue;
    const f = connectFailed(e);
    if (f && group && group.newest.resolverId === f.resolverId && group.newest.code === f.code) {
      group.count++;
      group.oldestAt = f.at;
      const line = out[group.at]!;
      out[group.at] = { key: i, count: group.count, line: { ...line.line, detail: retryCycleDetail(group.newest, group.count, group.oldestAt) } };
      continue;
    }
    if (opts.limit !== undefined && out.length >= opts.limit) break;
    // The first failure is followed by the state change it causes ("Private → Stopped"): that line is kept, below the
    // cycle's, and the failure before it still folds into the cycle, so an outage is one line, not two.
    const causedBy = e.kind === 'state' && e.event.state === 'blocked' && group !== null && group.newest.resolverId === e.event.resolverId;
    if (!causedBy) group = f ? { newest: f, at: out.length, oldestAt: f.at, count: 1 } : null;
    out.push({ key: i, line: describeEvent(e, names), count: 1 });
  }
  return out;
}

/** Attempts closer than this on average were started by lookups (at most one a second, upstream/pool/backoff.ts). */
const LOOKUP_PACE_MS = 2_500;

/** A retry cycle: what failed (the latest attempt's words), then how often, in the banner's words (lib/retry.ts). */
function retryCycleDetail(newest: ConnectFailed, count: number, oldestAt: number): string {
  const since = `${sentence(newest.message)} ${count} attempts since ${formatClockShort(oldestAt)}, the last at ${formatClockShort(newest.at)}`;
  if ((newest.at - oldestAt) / (count - 1) < LOOKUP_PACE_MS) return `${since}: retrying with each lookup, about once a second.`;
  return `${since}: backing off while idle (at most 10 s apart), retrying by itself by ${formatClockShort(newest.at + newest.retryInMs)}, or with the next lookup.`;
}
