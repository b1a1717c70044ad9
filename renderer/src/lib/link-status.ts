/**
 * What the dashboard may claim, given its link to the proxy (issue 14,
 * items 1 and 8). Everything on screen came from the proxy; once the live
 * link is gone, the proxy may have stopped, and the privacy state, uptime
 * and ages are unknown, not "still private". Pure: the components render this.
 */
import type { AuthProblem, LinkState } from '../state/store.js';
import { formatClockShort } from './format.js';

/** How long the link may be down before the dashboard stops showing figures as current (reconnects usually take < 1 s). */
export const LOST_AFTER_MS = 2000;

export type Reach =
  /** Connected: figures are current. */
  | 'live'
  /** Not connected for less than LOST_AFTER_MS (starting, or a reconnect in progress): figures stand. */
  | 'waiting'
  /** Not connected for LOST_AFTER_MS or more: the status is unknown. */
  | 'lost'
  /** No token, or the proxy refused it: nothing can be known. */
  | 'signed-out';

export function reach(link: LinkState, lostAt: number | null, now: number): Reach {
  if (link === 'unauthorized') return 'signed-out';
  if (link === 'live' || lostAt === null) return 'live';
  return now - lostAt >= LOST_AFTER_MS ? 'lost' : 'waiting';
}

/**
 * The moment the figures on screen describe: now while connected, the
 * moment the link was lost otherwise, so uptimes and ages stop counting
 * instead of ticking on for a proxy that may not be running.
 */
export function asOf(link: LinkState, lostAt: number | null, now: number): number {
  return link === 'live' || lostAt === null ? now : Math.min(now, lostAt);
}

/** How to get dotstub running and a fresh dashboard link, for every "unknown" message. */
const START_HINT = 'Start it with the dotstub command in a terminal, or choose Resume private DNS in the dotstub desktop app’s tray menu.';
const FRESH_LINK_HINT =
  'Get a fresh link: run dotstub in a terminal (it prints “dotstub: dashboard at http://127.0.0.1:…/#token=…”), or open the dashboard from the dotstub desktop app’s tray menu.';

export interface UnknownModel {
  /** Short label for the header's link indicator. */
  readonly label: string;
  /** The banner's sentence: never a privacy claim. */
  readonly title: string;
  /** What happened, in the user's terms. */
  readonly detail: string;
  /** What to do about it. */
  readonly action: string;
}

const AUTH_DETAIL: Readonly<Record<AuthProblem, string>> = {
  missing: 'This page was opened without its sign-in link, so it can’t ask dotstub anything.',
  malformed: 'The link that opened this page has a damaged token (cut short when it was copied?).',
  rejected: 'dotstub did not accept this page’s token: the link is from before dotstub made a new token.',
};

/** The banner and indicator text when the status is unknown; null while it is known (live or waiting). */
export function unknownModel(r: Reach, lostAt: number | null, authProblem: AuthProblem | null, hadStatus: boolean): UnknownModel | null {
  if (r === 'signed-out') {
    return {
      label: 'Not signed in',
      title: 'Not signed in — privacy status unknown',
      detail: AUTH_DETAIL[authProblem ?? 'missing'],
      action: FRESH_LINK_HINT,
    };
  }
  if (r !== 'lost') return null;
  const since = lostAt === null ? '' : ` since ${formatClockShort(lostAt)}`;
  return {
    label: 'Not connected',
    title: `Can’t reach dotstub — status unknown${since}`,
    detail: hadStatus
      ? 'The figures below are from before the connection was lost. dotstub may have stopped, and while it is not running this machine’s DNS may not be private.'
      : 'dotstub is not answering at this address. It may not be running.',
    action: `${START_HINT} This page reconnects by itself.`,
  };
}

/**
 * What a section shows instead of its figures when it has never had any to
 * show (not signed in, or dotstub unreachable since the page opened):
 * zeros and "no events yet" would be claims too. Null: render the section.
 */
export function placeholder(r: Reach, hadStatus: boolean): string | null {
  if (hadStatus) return null;
  if (r === 'signed-out') return 'Nothing to show until this page is signed in (see above).';
  if (r === 'lost') return 'Nothing to show until dotstub answers (see above).';
  return null;
}
