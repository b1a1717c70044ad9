/**
 * URL checks for the Electron window, pure so they are tested here
 * (Electron's security checklist: limit navigation, limit new windows,
 * don't pass untrusted URLs to shell.openExternal, check IPC senders).
 */

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
