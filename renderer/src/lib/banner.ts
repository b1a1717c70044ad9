/**
 * Privacy state → what the banner says. Pure: the component only renders
 * this. Every state has a distinct icon and title, so the banner never
 * relies on colour alone.
 */
import type { PrivacyState, ResolverView, StatusView } from '../../../proxy/control/api-types.js';

export type Tone = 'good' | 'caution' | 'warning' | 'danger' | 'neutral';
export type BannerIcon = 'shield-check' | 'shield-question' | 'wifi-sign-in' | 'unlocked' | 'blocked' | 'power';

export interface BannerModel {
  readonly state: PrivacyState;
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

interface StateText {
  readonly tone: Tone;
  readonly icon: BannerIcon;
  readonly label: string;
  readonly title: string;
  readonly leaves: string;
}

const STATES: Readonly<Record<PrivacyState, StateText>> = {
  private: {
    tone: 'good',
    icon: 'shield-check',
    label: 'Private',
    title: 'Your DNS is private',
    leaves: 'Only encrypted DNS to your resolver.',
  },
  'private-unverified': {
    tone: 'caution',
    icon: 'shield-question',
    label: 'Encrypted, unverified',
    title: "Your DNS is encrypted, but the resolver's identity isn't verified",
    leaves: 'Only encrypted DNS, to a server whose certificate did not verify.',
  },
  captive: {
    tone: 'warning',
    icon: 'wifi-sign-in',
    label: 'Hotspot sign-in',
    title: 'A hotspot sign-in page is in the way',
    leaves: 'Cleartext DNS only for what your policy allows while you sign in.',
  },
  degraded: {
    tone: 'danger',
    icon: 'unlocked',
    label: 'Not private',
    title: 'Your DNS is not private: encrypted DNS is blocked on this network',
    leaves: "Cleartext DNS to this network's resolver: anyone on the path can read the names you look up.",
  },
  blocked: {
    tone: 'danger',
    icon: 'blocked',
    label: 'Blocked',
    title: 'DNS is stopped to keep it private',
    leaves: 'Nothing: lookups fail at once until encrypted DNS works again.',
  },
  off: {
    tone: 'neutral',
    icon: 'power',
    label: 'Off',
    title: 'dotstub is not handling this machine’s DNS',
    leaves: 'Whatever your operating system sends, usually cleartext DNS.',
  },
};

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

export function bannerModel(status: Pick<StatusView, 'state' | 'reason' | 'leaves' | 'resolver'>): BannerModel {
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
