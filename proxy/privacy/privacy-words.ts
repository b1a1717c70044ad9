/**
 * What each privacy state means, in the words users read: the dashboard's
 * banner, the status API's `leaves`, the tray's status line and tooltip.
 * One module, so every surface says the same thing. Pure data, no Node
 * imports: the renderer and the Electron app import it too.
 */

/**
 * The states themselves (the reducer that moves between them is
 * privacy-state.ts, which takes its sentences from here: one way, words first).
 */
export type PrivacyState = 'private' | 'private-unverified' | 'captive' | 'degraded' | 'blocked' | 'off';

export interface PrivacyWords {
  /** Short label for the state, e.g. "Private". */
  readonly label: string;
  /** One sentence: is my DNS private? */
  readonly title: string;
  /** What leaves this machine, as a sentence. */
  readonly leaves: string;
}

export const PRIVACY_WORDS: Readonly<Record<PrivacyState, PrivacyWords>> = {
  private: {
    label: 'Private',
    title: 'Your DNS is private',
    leaves: 'Only encrypted DNS to your resolver.',
  },
  'private-unverified': {
    label: 'Encrypted, unverified',
    title: "Your DNS is encrypted, but the resolver's identity isn't verified",
    leaves: 'Only encrypted DNS, to a server whose certificate did not verify.',
  },
  captive: {
    label: 'Wi-Fi sign-in',
    title: 'This Wi-Fi wants you to sign in',
    leaves: "Only the sign-in page's names, unencrypted, to this network's own resolver, and only while you sign in (if allowed); every other lookup stays private or waits.",
  },
  degraded: {
    label: 'Not private',
    title: 'Your DNS is not private: encrypted DNS is blocked on this network',
    leaves: "Cleartext DNS to this network's resolver: anyone on the path can read the names you look up.",
  },
  // Named for what the user gets: "blocked" is the good number in Pi-hole and AdGuard (ads blocked); here DNS is failing (issue 24).
  blocked: {
    label: 'Stopped',
    title: 'Stopped — failing safe, no DNS',
    leaves: 'Nothing: lookups fail at once, rather than leave unencrypted, until encrypted DNS works again.',
  },
  off: {
    label: 'Off',
    title: 'dotstub is not handling this machine’s DNS',
    leaves: 'Whatever your operating system sends, usually cleartext DNS.',
  },
};

/**
 * What happens while the resolver can't be reached, as it really happens
 * (upstream/pool/backoff.ts): a lookup may start an attempt at most once a
 * second, and with no lookups the proxy tries by itself, backing off to at
 * most 10 s. No countdown: it would be wrong while lookups come (issue 24).
 */
/** While there is no route at all: nothing is tried on a timer, the network's return is (upstream/pool/offline.ts). */
export const OFFLINE_RETRY_SENTENCE = 'queries get SERVFAIL until the network comes back; dotstub connects again the moment a route appears';
export const RETRY_SENTENCE = 'queries get SERVFAIL until it answers: each lookup tries again (at most once a second), and dotstub tries by itself at least every 10 s';

/** The tray's one-line status: "Private DNS: on — Quad9, verified". */
export function trayStatusLine(state: PrivacyState, resolver: string | null): string {
  switch (state) {
    case 'private':
      return `Private DNS: on — ${resolver ?? 'resolver'}, verified`;
    case 'private-unverified':
      return `Private DNS: on — ${resolver ?? 'resolver'}, not verified`;
    case 'captive':
      return 'Private DNS: waiting for a Wi-Fi sign-in';
    case 'degraded':
      return 'Private DNS: off — TLS blocked, using plain DNS';
    case 'blocked':
      return 'Private DNS: stopped — failing safe until encrypted DNS works';
    case 'off':
      return 'Private DNS: off';
  }
}

/**
 * Paused: the system-DNS takeover given back for a while by the user's
 * choice (the state is `off`, with a pause's end), coming back by itself.
 * The dashboard's banner says the same (renderer/src/lib/banner.ts).
 */
export const PAUSED_WORDS: PrivacyWords = {
  label: 'Paused',
  title: 'Private DNS is paused: this machine uses its usual DNS for now',
  leaves: 'Cleartext DNS to your usual resolver, as before dotstub, until the pause ends.',
};
