/**
 * Is there a captive portal between us and the Internet?
 * (docs/networks.md#detecting-a-portal.) Three probes in parallel, all done within 3 s:
 *
 *   1. interception: `GET http://192.0.2.1/` (TEST-NET-1), no DNS, no
 *      redirects. Nothing answers there on an honest network; any HTTP
 *      answer is a portal, and its Location is the sign-in page.
 *   2. the classic check: the check name resolved in cleartext by the
 *      network's own resolver (in strict mode only once the user allowed
 *      sign-in: before that, no name is resolved at all), then
 *      `GET /generate_204` (Android's rules:
 *      204 open; another 2xx/3xx a portal; an empty 200 a broken proxy; an
 *      answer in a private or TEST-NET range without a 204 a DNS-hijacking
 *      portal).
 *   3. RFC 8908's CAPPORT API when its URL is known: HTTPS only,
 *      `application/captive+json`, 4 KiB at most. It may declare a portal,
 *      never clear one on its own.
 *
 * Names are resolved only through the `lookup` given (the network's
 * resolver, in cleartext): this module never touches the system resolver,
 * which is dotstub itself.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { whyHostOffLimits } from '../off-limits.js';

/** Resolves a host name to IPv4/IPv6 addresses through the network's own resolver. */
export type NetworkLookup = (host: string) => Promise<string[]>;

export interface ProbeTargets {
  /** `http://192.0.2.1/`: a portal that intercepts all HTTP answers here. */
  readonly interceptionUrl: string;
  /** The classic check, whose host is resolved by the network's resolver. */
  readonly checkUrl: string;
  /** RFC 8908 API (RFC 8910: DHCP option 114 / RA); HTTPS only. */
  readonly capportUrl: string | null;
  /** Extra trust anchors for the CAPPORT API (tests); the system's roots otherwise. */
  readonly ca?: readonly string[];
}

export const DEFAULT_PROBES: ProbeTargets = {
  interceptionUrl: 'http://192.0.2.1/',
  checkUrl: 'http://connectivitycheck.gstatic.com/generate_204',
  capportUrl: null,
};

/** The names operating systems and browsers use to check connectivity: let through while signing in, so the OS notices the portal too. */
export const CHECK_NAMES: readonly string[] = [
  'connectivitycheck.gstatic.com',
  'www.gstatic.com',
  'clients3.google.com',
  'connectivitycheck.android.com',
  'captive.apple.com',
  'www.apple.com',
  'detectportal.firefox.com',
  'www.msftconnecttest.com',
  'ipv6.msftconnecttest.com',
  'dns.msftncsi.com',
  'www.msftncsi.com',
  'nmcheck.gnome.org',
  'network-test.debian.org',
  'connectivity-check.ubuntu.com',
  'fedoraproject.org',
];

type ProbeName = 'interception' | 'check' | 'capport';

type ProbeOutcome =
  | { readonly probe: ProbeName; readonly result: 'portal'; readonly portalUrl: string; readonly detail: string }
  | { readonly probe: ProbeName; readonly result: 'open'; readonly detail: string }
  /** Inconclusive: nothing answered, a broken proxy, no resolver, no API. */
  | { readonly probe: ProbeName; readonly result: 'none'; readonly detail: string }
  /** A portal answered, but the sign-in address it sent is no web page of the network: neither recorded nor opened. */
  | { readonly probe: ProbeName; readonly result: 'unusable'; readonly detail: string };

export type PortalVerdict =
  | {
      readonly kind: 'portal';
      /** Which probe saw it first (in the order CAPPORT, interception, check). */
      readonly by: ProbeName;
      readonly portalUrl: string;
      /** Hosts the sign-in needs: the redirect chain's, the API's, its portal and venue pages'. */
      readonly hosts: readonly string[];
      readonly outcomes: readonly ProbeOutcome[];
      readonly tookMs: number;
    }
  | { readonly kind: 'open'; readonly outcomes: readonly ProbeOutcome[]; readonly tookMs: number }
  | { readonly kind: 'unknown'; readonly outcomes: readonly ProbeOutcome[]; readonly tookMs: number };

const BODY_CAP = 4096;

interface HttpResult {
  readonly status: number;
  readonly location: string | undefined;
  readonly contentType: string | undefined;
  readonly body: Buffer;
  /** The address the request went to. */
  readonly address: string;
}

