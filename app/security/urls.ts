/**
 * URL checks for the Electron window, pure so they are tested here
 * (Electron's security checklist: limit navigation, limit new windows,
 * don't pass untrusted URLs to shell.openExternal, check IPC senders).
 */
import { whyHostOffLimits } from '../../proxy/network/off-limits.js';

/** The origin of `url`, or undefined if it isn't a URL. */
export function originOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.origin === 'null' ? undefined : u.origin;
  } catch {
    return undefined;
  }
}

/** In-window navigation: only the dashboard, i.e. the running proxy's control origin. */
export function isAllowedNavigation(url: string, controlOrigin: string | undefined): boolean {
  return controlOrigin !== undefined && originOf(url) === controlOrigin;
}

/**
 * Why the "Sign in to network" window may not show `url`, in words, or null
 * when it may: the network's web pages (http or https, any host: a portal
 * sends the user through its own hosts, a payment page, a social login),
 * never this machine's (the dashboard, a local service: Chromium reaches
 * loopback without the sign-in proxy), a link-local neighbour or the
 * metadata address (the same list the sign-in proxy refuses:
 * proxy/network/off-limits.ts), nor a file or another scheme a portal's
 * page could have the app load. The URL itself is never repeated: it may
 * hold a token (the dashboard's link does).
 */
export function whyNotSignInPage(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'the address is not a URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `a ${u.protocol} address is not a web page of the network`;
  return whyHostOffLimits(u.hostname);
}

/**
 * Sites the dashboard may open in the user's browser: the project and the
 * references it cites, and the preset resolvers' own pages. https only, exact
 * host names (no subdomain wildcards).
 */
const EXTERNAL_HOSTS: ReadonlySet<string> = new Set([
  'github.com',
  'www.rfc-editor.org',
  'datatracker.ietf.org',
  'www.quad9.net',
  'quad9.net',
  'developers.cloudflare.com',
  'one.one.one.one',
  'developers.google.com',
  'adguard-dns.io',
]);

export function isAllowedExternal(url: string, hosts: ReadonlySet<string> = EXTERNAL_HOSTS): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return u.protocol === 'https:' && u.username === '' && u.password === '' && u.port === '' && hosts.has(u.hostname);
}

/** An IPC message is trusted only from a frame showing the dashboard (the current control origin). */
export function isTrustedSender(senderUrl: string | undefined, controlOrigin: string | undefined): boolean {
  return senderUrl !== undefined && controlOrigin !== undefined && originOf(senderUrl) === controlOrigin;
}
