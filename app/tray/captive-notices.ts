/**
 * Desktop notifications for a Wi-Fi sign-in: one on entering `captive`
 * (where to sign in; in strict mode, that an answer is needed) and one on
 * leaving it for private DNS. Rate-limited: a portal that flaps, or a
 * laptop walking past hotspots, gets at most one notice a minute. Pure.
 */
import type { TrayState } from './types.js';

export interface Notice {
  readonly title: string;
  readonly body: string;
}

export const NOTICE_INTERVAL_MS = 60_000;

/**
 * The Wi-Fi let us out: the proxy went from `captive` to private DNS. The
 * sign-in is over then (its proxy is gone with the exception), so the app
 * closes the sign-in window. Not rate-limited: it is a fact, not a notice.
 */
export function networkOpened(prev: TrayState, next: TrayState): boolean {
  const was = prev.proxyRunning && prev.privacy === 'captive';
  const is = next.proxyRunning && next.privacy === 'captive';
  return was && !is && next.proxyRunning && (next.privacy === 'private' || next.privacy === 'private-unverified');
}

export function captiveNotice(prev: TrayState, next: TrayState, lastNoticeAt: number, now: number): Notice | null {
  if (now - lastNoticeAt < NOTICE_INTERVAL_MS) return null;
  const was = prev.proxyRunning && prev.privacy === 'captive';
  const is = next.proxyRunning && next.privacy === 'captive';
  if (!was && is && next.captive) {
    const asking = next.captive.exception === 'asking';
    return {
      title: 'This Wi-Fi wants you to sign in',
      body: asking
        ? `Sign-in page: ${next.captive.portalHost}. Strict mode: choose “Allow sign-in” in the tray or the dashboard to open it.`
        : `Sign-in page: ${next.captive.portalHost}. Choose “Sign in to network” in the tray. Private DNS resumes by itself afterwards.`,
    };
  }
  if (networkOpened(prev, next)) {
    return { title: 'Private DNS is back', body: 'Signed in to the Wi-Fi: every lookup is encrypted again.' };
  }
  return null;
}