/** One GET, no redirects followed, body capped; names resolved only through `lookup`. */
function get(url: URL, timeoutMs: number, lookup: NetworkLookup | null, extra: { accept?: string; ca?: readonly string[] } = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
    if (!mod) {
      reject(new Error(`unsupported scheme ${url.protocol}`));
      return;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer in ${timeoutMs} ms`));
    }, timeoutMs);
    let address = host;
    const req = mod.request(
      url,
      {
        method: 'GET',
        agent: false,
        headers: { 'user-agent': 'dotstub-portal-check', ...(extra.accept ? { accept: extra.accept } : {}), connection: 'close' },
        ...(extra.ca ? { ca: [...extra.ca] } : {}),
        // The system resolver is dotstub itself: a name here is resolved by the network's resolver or not at all.
        lookup: (hostname: string, _opts: unknown, cb: (err: Error | null, address: string | { address: string; family: number }[], family?: number) => void) => {
          if (net.isIP(hostname) !== 0 || !lookup) {
            address = hostname;
            cb(net.isIP(hostname) ? null : new Error(`no way to resolve ${hostname}`), hostname, net.isIP(hostname) || 4);
            return;
          }
          lookup(hostname).then(
            (addrs) => {
              const first = addrs[0];
              if (first === undefined) cb(new Error(`${hostname} has no address at the network's resolver`), '', 4);
              else {
                address = first;
                if ((_opts as { all?: boolean } | undefined)?.all) cb(null, addrs.map((a) => ({ address: a, family: net.isIP(a) })));
                else cb(null, first, net.isIP(first));
              }
            },
            (err: unknown) => cb(err instanceof Error ? err : new Error(String(err)), '', 4),
          );
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > BODY_CAP) {
            res.destroy();
            return;
          }
          chunks.push(c);
        });
        const done = (): void => {
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            location: res.headers.location,
            contentType: res.headers['content-type'],
            body: Buffer.concat(chunks),
            address,
          });
        };
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      },
    );
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}

/** Private, shared, link-local, loopback or TEST-NET: where no public check server lives. */
export function isNonPublicAddress(addr: string): boolean {
  if (net.isIPv4(addr)) {
    const [a = 0, b = 0, c = 0] = addr.split('.').map(Number);
    return (
      a === 10 ||
      a === 127 ||
      (a === 172 && b >= 16 && b < 32) ||
      (a === 192 && b === 168) ||
      (a === 169 && b === 254) ||
      (a === 100 && b >= 64 && b < 128) ||
      (a === 192 && b === 0 && c === 2) ||
      (a === 198 && b === 51 && c === 100) ||
      (a === 203 && b === 0 && c === 113) ||
      a === 0
    );
  }
  const l = addr.toLowerCase();
  return l === '::1' || l.startsWith('fe80:') || l.startsWith('fc') || l.startsWith('fd') || l.startsWith('2001:db8:');
}

/** The words of an outcome whose sign-in address can't be used (privacy/captive/words.ts says it as the verdict). */
export const UNUSABLE_SIGN_IN = 'the network sent an unusable sign-in address';

/**
 * Why a sign-in address the network sent can't be the portal URL, or null
 * when it can: only http(s) pages of the network are. The app opens it in
 * a window that browses through the sign-in proxy, and the API hands it to
 * any client: a file:, data: or javascript: URL, or a page of this machine
 * (the dashboard, a local service), is a portal's way into this machine.
 */
export function whyUnusablePortalUrl(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `a ${u.protocol} address, not a web page`;
  return whyHostOffLimits(u.hostname);
}

/** A portal's outcome for the sign-in address it sent, or 'unusable' saying why (the address itself is not repeated). */
function portalOutcome(probe: ProbeName, portalUrl: string, detail: string): ProbeOutcome {
  const why = whyUnusablePortalUrl(portalUrl);
  if (why === null) return { probe, result: 'portal', portalUrl, detail };
  return { probe, result: 'unusable', detail: `${detail}, but ${UNUSABLE_SIGN_IN} (${why}): it is not opened` };
}

function resolveLocation(base: URL, location: string | undefined): string {
  if (!location) return base.toString();
  try {
    return new URL(location, base).toString();
  } catch {
    return base.toString();
  }
}

async function interceptionProbe(url: URL, timeoutMs: number): Promise<ProbeOutcome> {
  try {
    const r = await get(url, timeoutMs, null);
    return portalOutcome('interception', resolveLocation(url, r.location), `${url.host} answered HTTP ${r.status}: something on this network intercepts web traffic`);
  } catch (err) {
    return { probe: 'interception', result: 'none', detail: `no answer from ${url.host} (as on an honest network): ${(err as Error).message}` };
  }
}

