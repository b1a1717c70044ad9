/**
 * What the dashboard may claim, given its link to the proxy (issue 14,
 * items 1 and 8). Everything on screen came from the proxy; once the live
 * link is gone, the proxy may have stopped, and the privacy state, uptime
 * and ages are unknown, not "still private". Pure: the components render this.
 */
import type { AuthProblem, LinkState } from '../state/store.js';
import type { StatusView, TimelineEvent } from '../../../proxy/control/api-types.js';
import { bannerState, type BannerState } from './banner.js';
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

/**
 * How to get dotstub running and a fresh dashboard link, for every
 * "unknown" message: the service's way first (the packages install
 * dotstub.service), then a dotstub started by hand or by the desktop app.
 * Commands are between backticks: the banner shows them as code.
 */
const START_HINT =
  'As a service: `systemctl status dotstub` says what happened, `sudo systemctl restart dotstub` starts it again. Started by hand: start it with the dotstub command in a terminal; from the desktop app: choose Resume private DNS in its tray menu.';
const FRESH_LINK_HINT =
  'Get a fresh link: `dotstub ctl dashboard` prints it for a service’s dotstub; for a dotstub run in a terminal, open its address with #token= and the contents of the token file its start line names (the link itself is never printed: output ends up in logs); or open the dashboard from the dotstub desktop app’s tray menu.';

/** What the page last knew of the machine's DNS, for "Not connected": the shown state, since when, and whether this dotstub manages system DNS. */
export interface LastKnown {
  /** The banner's state (off while paused reads "paused"). */
  readonly state: BannerState;
  /** When that state began, ms since the epoch. */
  readonly since: number;
  /** This dotstub manages the machine's DNS, and may change it. */
  readonly managed: boolean;
  /** Off or paused after being on (a state change to it was seen), not off since the start. */
  readonly givenBack: boolean;
}

/** The LastKnown of a status: off "given back" when a change into off since it began was seen (not off since the start). */
export function lastKnown(
  status: Pick<StatusView, 'state' | 'since'>,
  pausedUntil: number | null,
  managed: boolean,
  events: readonly TimelineEvent[],
): LastKnown {
  const state = bannerState(status.state, pausedUntil);
  const givenBack =
    state === 'paused' || events.some((e) => e.kind === 'state' && e.event.state === 'off' && e.event.previous !== 'off' && e.event.at >= status.since - 1000);
  return { state, since: status.since, managed, givenBack };
}

const hhmm = (t: number): string => formatClockShort(t).slice(0, 5);

/**
 * What the machine's DNS was when the page last knew (issue 29): the old DNS
 * already given back (off, paused), or private DNS on, with what dotstub
 * does when it goes (its shutdown and, after a crash or a hang, its
 * watchdog give the old DNS back), never a bare "may not be private".
 */
function lastKnownDetail(last: LastKnown | null, lostAt: number | null): string {
  const before = 'The figures below are from before the connection was lost.';
  if (last === null || !last.managed) return `${before} dotstub may have stopped: lookups sent to it get no answer until it is back.`;
  if (last.state === 'off' || last.state === 'paused') {
    const how = last.givenBack ? `the old DNS was given back at ${hhmm(last.since)}` : `this machine has asked its usual DNS since ${hhmm(last.since)}`;
    return `${before} Private DNS was ${last.state}: ${how}. Lookups go to the usual DNS, usually in cleartext, whether dotstub runs or not.`;
  }
  const at = lostAt === null ? '' : ` at ${hhmm(lostAt)}`;
  return `${before} Private DNS was on${at} when the connection was lost. If dotstub stopped, it gives the old DNS back as it goes, and its watchdog does within seconds if it crashed or hung: this machine then asks its usual DNS, usually in cleartext, until dotstub is back.`;
}

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

/**
 * The banner and indicator text when the status is unknown; null while it is
 * known (live or waiting). `last`: what the page last knew of the machine's
 * DNS (null: nothing, or not yet read).
 */
export function unknownModel(r: Reach, lostAt: number | null, authProblem: AuthProblem | null, hadStatus: boolean, last: LastKnown | null = null): UnknownModel | null {
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
    detail: hadStatus ? lastKnownDetail(last, lostAt) : 'dotstub is not answering at this address. It may not be running.',
    action: `${START_HINT} This page reconnects by itself; if it then asks to sign in, \`dotstub ctl dashboard\` prints a fresh link.`,
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

/** A sentence with commands between backticks, as text and code parts (the banner shows the code parts as code). */
export function commandParts(text: string): { readonly text: string; readonly code: boolean }[] {
  return text.split('`').map((part, i) => ({ text: part, code: i % 2 === 1 })).filter((p) => p.text !== '');
}
