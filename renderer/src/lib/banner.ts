/**
 * Privacy state → what the banner says. Pure: the component only renders
 * this. Every state has a distinct icon and title, so the banner never
 * relies on colour alone.
 */
import type { PrivacyState, ResolverView, StatusView } from '../../../proxy/control/api-types.js';
import { PRIVACY_WORDS, type PrivacyWords } from '../../../proxy/privacy/privacy-words.js';

export type Tone = 'good' | 'caution' | 'warning' | 'danger' | 'neutral';
export type BannerIcon = 'shield-check' | 'shield-question' | 'wifi-sign-in' | 'unlocked' | 'blocked' | 'power' | 'pause';

/** The privacy states, and "paused": Off for a while by the user's choice, coming back by itself (issue 24, item 1). */
export type BannerState = PrivacyState | 'paused';

export interface BannerModel {
  readonly state: BannerState;
  readonly tone: Tone;
  readonly icon: BannerIcon;
  /** Short label for the state, e.g. "Private". */
  readonly label: string;
  /** One sentence: is my DNS private? */
  readonly title: string;
  /** Why the proxy is in this state (from the proxy; may be empty). */
  readonly reason: string;
  /** What leaves this machine, in plain words. */
  readonly leaves: string;
}

/** What the banner adds to the shared words (privacy/privacy-words.ts): how each state looks. */
interface StateLook {
  readonly tone: Tone;
  readonly icon: BannerIcon;
}

const LOOKS: Readonly<Record<PrivacyState, StateLook>> = {
  private: { tone: 'good', icon: 'shield-check' },
  'private-unverified': { tone: 'caution', icon: 'shield-question' },
  captive: { tone: 'warning', icon: 'wifi-sign-in' },
  degraded: { tone: 'danger', icon: 'unlocked' },
  blocked: { tone: 'danger', icon: 'blocked' },
  off: { tone: 'neutral', icon: 'power' },
};

type StateText = StateLook & PrivacyWords;

const STATES = Object.fromEntries(
  (Object.keys(LOOKS) as PrivacyState[]).map((state) => [state, { ...LOOKS[state], ...PRIVACY_WORDS[state] }]),
) as Readonly<Record<PrivacyState, StateText>>;

export const PRIVACY_STATES = Object.keys(STATES) as PrivacyState[];

/** "Quad9 (dns.quad9.net, verified)" */
export function describeResolver(resolver: Pick<ResolverView, 'label' | 'authName' | 'addresses' | 'port'>, verified: boolean | null): string {
  const name = resolver.authName ?? `${resolver.addresses[0] ?? '?'}:${resolver.port}`;
  const v = verified === null ? '' : verified ? 'verified' : 'not verified';
  // A label that already names the server ("dns.test (127.0.0.1)") needn't repeat it.
  if (resolver.label.toLowerCase().includes(name.toLowerCase())) return v ? `${resolver.label}, ${v}` : resolver.label;
  return `${resolver.label} (${name}${v ? `, ${v}` : ''})`;
}

export function stateText(state: PrivacyState): StateText {
  return STATES[state];
}

const PAUSED: StateText = {
  tone: 'caution',
  icon: 'pause',
  label: 'Paused',
  title: 'Private DNS is paused: this machine uses its usual DNS for now',
  leaves: 'Cleartext DNS to your usual resolver, as before dotstub, until the pause ends.',
};

/** The banner's state: Off while the system-DNS takeover is paused (pausedUntil set) reads "paused". */
export function bannerState(state: PrivacyState, pausedUntil: number | null | undefined): BannerState {
  return state === 'off' && pausedUntil != null ? 'paused' : state;
}

export function bannerModel(status: Pick<StatusView, 'state' | 'reason' | 'leaves' | 'resolver'>, pausedUntil: number | null = null): BannerModel {
  if (bannerState(status.state, pausedUntil) === 'paused') {
    // The countdown and "Resume now" say when and how it ends; the proxy's reason would repeat them.
    return { state: 'paused', tone: PAUSED.tone, icon: PAUSED.icon, label: PAUSED.label, title: PAUSED.title, reason: '', leaves: PAUSED.leaves };
  }
  const t = STATES[status.state] ?? STATES.off;
  let leaves: string;
  if (status.state === 'private') leaves = `Only encrypted DNS to ${describeResolver(status.resolver, true)}.`;
  else if (status.state === 'private-unverified') leaves = `Only encrypted DNS to ${describeResolver(status.resolver, false)}.`;
  else leaves = sentence(status.leaves) || t.leaves;
  return { state: status.state, tone: t.tone, icon: t.icon, label: t.label, title: t.title, reason: sentence(status.reason), leaves };
}

/** The proxy's phrases ("nothing: queries get SERVFAIL at once") as sentences. */
export function sentence(text: string): string {
  const t = text.trim();
  if (!t) return '';
  const s = t[0]!.toUpperCase() + t.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/**
 * The banner's "Carried by" while this machine's lookups don't go through
 * dotstub (off, paused): the usual DNS, not the proxy's own encrypted
 * transport, which only carries lookups sent to it directly (issue 29).
 * Null in the other states: the transport line stands.
 */
export function carriedByWhenOff(state: BannerState): string | null {
  if (state !== 'off' && state !== 'paused') return null;
  return `Your usual DNS, not dotstub: private DNS is ${state}.`;
}