async function checkProbe(url: URL, timeoutMs: number, lookup: NetworkLookup | null, noLookupWhy: string | undefined): Promise<ProbeOutcome> {
  if (!lookup) return { probe: 'check', result: 'none', detail: noLookupWhy ? `${url.hostname} not looked up (${noLookupWhy})` : "the network's own resolver isn't known" };
  let addresses: string[];
  const t0 = Date.now();
  try {
    addresses = await lookup(url.hostname);
  } catch (err) {
    return { probe: 'check', result: 'none', detail: `${url.hostname} didn't resolve at the network's resolver: ${(err as Error).message}` };
  }
  const first = addresses[0];
  const hijacked = first !== undefined && isNonPublicAddress(first);
  try {
    const r = await get(url, Math.max(200, timeoutMs - (Date.now() - t0)), async () => addresses);
    if (r.status === 204) return { probe: 'check', result: 'open', detail: `${url.host} answered 204: the Internet is open` };
    if (r.status === 200 && r.body.length <= 4) return { probe: 'check', result: 'none', detail: `${url.host} answered an empty 200: a broken proxy, not a portal` };
    if (r.status >= 200 && r.status < 400) {
      return portalOutcome('check', resolveLocation(url, r.location), `${url.host} answered HTTP ${r.status} instead of 204`);
    }
    if (hijacked) return { probe: 'check', result: 'portal', portalUrl: url.toString(), detail: `${url.hostname} resolved to ${first}, a local address, and answered HTTP ${r.status}` };
    return { probe: 'check', result: 'none', detail: `${url.host} answered HTTP ${r.status}` };
  } catch (err) {
    if (hijacked) return { probe: 'check', result: 'portal', portalUrl: url.toString(), detail: `${url.hostname} resolved to ${first}, a local address: the network's resolver hijacks names` };
    return { probe: 'check', result: 'none', detail: `${url.host} didn't answer: ${(err as Error).message}` };
  }
}

interface CapportInfo {
  readonly captive: boolean;
  readonly userPortalUrl: string | undefined;
  readonly venueInfoUrl: string | undefined;
}

/** RFC 8908 §5: the API's JSON, checked; null when it isn't a valid answer. */
export function parseCapport(body: Buffer, contentType: string | undefined): CapportInfo | null {
  if (!contentType?.toLowerCase().startsWith('application/captive+json')) return null;
  let j: unknown;
  try {
    j = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof j !== 'object' || j === null) return null;
  const o = j as Record<string, unknown>;
  if (typeof o.captive !== 'boolean') return null;
  const https = (v: unknown): string | undefined => {
    if (typeof v !== 'string') return undefined;
    try {
      return new URL(v).protocol === 'https:' ? v : undefined;
    } catch {
      return undefined;
    }
  };
  return { captive: o.captive, userPortalUrl: https(o['user-portal-url']), venueInfoUrl: https(o['venue-info-url']) };
}

async function capportProbe(
  url: URL | null,
  timeoutMs: number,
  lookup: NetworkLookup | null,
  ca: readonly string[] | undefined,
  hosts: Set<string>,
  noLookupWhy: string | undefined,
): Promise<ProbeOutcome> {
  if (!url) return { probe: 'capport', result: 'none', detail: 'this network announces no CAPPORT API' };
  if (url.protocol !== 'https:') return { probe: 'capport', result: 'none', detail: `ignored ${url.toString()}: the CAPPORT API must be HTTPS` };
  if (!lookup && noLookupWhy && net.isIP(url.hostname.replace(/^\[|\]$/g, '')) === 0) {
    return { probe: 'capport', result: 'none', detail: `the CAPPORT API at ${url.hostname} not asked (${noLookupWhy})` };
  }
  try {
    const r = await get(url, timeoutMs, lookup, { accept: 'application/captive+json', ...(ca ? { ca } : {}) });
    const info = r.status === 200 ? parseCapport(r.body, r.contentType) : null;
    if (!info) return { probe: 'capport', result: 'none', detail: `the CAPPORT API answered HTTP ${r.status} without valid captive+json` };
    for (const u of [info.userPortalUrl, info.venueInfoUrl]) if (u) hosts.add(new URL(u).hostname);
    if (info.captive && info.userPortalUrl) return portalOutcome('capport', info.userPortalUrl, `the network's CAPPORT API says sign-in is needed at ${new URL(info.userPortalUrl).host}`);
    if (info.captive) return { probe: 'capport', result: 'none', detail: 'the CAPPORT API says captive but names no sign-in page (RFC 8908 requires one)' };
    // RFC 8908: the API never clears a portal on its own; "open" here only counts with another probe agreeing.
    return { probe: 'capport', result: 'open', detail: 'the CAPPORT API says this network is open' };
  } catch (err) {
    return { probe: 'capport', result: 'none', detail: `the CAPPORT API didn't answer: ${(err as Error).message}` };
  }
}

