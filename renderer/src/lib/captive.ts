/**
 * The captive-portal card: what the user sees while a Wi-Fi wants them to
 * sign in, and which buttons they get. Pure: the component lays it out.
 */
import type { CaptiveView } from '../../../proxy/control/api-types.js';
import { formatClockShort } from './format.js';

export type CaptiveButton = 'open' | 'allow' | 'decline' | 'extend' | 'allow-again';

export interface CaptiveModel {
  readonly title: string;
  /** What dotstub does meanwhile, in one or two sentences. */
  readonly detail: string;
  /** "Unencrypted sign-in lookups until 14:05 (4 min left)", or null. */
  readonly window: string | null;
  readonly buttons: readonly CaptiveButton[];
  /** Strict mode's question: offer "remember for this network". */
  readonly askRemember: boolean;
  /** How it was found, for the curious. */
  readonly foundBy: string;
}

const FOUND_BY: Readonly<Record<string, string>> = {
  interception: 'web traffic on this network is redirected',
  check: 'the connectivity check was answered by a sign-in page',
  capport: 'the network says so (RFC 8908 captive-portal API)',
};

function minutesLeft(ms: number): string {
  const m = Math.max(0, Math.round(ms / 60_000));
  return m <= 1 ? 'under a minute left' : `${m} min left`;
}

export function captiveModel(c: CaptiveView, now: number): CaptiveModel {
  const title = `This Wi-Fi wants you to sign in at ${c.portalHost}`;
  const foundBy = `Found in ${(c.detectMs / 1000).toFixed(1)} s: ${FOUND_BY[c.detectedBy] ?? c.detectedBy}.`;
  switch (c.exception) {
    case 'active':
      return {
        title,
        detail: `Open the sign-in page and accept. Until then only the names that page needs are looked up, unencrypted, at this network’s resolver${c.networkResolver ? ` (${c.networkResolver})` : ''}; everything else waits. Private DNS resumes by itself afterwards.`,
        window: c.expiresAt === null ? null : `Sign-in lookups allowed until ${formatClockShort(c.expiresAt)} (${minutesLeft(c.expiresAt - now)})`,
        buttons: c.canExtend ? ['open', 'extend'] : ['open'],
        askRemember: false,
        foundBy,
      };
    case 'asking':
      return {
        title,
        detail: 'Strict mode: to show the sign-in page, dotstub has to look up its names unencrypted at this network’s resolver — only those names, only for 5 minutes. Everything else stays private or waits.',
        window: null,
        buttons: ['allow', 'decline'],
        askRemember: true,
        foundBy,
      };
    case 'declined':
      return {
        title,
        detail: 'You chose not to allow sign-in lookups on this network: nothing is looked up unencrypted, so the sign-in page can’t open and lookups fail until the network lets encrypted DNS through.',
        window: null,
        buttons: ['allow-again'],
        askRemember: false,
        foundBy,
      };
    case 'expired':
      return {
        title,
        detail: 'The 5-minute sign-in window ended before an encrypted connection worked. Allow it again to finish signing in; meanwhile lookups fail.',
        window: null,
        buttons: ['allow-again'],
        askRemember: false,
        foundBy,
      };
    case 'no-resolver':
      return {
        title,
        detail: 'dotstub doesn’t know this network’s own resolver, so it can’t look up the sign-in page. Set “Network DNS” in Settings (your router’s address, e.g. 192.168.1.1).',
        window: null,
        buttons: [],
        askRemember: false,
        foundBy,
      };
  }
}
