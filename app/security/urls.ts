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

/** Loopback and "this host" addresses, as the URL parser writes them (it turns 2130706433, 0x7f.1 and the like into 127.0.0.1). */
function isThisMachine(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost') || h === '0.0.0.0' || /^127\.\d+\.\d+\.\d+$/.test(h)) return true;
  // IPv6: ::1, ::, and IPv4-mapped loopback or "this host" (::ffff:7f00:1, ::ffff:0:0).
  return h === '::1' || h === '::' || /^::ffff:(7f[0-9a-f]{2}:[0-9a-f]{1,4}|0:0)$/.test(h);
}

/**
 * What the "Sign in to network" window may show: the network's web pages
 * (http or https, any host: a portal sends the user through its own hosts,
 * a payment page, a social login), never this machine's (the dashboard, a
 * local service: Chromium reaches loopback without the sign-in proxy), nor
 * a file or another scheme a portal's page could have the app load.
 */
export function isSignInPage(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return (u.protocol === 'http:' || u.protocol === 'https:') && !isThisMachine(u.hostname);
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