/** The hosts of a portal's redirect chain (at most `hops` redirects), resolved through the network. */
async function redirectChain(start: string, lookup: NetworkLookup | null, timeoutMs: number, hops = 4): Promise<string[]> {
  const hosts: string[] = [];
  let url: URL;
  try {
    url = new URL(start);
  } catch {
    return hosts;
  }
  for (let i = 0; i <= hops; i++) {
    // A hop to an unusable address (a file:, this machine) ends the chain: its host is nothing to look up.
    if (whyUnusablePortalUrl(url.toString()) !== null) break;
    hosts.push(url.hostname);
    let r: HttpResult;
    try {
      r = await get(url, timeoutMs, lookup);
    } catch {
      break;
    }
    if (r.status < 300 || r.status >= 400 || !r.location) break;
    url = new URL(resolveLocation(url, r.location));
  }
  return hosts;
}

/**
 * Runs the three probes in parallel and decides within `budgetMs` (3 s).
 * A portal seen by any probe is a portal; "open" needs the classic check's 204.
 * The probes themselves resolve only the check name and the CAPPORT host in
 * cleartext; `followRedirects` also walks the sign-in page's redirect chain
 * (for opportunistic mode, or once strict mode's user allowed the sign-in).
 */
/**
 * `lookup` null: no name is resolved at all (strict mode before consent, or
 * no network resolver known); `noLookupWhy` says why in the outcomes. Only
 * probes that need no name run then: the interception probe, and a CAPPORT
 * API whose URL holds an address.
 */
export async function detectPortal(
  targets: ProbeTargets,
  lookup: NetworkLookup | null,
  options: { readonly followRedirects: boolean; readonly budgetMs?: number; readonly noLookupWhy?: string },
): Promise<PortalVerdict> {
  const budgetMs = options.budgetMs ?? 3000;
  const t0 = Date.now();
  const hosts = new Set<string>();
  const interception = new URL(targets.interceptionUrl);
  const check = new URL(targets.checkUrl);
  hosts.add(check.hostname);
  let capport: URL | null = null;
  if (targets.capportUrl) {
    capport = new URL(targets.capportUrl);
    hosts.add(capport.hostname);
  }
  const outcomes = await Promise.all([
    capportProbe(capport, budgetMs - 500, lookup, targets.ca, hosts, options.noLookupWhy),
    interceptionProbe(interception, Math.min(1500, budgetMs)),
    checkProbe(check, budgetMs - 500, lookup, options.noLookupWhy),
  ]);
  const portal = outcomes.find((o): o is Extract<ProbeOutcome, { result: 'portal' }> => o.result === 'portal');
  if (portal) {
    // The sign-in page's own redirects (hotel page → login host), within the budget left, at least a second.
    // Following them resolves their hosts in cleartext: only once the sign-in is allowed.
    if (options.followRedirects) {
      const left = Math.max(1000, budgetMs - (Date.now() - t0));
      for (const h of await redirectChain(portal.portalUrl, lookup, left)) hosts.add(h);
    }
    for (const o of outcomes) if (o.result === 'portal') hosts.add(new URL(o.portalUrl).hostname);
    const names = [...hosts].filter((h) => net.isIP(h.replace(/^\[|\]$/g, '')) === 0).map((h) => h.toLowerCase());
    return { kind: 'portal', by: portal.probe, portalUrl: portal.portalUrl, hosts: names, outcomes, tookMs: Date.now() - t0 };
  }
  if (outcomes.some((o) => o.probe === 'check' && o.result === 'open')) return { kind: 'open', outcomes, tookMs: Date.now() - t0 };
  return { kind: 'unknown', outcomes, tookMs: Date.now() - t0 };
}
