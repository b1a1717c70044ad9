/**
 * What the captive-portal handling says, in one place: the banner sentence
 * for each state of the sign-in exception, and the timeline's sentences.
 * Pure functions of plain values (tested without a portal).
 */
import { UNUSABLE_SIGN_IN, type PortalVerdict } from '../../network/captive/probe.js';

export type ExceptionState =
  /** Cleartext for the sign-in names is on until `expiresAt`. */
  | 'active'
  /** Strict mode: waiting for the user's "Allow sign-in" / "Not now". */
  | 'asking'
  /** The user said "Not now" (or remembered "never" for this network). */
  | 'declined'
  /** The time ran out; the user may allow it again. */
  | 'expired'
  /** No network resolver is known: the sign-in names can't be looked up here. */
  | 'no-resolver';

/** Why a strict-mode probe resolves nothing (the probes' outcome says it). */
export const STRICT_NO_LOOKUP = 'strict mode: no name is looked up unencrypted before you allow sign-in';

export function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

function minutes(ms: number): string {
  const m = Math.round(ms / 60_000);
  return m === 1 ? '1 minute' : `${m} minutes`;
}

/** The banner and privacy-state sentence while captive; `resolver` is the network resolver's addresses ('?' unknown). */
export function captiveSentence(portalUrl: string, exception: ExceptionState, resolver: string | null): string {
  const head = `This Wi-Fi wants you to sign in at ${hostOf(portalUrl)}.`;
  switch (exception) {
    case 'active':
      return `${head} Private DNS resumes by itself afterwards; until then only the sign-in page's names are looked up, unencrypted, at the network's resolver (${resolver ?? '?'}).`;
    case 'asking':
      return `${head} Strict mode: allow dotstub to look up the sign-in page's names unencrypted at this network's resolver? Everything else stays private or blocked.`;
    case 'declined':
      return `${head} You chose not to allow sign-in lookups on this network: queries get SERVFAIL until it lets encrypted DNS through.`;
    case 'expired':
      return `${head} The sign-in window ended; allow it again to finish signing in. Meanwhile queries get SERVFAIL.`;
    case 'no-resolver':
      return `${head} dotstub doesn't know this network's own resolver, so it can't look up the sign-in page: set it in Settings (network DNS).`;
  }
}

export function detectedSentence(verdict: Extract<PortalVerdict, { kind: 'portal' }>): string {
  const byWords = { capport: "the network's CAPPORT API", interception: 'web traffic being intercepted', check: 'the connectivity check' }[verdict.by];
  return `Sign-in page found at ${hostOf(verdict.portalUrl)} (by ${byWords}, in ${(verdict.tookMs / 1000).toFixed(1)} s)`;
}

export function checkedSentence(verdict: Exclude<PortalVerdict, { kind: 'portal' }>): string {
  const why = verdict.outcomes.map((o) => o.detail).join('; ');
  if (verdict.kind === 'open') return `No sign-in page on this network (${why})`;
  // A portal answered with a file:, data: or this machine's address: said as such, never as "no portal".
  if (verdict.outcomes.some((o) => o.result === 'unusable')) return `A sign-in is wanted here, but ${UNUSABLE_SIGN_IN}; dotstub neither records nor opens it (${why})`;
  return `No sign-in page found (${why})`;
}

export function allowedSentence(ms: number, remembered: boolean): string {
  return `Sign-in names may be looked up unencrypted for ${minutes(ms)}${remembered ? ' (allowed before on this network)' : ''}`;
}

export function extendedSentence(expiresAt: number): string {
  return `Sign-in window extended to ${new Date(expiresAt).toTimeString().slice(0, 5)}`;
}

export function letThroughSentence(name: string): string {
  return `${name} looked up at the network's resolver for the sign-in`;
}

export const WORDS = {
  declinedBefore: 'Sign-in lookups not allowed on this network (you chose so before)',
  declined: 'Sign-in lookups not allowed: everything stays encrypted or blocked',
  asking: 'Strict mode: asking before looking up the sign-in page unencrypted',
  expired: 'The sign-in window ended: no more unencrypted lookups',
  signedIn: 'The network lets traffic through now: signed in',
  leftPrivate: 'Back to private DNS: an authenticated encrypted connection works again',
  leftNetwork: 'Left the network with the sign-in page',
  leftPortalGone: 'The sign-in page is gone, but encrypted DNS still fails here',
} as const;
